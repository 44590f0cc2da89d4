// The SentencePiece tokenizer on Llama 2's vocabulary, checked against references written
// elsewhere:
//  - ggml-vocab-llama-spm.gguf.inp/.out: llama.cpp's tokenizer test vectors (see
//    shared/testdata/README.md), run through Tokenizer::fromGguf;
//  - llama2-tokenizer.model, Meta's SentencePiece model file for the same vocabulary, loaded by
//    libsentencepiece directly: it must give the same ids, pieces, types and special ids;
//  - spm_llama_reference.json: llama.cpp (llama-cpp-python 0.3.36) on the same GGUF with
//    special-token parsing on: the dummy-prefix space follows every special token, as in Llama 2's
//    chat format (written by tests/tools/make_llamacpp_tokenizer_reference.py --llama-spm).
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QtTest>

#include "ember/error.h"
#include "common/test_paths.h"
#include "gguf/gguf_file.h"
#include "tokenizer/gguf_vocabulary.h"
#include "tokenizer/spm_tokenizer.h"
#include "tokenizer/tokenizer.h"

using ember::TokenId;
using ember::Tokenizer;
using ember::TokenType;

Q_DECLARE_METATYPE(ember::SpmEncoderChoice)

namespace {

QByteArray readAll(const QString& path) {
  QFile f(path);
  if (!f.open(QIODevice::ReadOnly)) qFatal("cannot read %s", qPrintable(path));
  return f.readAll();
}

std::vector<TokenId> idsOf(const QByteArray& line) {
  std::vector<TokenId> ids;
  for (const QByteArray& word : line.split(' '))
    if (!word.isEmpty()) ids.push_back(word.toInt());
  return ids;
}

std::vector<TokenId> idsOf(const QJsonArray& array) {
  std::vector<TokenId> ids;
  for (const QJsonValue& v : array) ids.push_back(v.toInt());
  return ids;
}

QString show(const std::vector<TokenId>& ids) {
  QStringList words;
  for (TokenId id : ids) words << QString::number(id);
  return words.join(' ');
}

}  // namespace

class TestSpmLlama : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase() {
    EMBER_REQUIRE_TESTDATA(vocabPath, "tokenizer/ggml-vocab-llama-spm.gguf");
    EMBER_REQUIRE_TESTDATA(modelPath, "tokenizer/llama2-tokenizer.model");
    fromGguf_ = Tokenizer::fromGguf(*ember::gguf::GgufFile::open(vocabPath.toStdString()));
    fromModelFile_ = Tokenizer::fromSentencePieceModel(modelPath.toStdString());
    modelPath_ = modelPath;

