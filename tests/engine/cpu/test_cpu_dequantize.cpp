// Dequantization of every supported weight type, and float32 <-> F16/BF16 conversion, against
// gguf-py's numpy implementation (PyPI gguf 0.19.0, gguf.quants.dequantize/quantize; numpy's
// float16 cast). The reference file tests/engine/cpu/data/dequant_reference.json was written by
// tests/tools/make_dequant_reference.py from real rows of the two real models, gguf-py
// quantizations of random data, and random blocks; see its "provenance".
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QtTest>
#include <cstring>

#include "backend/cpu/matmul.h"
#include "backend/cpu/quant/block_formats.h"
#include "ember/error.h"
#include "common/test_paths.h"
#include "cpu_test_support.h"

using namespace ember;

namespace {

QString referencePath() {
  return test::sourceDir() + QStringLiteral("/tests/engine/cpu/data/dequant_reference.json");
}

QJsonObject loadReference() {
  QFile file(referencePath());
  if (!file.open(QIODevice::ReadOnly)) return {};
  return QJsonDocument::fromJson(file.readAll()).object();
}

std::vector<uint32_t> hexWords(const QString& hex) {
  const QByteArray bytes = QByteArray::fromHex(hex.toLatin1());
  std::vector<uint32_t> words(size_t(bytes.size() / 4));
  for (size_t i = 0; i < words.size(); ++i) {
    const auto* p = reinterpret_cast<const uint8_t*>(bytes.constData()) + 4 * i;
    words[i] = uint32_t(p[0]) << 24 | uint32_t(p[1]) << 16 | uint32_t(p[2]) << 8 | p[3];
  }
  return words;
}

std::optional<gguf::GgmlType> typeNamed(const QString& name) {
  for (gguf::GgmlType t : test::supportedTypes())
    if (QString::fromLatin1(gguf::ggmlTypeName(t).data()) == name) return t;
  return std::nullopt;
}

}  // namespace

