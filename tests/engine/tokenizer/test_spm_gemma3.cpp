// The SentencePiece tokenizer on Gemma 3's own vocabulary (262144 pieces: byte fallback, no
// dummy prefix, single-digit pieces, user-defined runs of spaces, tabs and newlines, HTML tags).
// Reference: data/gemma3_reference.json, token ids from Hugging Face transformers' tokenizer
// converted from the same GGUF file, written by tests/tools/make_spm_reference.py (the file
// records the package versions and the model's sha256).
#include <QElapsedTimer>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QtTest>

#include "common/test_paths.h"
#include "gguf/gguf_file.h"
#include "tokenizer/tokenizer.h"

using ember::TokenId;
using ember::Tokenizer;

namespace {

QString show(const std::vector<TokenId>& ids) {
  QStringList words;
  for (TokenId id : ids) words << QString::number(id);
  return words.join(' ');
}

}  // namespace

class TestSpmGemma3 : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase() {
    EMBER_REQUIRE_MODEL(modelPath, "gemma-3-270m-q4_k_m.gguf");
    const auto file = ember::gguf::GgufFile::open(modelPath.toStdString());
    QElapsedTimer timer;
    timer.start();
    tokenizer_ = Tokenizer::fromGguf(*file);
    // Reported, not asserted: the tokenizer is built at app start.
    qInfo("built the Gemma 3 tokenizer (%zu pieces) in %lld ms", tokenizer_->vocabSize(),
          static_cast<long long>(timer.elapsed()));
  }

  void properties() {
    // tokenizer.ggml.* metadata of the model: bos 2, eos 1, unknown 3, padding 0, no space prefix.
    QCOMPARE(tokenizer_->kindName(), std::string_view("sentencepiece"));
    QCOMPARE(tokenizer_->vocabSize(), size_t{262144});
    QVERIFY(!tokenizer_->stripsLeadingSpace());
    QCOMPARE(tokenizer_->special().bos, std::optional<TokenId>(2));
    QCOMPARE(tokenizer_->special().eos, std::optional<TokenId>(1));
    QCOMPARE(tokenizer_->special().unk, std::optional<TokenId>(3));
    QCOMPARE(tokenizer_->special().pad, std::optional<TokenId>(0));
    QCOMPARE(tokenizer_->findToken("<start_of_turn>"), std::optional<TokenId>(105));
    // A user-defined run of spaces decodes as spaces; a byte piece as its byte.
    QCOMPARE(tokenizer_->tokenBytes(139, false), std::string("   "));
    QCOMPARE(tokenizer_->tokenBytes(238 + 0x0A, false), std::string("\n"));
    QCOMPARE(tokenizer_->tokenBytes(105, false), std::string());
    QCOMPARE(tokenizer_->tokenBytes(105, true), std::string("<start_of_turn>"));
  }

  void matchesTransformers_data() {
    QTest::addColumn<QString>("text");
    QTest::addColumn<bool>("special");
    QTest::addColumn<QString>("expected");
    QFile f(ember::test::sourceDir() + "/tests/engine/tokenizer/data/gemma3_reference.json");
    QVERIFY2(f.open(QIODevice::ReadOnly), qPrintable(f.fileName()));
    const QJsonObject root = QJsonDocument::fromJson(f.readAll()).object();
    const QJsonArray cases = root["cases"].toArray();
    QVERIFY(cases.size() >= 10);
    for (const QJsonValue& c : cases) {
      const QJsonObject o = c.toObject();
      std::vector<TokenId> ids;
      for (const QJsonValue& id : o["ids"].toArray()) ids.push_back(id.toInt());
      QTest::addRow("%s", qPrintable(o["name"].toString()))
          << o["text"].toString() << o["special"].toBool() << show(ids);
    }
  }

  void matchesTransformers() {
    QFETCH(QString, text);
    QFETCH(bool, special);
    QFETCH(QString, expected);
    const std::string utf8 = text.toStdString();
    const std::vector<TokenId> ids = tokenizer_->encode(utf8, special);
    QCOMPARE(show(ids), expected);
    // Without a dummy prefix, decoding gives the text back exactly (control tokens rendered when
    // they were parsed from the text).
    QCOMPARE(QString::fromStdString(tokenizer_->decode(ids, special)), text);
  }

 private:
  std::unique_ptr<Tokenizer> tokenizer_;
};

QTEST_GUILESS_MAIN(TestSpmGemma3)
#include "test_spm_gemma3.moc"
