// `ember-cli tokenize` and `ember-cli detokenize` seen from outside: on the gpt-2 vocabulary the
// ids must equal llama.cpp's test vectors (../shared/testdata/tokenizer/ggml-vocab-gpt-2.gguf.out)
// line for line, detokenizing them must give back the .inp text byte for byte, and bad input must
// end in a clear error with a non-zero exit status. The
// special-token flags are checked on the qwen2 vocabulary, which has ChatML's control tokens.
#include <QTemporaryFile>
#include <QtTest>

#include "bpe_test_cases.h"
#include "common/test_paths.h"

using namespace ember;
using namespace ember::test;

namespace {

const QString kCli = ember::test::builtProgram("ember-cli");

struct CliResult {
  int status;
  QByteArray out, err;
};

CliResult runCli(const QStringList& args) {
  CliResult r{};
  r.status = runProcess(kCli, args, &r.out, &r.err);
  return r;
}

}  // namespace

class TestBpeCli : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase() { QVERIFY2(QFileInfo::exists(kCli), qPrintable(kCli + " was not built")); }

  void roundTripsTheVectors_data() {
    QTest::addColumn<int>("index");
    for (int i = 0; i < 46; ++i) QTest::addRow("gpt-2/%02d", i) << i;
  }
  void roundTripsTheVectors() {
    QFETCH(int, index);
    EMBER_REQUIRE_TESTDATA(vocab, vocabFile(QStringLiteral("gpt-2")));
    const auto cases = readVocabCases(vocab);
    QVERIFY(static_cast<size_t>(index) < cases.size());
    const VocabCase& c = cases[static_cast<size_t>(index)];
    QTemporaryFile text;
    QVERIFY(text.open());
    text.write(QByteArray::fromStdString(c.text));
    text.flush();

    const CliResult tokenized =
        runCli({"tokenize", "--vocab", vocab, "--text-file", text.fileName()});
    QCOMPARE(tokenized.status, 0);
    QCOMPARE(QString::fromUtf8(tokenized.out), idsToString(c.ids) + QLatin1Char('\n'));

    const CliResult detokenized = runCli({"detokenize", "--vocab", vocab, "--ids", idsToString(c.ids)});
    QCOMPARE(detokenized.status, 0);
    QCOMPARE(detokenized.out, QByteArray::fromStdString(c.text));
  }

  // <|im_start|> is 151644 and <|endoftext|> (BOS of this file) 151643, read with gguf-py.
  void specialAndBosFlags() {
    EMBER_REQUIRE_TESTDATA(vocab, vocabFile(QStringLiteral("qwen2")));
    CliResult r = runCli({"tokenize", "--vocab", vocab, "--text", "<|im_start|>", "--special"});
    QCOMPARE(r.out, QByteArray("151644\n"));
    r = runCli({"tokenize", "--vocab", vocab, "--text", "<|im_start|>"});
    QVERIFY(r.out.split(' ').size() > 1 && !r.out.contains("151644"));
    r = runCli({"tokenize", "--vocab", vocab, "--text", "Hello world", "--add-bos"});
    QCOMPARE(r.out, QByteArray("151643 9707 1879\n"));  // 9707 1879: the .out line of "Hello world"
    r = runCli({"detokenize", "--vocab", vocab, "--ids", "151644 9707", "--special"});
    QCOMPARE(r.out, QByteArray("<|im_start|>Hello"));
    r = runCli({"detokenize", "--vocab", vocab, "--ids", "151644 9707"});
    QCOMPARE(r.out, QByteArray("Hello"));
  }

  void badInputFailsClearly_data() {
    QTest::addColumn<QStringList>("args");
    QTest::addColumn<QString>("message");
    QTest::newRow("id not a number") << QStringList{"detokenize", "--ids", "9707 abc"}
                                     << "'abc' is not a token id";
    QTest::newRow("id past the vocabulary") << QStringList{"detokenize", "--ids", "151936"}
                                            << "token id 151936 is outside the vocabulary of 151936 tokens";
    QTest::newRow("negative id") << QStringList{"detokenize", "--ids", "-1"}
                                 << "token id -1 is outside the vocabulary";
    QTest::newRow("huge id") << QStringList{"detokenize", "--ids", "99999999999999999999999"}
                             << "is not a token id";
    QTest::newRow("no text") << QStringList{"tokenize"} << "exactly one of --text S and --text-file F";
    QTest::newRow("missing text file") << QStringList{"tokenize", "--text-file", "/nonexistent/x.txt"}
                                       << "cannot read file '/nonexistent/x.txt'";
  }
  void badInputFailsClearly() {
    QFETCH(QStringList, args);
    QFETCH(QString, message);
    EMBER_REQUIRE_TESTDATA(vocab, vocabFile(QStringLiteral("qwen2")));
    const CliResult r = runCli(args + QStringList{"--vocab", vocab});
    QCOMPARE(r.status, 1);
    QVERIFY(r.out.isEmpty());
    QVERIFY2(QString::fromUtf8(r.err).contains(message), r.err.constData());
  }

  void missingVocabularyFailsClearly() {
    const CliResult r = runCli({"tokenize", "--vocab", "/nonexistent/v.gguf", "--text", "x"});
    QCOMPARE(r.status, 1);
    QVERIFY2(r.err.contains("/nonexistent/v.gguf"), r.err.constData());
  }
};

QTEST_GUILESS_MAIN(TestBpeCli)
#include "test_bpe_cli.moc"