class TestCpuDequantize : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase() {
    reference_ = loadReference();
    QVERIFY2(!reference_.isEmpty(), qPrintable("cannot read " + referencePath()));
  }

  void halfConversions() {
    const QJsonObject conv = reference_["conversions"].toObject();
    const std::vector<uint32_t> inputs = hexWords(conv["inputs"].toString());
    const QJsonArray f16 = conv["f16_bits"].toArray(), bf16 = conv["bf16_bits"].toArray();
    QCOMPARE(qsizetype(inputs.size()), f16.size());
    QCOMPARE(qsizetype(inputs.size()), bf16.size());
    for (size_t i = 0; i < inputs.size(); ++i) {
      float x;
      std::memcpy(&x, &inputs[i], 4);
      const auto expectedHalf = uint16_t(f16[qsizetype(i)].toInt());
      QVERIFY2(cpu::quant::floatToFp16(x) == expectedHalf,
               qPrintable(QString("F16 of %1 (0x%2): got 0x%3, numpy 0x%4")
                              .arg(double(x), 0, 'g', 9)
                              .arg(inputs[i], 8, 16, QChar('0'))
                              .arg(cpu::quant::floatToFp16(x), 4, 16, QChar('0'))
                              .arg(expectedHalf, 4, 16, QChar('0'))));
      QCOMPARE(cpu::quant::floatToBf16(x), uint16_t(bf16[qsizetype(i)].toInt()));
      // Back to float: F16 values are exact in float32 (numpy agrees bit for bit with this).
      const float back = cpu::quant::fp16ToFloat(expectedHalf);
      QCOMPARE(cpu::quant::floatToFp16(back), expectedHalf);
    }
  }

  void blocks_data() {
    QTest::addColumn<QString>("type");
    QTest::addColumn<QString>("blocksHex");
    QTest::addColumn<QString>("valuesHex");
    QTest::addColumn<int>("elements");
    int index = 0;
    for (const QJsonValue& value : reference_["cases"].toArray()) {
      const QJsonObject c = value.toObject();
      const QString name =
          QString("%1 #%2 %3").arg(c["type"].toString()).arg(index++).arg(c["source"].toString());
      QTest::newRow(qPrintable(name)) << c["type"].toString() << c["blocks"].toString()
                                      << c["values"].toString() << c["elements"].toInt();
    }
  }

  // Each case's blocks viewed as a one-row matrix; dequantizeRow must reproduce gguf-py's floats
  // exactly (same operations in the same order, no fused multiply-add).
  void blocks() {
    QFETCH(QString, type);
    QFETCH(QString, blocksHex);
    QFETCH(QString, valuesHex);
    QFETCH(int, elements);
    const auto ggmlType = typeNamed(type);
    QVERIFY2(ggmlType, qPrintable("unknown type " + type));
    QByteArray raw = QByteArray::fromHex(blocksHex.toLatin1());
    raw.prepend('\0');  // keep the data 2-byte aligned after the 1-byte shift below
    raw.prepend('\0');
    gguf::TensorInfo info;
    info.name = "case";
    info.type = *ggmlType;
    info.shape = {uint64_t(elements)};
    info.elementCount = uint64_t(elements);
    info.data = {reinterpret_cast<const uint8_t*>(raw.constData()) + 2, size_t(raw.size() - 2)};
    const cpu::WeightMatrix w = cpu::weightMatrix(info);
    QCOMPARE(w.rows, int64_t(1));
    QCOMPARE(w.cols, int64_t(elements));
    std::vector<float> out(static_cast<size_t>(elements));
    cpu::dequantizeRow(w, 0, out.data());
    const std::vector<uint32_t> expected = hexWords(valuesHex);
    QCOMPARE(expected.size(), out.size());
    for (size_t i = 0; i < out.size(); ++i) {
      uint32_t got;
      std::memcpy(&got, &out[i], 4);
      if (got != expected[i]) {
        float want;
        std::memcpy(&want, &expected[i], 4);
        QFAIL(qPrintable(QString("element %1: got %2 (0x%3), gguf-py %4 (0x%5)")
                             .arg(i)
                             .arg(double(out[i]), 0, 'g', 9)
                             .arg(got, 8, 16, QChar('0'))
                             .arg(double(want), 0, 'g', 9)
                             .arg(expected[i], 8, 16, QChar('0'))));
      }
    }
  }

  // Every type the brief lists is covered by the reference file.
  void referenceCoversEveryType() {
    QSet<QString> seen;
    for (const QJsonValue& value : reference_["cases"].toArray())
      seen.insert(value.toObject()["type"].toString());
    for (gguf::GgmlType t : test::supportedTypes())
      QVERIFY2(seen.contains(QString::fromLatin1(gguf::ggmlTypeName(t).data())),
               gguf::ggmlTypeName(t).data());
  }

  void weightMatrixRejectsBadTensors_data() {
    QTest::addColumn<int>("type");
    QTest::addColumn<QList<quint64>>("shape");
    QTest::addColumn<int>("bytes");
    QTest::addColumn<QString>("phrase");
    QTest::newRow("unsupported type")
        << int(gguf::GgmlType::Q2_K) << QList<quint64>{256, 1} << 84 << "not supported";
    QTest::newRow("partial block") << int(gguf::GgmlType::Q4_0) << QList<quint64>{48, 2} << 72
                                   << "not a multiple of the block size 32";
    QTest::newRow("short data") << int(gguf::GgmlType::Q8_0) << QList<quint64>{64, 3} << 200
                                << "data is shorter";
    QTest::newRow("3-d") << int(gguf::GgmlType::F32) << QList<quint64>{4, 2, 2} << 64
                         << "not a matrix";
    QTest::newRow("empty") << int(gguf::GgmlType::F32) << QList<quint64>{0, 2} << 0 << "is empty";
  }

  void weightMatrixRejectsBadTensors() {
    QFETCH(int, type);
    QFETCH(QList<quint64>, shape);
    QFETCH(int, bytes);
    QFETCH(QString, phrase);
    std::vector<uint8_t> data(size_t(bytes) + 2);
    gguf::TensorInfo info;
    info.name = "blk.0.bad";
    info.type = gguf::GgmlType(type);
    info.shape.assign(shape.begin(), shape.end());
    info.data = {data.data(), size_t(bytes)};
    try {
      cpu::weightMatrix(info);
      QFAIL("accepted");
    } catch (const Error& e) {
      QVERIFY2(QString(e.what()).contains(phrase), e.what());
      QVERIFY2(QString(e.what()).contains("blk.0.bad"), e.what());
    }
  }

  void dequantizeRowChecksTheRow() {
    const auto m = test::randomMatrix(gguf::GgmlType::Q4_0, 3, 64, 1);
    std::vector<float> out(64);
    QVERIFY_THROWS_EXCEPTION(Error, cpu::dequantizeRow(m.view, 3, out.data()));
    QVERIFY_THROWS_EXCEPTION(Error, cpu::dequantizeRow(m.view, -1, out.data()));
  }

 private:
  QJsonObject reference_;
};

QTEST_APPLESS_MAIN(TestCpuDequantize)
#include "test_cpu_dequantize.moc"
