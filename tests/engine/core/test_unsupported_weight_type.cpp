// A whole model file whose weight uses a GGML type the reader knows but the CPU backend has no
// kernel for: loading it must fail with an ember::Error that names the type and the tensor (the
// user can then pick another quantization), never crash or read the bytes as something else.
// The file is the default model with one tensor's type id changed in its tensor table (to a type
// whose data is no larger than the Q4_1 data it replaces, so every offset stays valid).
// Reference: the type ids, names and block sizes of ggml.h's ggml_type as gguf-py
// (GGMLQuantizationType, GGML_QUANT_SIZES) lists them; the CPU backend's supported set is
// documented in EngineOptions::kernels and backend/cpu/matmul.cpp.
#include <QCoreApplication>
#include <QFile>
#include <QtTest>
#include <cstring>

#include "common/test_paths.h"
#include "ember/engine.h"
#include "ember/error.h"

using namespace ember;

namespace {
constexpr auto kModel = "SmolLM2-135M-Instruct.Q4_1.gguf";
// Q4_1 [1536, 576] in the file: 1536 elements a row, 20 bytes per 32 (160 per 256).
constexpr auto kTensor = "blk.0.ffn_down.weight";
}  // namespace

class UnsupportedWeightTypeTest : public QObject {
  Q_OBJECT
  QString copy_;
  qsizetype typeAt_ = -1;  // where the tensor's u32 type id is in the file

 private slots:
  void initTestCase() {
    EMBER_REQUIRE_MODEL(model, kModel);
    copy_ = QCoreApplication::applicationDirPath() + "/unsupported-weight-type.gguf";
    QFile::remove(copy_);
    QVERIFY(QFile::copy(model, copy_));
    QFile f(copy_);
    QVERIFY(f.open(QIODevice::ReadOnly));
    const QByteArray bytes = f.read(8 << 20);  // the header and tensor table are at the start
    // Tensor info: u64 name length, name, u32 dimension count, u64 dimensions, u32 type, u64 offset.
    const QByteArray name(kTensor);
    const qsizetype at = bytes.indexOf(name);
    QVERIFY(at > 8);
    quint32 dims = 0;
    std::memcpy(&dims, bytes.constData() + at + name.size(), 4);
    QCOMPARE(dims, 2u);
    quint64 shape[2];
    std::memcpy(shape, bytes.constData() + at + name.size() + 4, 16);
    QCOMPARE(shape[0], quint64(1536));
    typeAt_ = at + name.size() + 4 + 16;
    quint32 type = 0;
    std::memcpy(&type, bytes.constData() + typeAt_, 4);
    QCOMPARE(type, 3u);  // Q4_1
  }

  void loadNamesTheType_data() {
    QTest::addColumn<quint32>("id");
    QTest::addColumn<QString>("name");
    // id, name (ggml.h); each with a block size dividing 1536 and <= 160 bytes per 256 elements.
    QTest::newRow("Q2_K") << 10u << "Q2_K";
    QTest::newRow("Q3_K") << 11u << "Q3_K";
    QTest::newRow("IQ2_XXS") << 16u << "IQ2_XXS";
    QTest::newRow("IQ2_XS") << 17u << "IQ2_XS";
    QTest::newRow("IQ3_XXS") << 18u << "IQ3_XXS";
    QTest::newRow("IQ1_S") << 19u << "IQ1_S";
    QTest::newRow("IQ4_NL") << 20u << "IQ4_NL";
    QTest::newRow("IQ3_S") << 21u << "IQ3_S";
    QTest::newRow("IQ2_S") << 22u << "IQ2_S";
    QTest::newRow("IQ4_XS") << 23u << "IQ4_XS";
    QTest::newRow("IQ1_M") << 29u << "IQ1_M";
    QTest::newRow("TQ1_0") << 34u << "TQ1_0";
    QTest::newRow("TQ2_0") << 35u << "TQ2_0";
  }
  void loadNamesTheType() {
    QFETCH(quint32, id);
    QFETCH(QString, name);
    QFile f(copy_);
    QVERIFY(f.open(QIODevice::ReadWrite));
    QVERIFY(f.seek(typeAt_));
    QCOMPARE(f.write(reinterpret_cast<const char*>(&id), 4), qint64(4));
    f.close();
    EngineOptions options;
    options.modelPath = copy_.toStdString();
    options.backend = "cpu";
    options.contextLength = 256;
    options.maxSequences = 1;
    try {
      (void)Engine::load(options);
      QFAIL("a model with an unsupported weight type was loaded");
    } catch (const Error& e) {
      const QString message = QString::fromUtf8(e.what());
      // The type by name, as a word of its own (IQ2_XS must not pass for IQ2_XXS or IQ2_S).
      const QRegularExpression word("\\b" + QRegularExpression::escape(name) + "\\b");
      QVERIFY2(word.match(message).hasMatch(), qPrintable(message));
      QVERIFY2(message.contains(kTensor), qPrintable(message));
      QVERIFY2(message.contains("not supported"), qPrintable(message));
    }
  }

  void cleanupTestCase() { QFile::remove(copy_); }
};

QTEST_GUILESS_MAIN(UnsupportedWeightTypeTest)
#include "test_unsupported_weight_type.moc"
