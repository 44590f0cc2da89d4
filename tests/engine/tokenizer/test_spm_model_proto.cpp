// The ModelProto wire-format reader and writer. References:
//  - llama2-tokenizer.model (Meta's SentencePiece model) against ggml-vocab-llama-spm.gguf, the
//    same vocabulary converted by llama.cpp: every piece, score and type must agree;
//  - libsentencepiece, which must accept what the writer produces and tokenize with it exactly
//    as with the original file (llama.cpp's test vectors);
//  - byte strings spelled out from the protobuf encoding rules (protobuf.dev "Encoding").
#include <QFile>
#include <QTemporaryDir>
#include <QtTest>

#include "ember/error.h"
#include "common/test_paths.h"
#include "gguf/gguf_file.h"
#include "tokenizer/gguf_vocabulary.h"
#include "tokenizer/spm_model_proto.h"
#include "tokenizer/spm_tokenizer.h"

namespace spm = ember::spm;
using ember::TokenType;

namespace {

std::string readAll(const QString& path) {
  QFile f(path);
  if (!f.open(QIODevice::ReadOnly)) qFatal("cannot read %s", qPrintable(path));
  return f.readAll().toStdString();
}

}  // namespace

class TestSpmModelProto : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase() {
    EMBER_REQUIRE_TESTDATA(modelPath, "tokenizer/llama2-tokenizer.model");
    EMBER_REQUIRE_TESTDATA(vocabPath, "tokenizer/ggml-vocab-llama-spm.gguf");
    modelBytes_ = readAll(modelPath);
    vocabPath_ = vocabPath;
  }

  void readsLlama2ModelFile() {
    const spm::ModelProto model = spm::parseModelProto(modelBytes_);
    const auto file = ember::gguf::GgufFile::open(vocabPath_.toStdString());
    const ember::GgufVocabulary vocab = ember::readGgufVocabulary(*file);
    QCOMPARE(model.pieces.size(), vocab.tokens.size());
    for (size_t i = 0; i < model.pieces.size(); ++i) {
      QCOMPARE(model.pieces[i].text, vocab.tokens[i]);
      QCOMPARE(model.pieces[i].score, vocab.scores[i]);
      QCOMPARE(model.pieces[i].type, vocab.types[i]);
    }
    // Llama 2's tokenizer is a BPE model with byte fallback, <unk>/<s>/</s> at 0/1/2, no
    // padding, and an identity normalizer that keeps extra whitespace.
    QCOMPARE(model.trainer.modelType, spm::ModelType::Bpe);
    QVERIFY(model.trainer.byteFallback);
    QCOMPARE(model.trainer.unkId, 0);
    QCOMPARE(model.trainer.bosId, 1);
    QCOMPARE(model.trainer.eosId, 2);
    QCOMPARE(model.trainer.padId, -1);
    QCOMPARE(model.normalizer.name, std::string("identity"));
    QVERIFY(model.normalizer.addDummyPrefix);
    QVERIFY(!model.normalizer.removeExtraWhitespaces);
    QVERIFY(model.normalizer.escapeWhitespaces);
    QVERIFY(!model.normalizer.hasCharsMap);
  }

  void writerRoundTripsAndLibraryAcceptsIt() {
    const spm::ModelProto original = spm::parseModelProto(modelBytes_);
    const std::string written = spm::serializeModelProto(original);
    const spm::ModelProto reread = spm::parseModelProto(written);
    QCOMPARE(reread.pieces.size(), original.pieces.size());
    for (size_t i = 0; i < reread.pieces.size(); ++i) {
      QCOMPARE(reread.pieces[i].text, original.pieces[i].text);
      QCOMPARE(reread.pieces[i].score, original.pieces[i].score);
      QCOMPARE(reread.pieces[i].type, original.pieces[i].type);
    }
    QCOMPARE(reread.trainer.padId, -1);  // negative int32: a ten-byte varint
    QCOMPARE(reread.trainer.modelType, spm::ModelType::Bpe);
    QCOMPARE(reread.normalizer.name, std::string("identity"));

    // libsentencepiece loads the written model and tokenizes as with Meta's file; the ids are
    // llama.cpp's test vector for this text (ggml-vocab-llama-spm.gguf.out).
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const QString path = dir.filePath("written.model");
    QFile out(path);
    QVERIFY(out.open(QIODevice::WriteOnly));
    out.write(written.data(), static_cast<qint64>(written.size()));
    out.close();
    const auto tokenizer = ember::makeSentencePieceTokenizerFromModelFile(path.toStdString());
    const std::vector<ember::TokenId> expected = {15043, 29892, 343, 29915, 497, 29991};
    QCOMPARE(tokenizer->encode("Hello, y'all!", false), expected);
  }

  void writesExpectedBytes() {
    spm::ModelProto model;
    model.pieces.push_back({"a", 1.0f, TokenType::Control});
    const std::string bytes = spm::serializeModelProto(model);
    // pieces (field 1, length 10): piece "a" = 0A 01 61, score 1.0f = 15 00 00 80 3F,
    // type CONTROL = 18 03.
    const std::string piece("\x0A\x0A\x0A\x01\x61\x15\x00\x00\x80\x3F\x18\x03", 12);
    QCOMPARE(bytes.substr(0, piece.size()), piece);
  }

  void rejectsMalformedInput_data() {
    QTest::addColumn<QByteArray>("bytes");
    QTest::addColumn<QString>("reason");
    QTest::addRow("truncated varint") << QByteArray("\x08\x80", 2) << "truncated varint";
    QTest::addRow("length past end") << QByteArray("\x0A\x05\x0A\x01", 4) << "past the end";
    QTest::addRow("wrong wire type for pieces")
        << QByteArray("\x08\x01", 2) << "has wire type 0, expected 2";
    QTest::addRow("group wire type") << QByteArray("\x0B", 1) << "unsupported wire type 3";
    QTest::addRow("field number zero") << QByteArray("\x02\x00", 2) << "field number 0";
    QTest::addRow("truncated float in piece")
        << QByteArray("\x0A\x03\x15\x00\x00", 5) << "truncated fixed-width";
  }

  void rejectsMalformedInput() {
    QFETCH(QByteArray, bytes);
    QFETCH(QString, reason);
    try {
      spm::parseModelProto(std::string_view(bytes.constData(), static_cast<size_t>(bytes.size())));
      QFAIL("no error");
    } catch (const ember::Error& e) {
      QVERIFY2(QString(e.what()).contains(reason), e.what());
    }
  }

 private:
  std::string modelBytes_;
  QString vocabPath_;
};

QTEST_GUILESS_MAIN(TestSpmModelProto)
#include "test_spm_model_proto.moc"