    // .inp: texts separated by "\n__ggml_vocab_test__\n" (each text is followed by one);
    // .out: one line of ids per text.
    const QByteArray inp = readAll(vocabPath + ".inp");
    const QList<QByteArray> lines = readAll(vocabPath + ".out").split('\n');
    const QByteArray separator = "\n__ggml_vocab_test__\n";
    for (qsizetype start = 0, hit; (hit = inp.indexOf(separator, start)) >= 0;
         start = hit + separator.size()) {
      const qsizetype index = cases_.size();
      QVERIFY2(index < lines.size(), "the .out file has fewer lines than the .inp has texts");
      cases_.push_back({inp.mid(start, hit - start), idsOf(lines[index])});
    }
    QCOMPARE(cases_.size(), 46);
  }

  void basicProperties() {
    for (const Tokenizer* t : {fromGguf_.get(), fromModelFile_.get()}) {
      QCOMPARE(t->kindName(), std::string_view("sentencepiece"));
      QCOMPARE(t->vocabSize(), size_t{32000});
      QVERIFY(t->stripsLeadingSpace());  // Llama 2's model adds a dummy prefix
      QCOMPARE(t->special().bos, std::optional<TokenId>(1));
      QCOMPARE(t->special().eos, std::optional<TokenId>(2));
      QCOMPARE(t->special().unk, std::optional<TokenId>(0));
      QVERIFY(t->isEndOfGeneration(2));
    }
  }

  // The model file and the GGUF (converted from it by llama.cpp) describe the same pieces.
  void modelFileMatchesGgufVocabulary() {
    for (TokenId id = 0; id < 32000; ++id) {
      QCOMPARE(fromModelFile_->tokenText(id), fromGguf_->tokenText(id));
      QCOMPARE(fromModelFile_->tokenType(id), fromGguf_->tokenType(id));
    }
  }

  void matchesLlamaCppVectors_data() {
    QTest::addColumn<QByteArray>("text");
    QTest::addColumn<QString>("expected");
    for (size_t i = 0; i < cases_.size(); ++i) {
      QTest::addRow("%zu: %s", i, cases_[i].text.left(24).toPercentEncoding(" ").constData())
          << cases_[i].text << show(cases_[i].ids);
    }
  }

  void matchesLlamaCppVectors() {
    QFETCH(QByteArray, text);
    QFETCH(QString, expected);
    const std::string_view view(text.constData(), static_cast<size_t>(text.size()));
    QCOMPARE(show(fromGguf_->encode(view, /*parseSpecial=*/false)), expected);
    QCOMPARE(show(fromModelFile_->encode(view, false)), expected);
    // Decoding gives the text back (the dummy prefix is dropped again).
    const std::vector<TokenId> ids = fromGguf_->encode(view, false);
    QCOMPARE(QByteArray::fromStdString(fromGguf_->decode(ids)), text);
    QCOMPARE(QByteArray::fromStdString(fromModelFile_->decode(ids)), text);
  }

  // Special-token parsing: llama.cpp's tokenizer for the same GGUF is the reference.
  void matchesLlamaCppWithSpecialTokens_data() {
    QTest::addColumn<QString>("text");
    QTest::addColumn<bool>("special");
    QTest::addColumn<QString>("expected");
    const QString path =
        ember::test::sourceDir() + "/tests/engine/tokenizer/data/spm_llama_reference.json";
    const QJsonObject root = QJsonDocument::fromJson(readAll(path)).object();
    const QJsonArray cases = root["cases"].toArray();
    QVERIFY(!cases.isEmpty());
    for (const QJsonValue& c : cases) {
      const QJsonObject o = c.toObject();
      QTest::addRow("%s", qPrintable(o["name"].toString()))
          << o["text"].toString() << o["special"].toBool() << show(idsOf(o["ids"].toArray()));
    }
  }

  void matchesLlamaCppWithSpecialTokens() {
    QFETCH(QString, text);
    QFETCH(bool, special);
    QFETCH(QString, expected);
    QCOMPARE(show(fromGguf_->encode(text.toStdString(), special)), expected);
    QCOMPARE(show(fromModelFile_->encode(text.toStdString(), special)), expected);
  }

  // Piece facts from Llama 2's vocabulary: <0x0A> is id 13, "▁Hello" is 15043, <s> is 1.
  void tokenBytes() {
    for (const Tokenizer* t : {fromGguf_.get(), fromModelFile_.get()}) {
      QCOMPARE(t->tokenBytes(13, false), std::string("\n"));
      QCOMPARE(t->tokenBytes(3 + 0xE2, false), std::string("\xE2"));
      QCOMPARE(t->tokenBytes(15043, false), std::string(" Hello"));
      QCOMPARE(t->tokenBytes(1, false), std::string());
      QCOMPARE(t->tokenBytes(1, true), std::string("<s>"));
      // <unk> reads as libsentencepiece's unk_surface (sentencepiece_model.proto default).
      QCOMPARE(t->tokenBytes(0, false), std::string(" \xE2\x81\x87 "));
      QVERIFY_THROWS_EXCEPTION(ember::Error, t->tokenBytes(32000, false));
      QVERIFY_THROWS_EXCEPTION(ember::Error, t->tokenBytes(-1, false));
    }
    const std::vector<TokenId> ids = {1, 15043, 3186, 2};
    QCOMPARE(fromGguf_->decode(ids), std::string("Hello world"));
    QCOMPARE(fromGguf_->decode(ids, /*renderSpecial=*/true), std::string("<s>Hello world</s>"));
  }

  void addsBosAndEosOnRequest() {
    const std::vector<TokenId> expected = {1, 15043, 3186, 2};  // .out: "Hello world" = 15043 3186
    QCOMPARE(fromGguf_->encode("Hello world", false, true, true), expected);
    QCOMPARE(fromModelFile_->encode("Hello world", false, true, true), expected);
  }

  // Vocabularies libsentencepiece cannot take fail with the reason, with either encoder; one whose
  // <unk> is marked CONTROL (as in Gemma GGUFs) is accepted through
  // tokenizer.ggml.unknown_token_id.
  void vocabularyChecks_data() {
    QTest::addColumn<ember::SpmEncoderChoice>("choice");
    QTest::newRow("own") << ember::SpmEncoderChoice::Own;
    QTest::newRow("libsentencepiece") << ember::SpmEncoderChoice::Library;
  }
  void vocabularyChecks() {
    QFETCH(ember::SpmEncoderChoice, choice);
    EMBER_REQUIRE_TESTDATA(vocabPath, "tokenizer/ggml-vocab-llama-spm.gguf");
    const auto file = ember::gguf::GgufFile::open(vocabPath.toStdString());
    const ember::GgufVocabulary vocab = ember::readGgufVocabulary(*file);
    auto messageFor = [&](const ember::GgufVocabulary& v) -> QString {
      try {
        ember::makeSentencePieceTokenizer(v, choice);
      } catch (const ember::Error& e) {
        return QString::fromStdString(e.what());
      }
      return {};
    };
    ember::GgufVocabulary noScores = vocab;
    noScores.scores.clear();
    QVERIFY(messageFor(noScores).contains("tokenizer.ggml.scores"));
    ember::GgufVocabulary duplicate = vocab;
    duplicate.tokens[300] = duplicate.tokens[301];
    const QString duplicateMessage = messageFor(duplicate);
    const bool named = choice == ember::SpmEncoderChoice::Own
                           ? duplicateMessage.contains("(id 301) is already defined (id 300)")
                           : duplicateMessage.contains("libsentencepiece rejected") &&
                                 duplicateMessage.contains("already defined");
    QVERIFY2(named, qPrintable(duplicateMessage));
    ember::GgufVocabulary empty = vocab;
    empty.tokens[300].clear();
    QVERIFY(!messageFor(empty).isEmpty());
    ember::GgufVocabulary noUnknown = vocab;
    noUnknown.types[0] = TokenType::Control;
    noUnknown.special.unk.reset();
    QVERIFY(messageFor(noUnknown).contains("no unknown token"));
    noUnknown.special.unk = 0;
    const std::vector<TokenId> expected = {15043, 3186};  // .out: "Hello world"
    QCOMPARE(ember::makeSentencePieceTokenizer(noUnknown, choice)->encode("Hello world", false),
             expected);
  }

  void rejectsBadModelFiles() {
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const QByteArray model = readAll(modelPath_);
    auto writeFile = [&](const QString& name, const QByteArray& bytes) {
      QFile f(dir.filePath(name));
      if (!f.open(QIODevice::WriteOnly)) qFatal("cannot write %s", qPrintable(f.fileName()));
      f.write(bytes);
      return dir.filePath(name).toStdString();
    };
    auto messageFor = [](const std::string& path) -> QString {
      try {
        Tokenizer::fromSentencePieceModel(path);
      } catch (const ember::Error& e) {
        return QString::fromStdString(e.what());
      }
      return {};
    };
    QVERIFY(messageFor(dir.filePath("missing.model").toStdString()).contains("cannot open"));
    QVERIFY(messageFor(writeFile("truncated.model", model.left(model.size() / 2)))
                .contains("malformed SentencePiece model"));
    QVERIFY(messageFor(writeFile("empty.model", {})).contains("no pieces"));
    const QString garbage = messageFor(writeFile("garbage.model", QByteArray(64, '\xff')));
    QVERIFY2(garbage.contains("malformed"), qPrintable(garbage));
  }

 private:
  struct Case {
    QByteArray text;
    std::vector<TokenId> ids;
  };
  std::vector<Case> cases_;
  std::unique_ptr<Tokenizer> fromGguf_;
  std::unique_ptr<Tokenizer> fromModelFile_;
  QString modelPath_;
};

QTEST_GUILESS_MAIN(TestSpmLlama)
#include "test_spm_llama.moc"
