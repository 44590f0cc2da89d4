// Dot-product kernels of every weight type at every SIMD level this CPU has.
//
// References:
// - Activation quantization: gguf-py's Q8_0 quantizer (dequant_reference.json, written by
//   tests/tools/make_dequant_reference.py), and the bound |x_hat - x| <= d/2 that defines it.
// - Integer dot products: the exact sum over dequantized weights times the dequantized
//   activations, in double. Weight dequantization itself is checked bit for bit against gguf-py
//   in test_cpu_dequantize.
// - SIMD kernels: the portable scalar kernels, which differ only in float summation order.
// - End to end: the double dot product with the unquantized activations, within the worst-case
//   error the activation rounding allows (sum of |w_i| * max|x_hat_i - x_i|).
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QtTest>
#include <cmath>

#include "backend/cpu/quant/kernels.h"
#include "common/test_paths.h"
#include "cpu_test_support.h"

using namespace ember;
using cpu::SimdLevel;
using cpu::quant::ActivationFormat;
using gguf::GgmlType;

Q_DECLARE_METATYPE(GgmlType)
Q_DECLARE_METATYPE(SimdLevel)

namespace {

const char* typeName(GgmlType t) { return gguf::ggmlTypeName(t).data(); }

// Prepares `tokens` activation rows with the kernels of `type` at `level`.
test::AlignedBytes prepare(const cpu::quant::TypeKernels& k, const std::vector<float>& x,
                           int64_t cols, int64_t tokens, size_t* stride) {
  *stride = cpu::quant::activationRowBytes(k.format, cols);
  test::AlignedBytes out(*stride * size_t(tokens));
  for (int64_t t = 0; t < tokens; ++t) k.prepare(x.data() + t * cols, cols, out.data + t * *stride);
  return out;
}

std::vector<float> runDotFn(cpu::quant::DotFn dot, const cpu::WeightMatrix& w,
                            const test::AlignedBytes& xq, size_t xStride, int64_t tokens) {
  std::vector<float> y(static_cast<size_t>(w.rows * tokens), -1.0f);
  dot({w.data, w.rowBytes, w.rows, xq.data, xStride, tokens, w.cols, y.data(), w.rows});
  return y;
}
std::vector<float> runDot(const cpu::quant::TypeKernels& k, const cpu::WeightMatrix& w,
                          const test::AlignedBytes& xq, size_t xStride, int64_t tokens) {
  return runDotFn(k.dot, w, xq, xStride, tokens);
}

// Every kernel of a type: `dot` and the ones that follow llama.cpp's other float orders
// (repacked Q4_K, tiled K-quants; see kernels.h), which must meet the same bounds.
std::vector<std::pair<const char*, cpu::quant::DotFn>> kernelVariants(
    const cpu::quant::TypeKernels& k) {
  std::vector<std::pair<const char*, cpu::quant::DotFn>> out{{"dot", k.dot}};
  if (k.dotRepackedGroups) out.emplace_back("repacked groups", k.dotRepackedGroups);
  if (k.dotRepackedSingles) out.emplace_back("repacked singles", k.dotRepackedSingles);
  if (k.dotTiled) out.emplace_back("tiled", k.dotTiled);
  return out;
}

// The largest error activation rounding may put on element i (see kernels.h for the formats).
std::vector<double> roundingBound(ActivationFormat format, GgmlType type, const float* x,
                                  int64_t cols) {
  std::vector<double> bound(static_cast<size_t>(cols));
  if (format == ActivationFormat::Float) {
    const double relative = type == GgmlType::F32 ? 0.0 : type == GgmlType::F16 ? 0x1p-11 : 0x1p-8;
    for (int64_t i = 0; i < cols; ++i)
      bound[size_t(i)] = relative * std::fabs(x[i]) + (type == GgmlType::F16 ? 0x1p-25 : 0.0);
    return bound;
  }
  const int64_t block = format == ActivationFormat::Q8x32 ? 32 : 256;
  for (int64_t b = 0; b < cols / block; ++b) {
    double amax = 0;
    for (int64_t i = 0; i < block; ++i) amax = std::max(amax, std::fabs(double(x[b * block + i])));
    const double d = amax / 127.0;
    // Half a step, plus (Q8x32) the step stored as F16: up to 127 * d * 2^-11 more.
    const double e = format == ActivationFormat::Q8x32 ? d * (0.5 + 127.0 * 0x1p-11) : d * 0.5;
    for (int64_t i = 0; i < block; ++i) bound[size_t(b * block + i)] = e * (1 + 1e-6);
  }
  return bound;
}

struct Shape {
  int64_t rows, cols;
};

// Awkward sizes: cols = 32k (k = 1, 3, 7, 31), 256k (k = 1, 3, 5) for K-quants, odd lengths for
// float types; rows 1, 19, 111, 989 (989 only where cheap).
std::vector<Shape> shapesFor(GgmlType type) {
  std::vector<int64_t> cols;
  const uint32_t block = test::blockSizeOf(type);
  if (block == 256)
    cols = {256, 768, 1280};
  else if (block == 32)
    cols = {32, 96, 224, 992};
  else
    cols = {1, 7, 33, 992};
  std::vector<Shape> shapes;
  for (int64_t c : cols)
    for (int64_t r : {1, 19, 111, 989})
      if (r * c <= 400000) shapes.push_back({r, c});
  return shapes;
}

}  // namespace

class TestCpuDot : public QObject {
  Q_OBJECT

 private slots:
  void activationsMatchGgufQ8_0() {
    QFile file(test::sourceDir() + "/tests/engine/cpu/data/dequant_reference.json");
    QVERIFY(file.open(QIODevice::ReadOnly));
    const QJsonArray rows =
        QJsonDocument::fromJson(file.readAll()).object()["activations_q8_0"].toArray();
    QVERIFY(!rows.isEmpty());
    int nearHalf = 0, total = 0;
    for (const QJsonValue& value : rows) {
      const QByteArray in = QByteArray::fromHex(value.toObject()["inputs"].toString().toLatin1());
      const QByteArray ref = QByteArray::fromHex(value.toObject()["q8_0"].toString().toLatin1());
      std::vector<float> x(size_t(in.size() / 4));
      for (size_t i = 0; i < x.size(); ++i) {  // big-endian bit patterns
        const auto* p = reinterpret_cast<const uint8_t*>(in.constData()) + 4 * i;
        const uint32_t bits =
            uint32_t(p[0]) << 24 | uint32_t(p[1]) << 16 | uint32_t(p[2]) << 8 | p[3];
        std::memcpy(&x[i], &bits, 4);
      }
      const int64_t cols = int64_t(x.size());
      for (SimdLevel level : test::supportedLevels()) {
        const auto* k = cpu::quant::kernelsFor(GgmlType::Q8_0, level);
        size_t stride;
        const auto xq = prepare(*k, x, cols, 1, &stride);
        const auto row = cpu::quant::q8x32Row(xq.data, cols);
        for (int64_t b = 0; b < cols / 32; ++b) {
          const auto* blk = reinterpret_cast<const uint8_t*>(ref.constData()) + 34 * b;
          float amax = 0.0f;
          for (int j = 0; j < 32; ++j) amax = std::max(amax, std::fabs(x[size_t(32 * b + j)]));
          QCOMPARE(row.d[b], cpu::quant::fp16ToFloat(cpu::quant::loadU16(blk)));
          int32_t sum = 0;
          for (int j = 0; j < 32; ++j) {
            const int expected = int8_t(blk[2 + j]), got = row.qs[32 * b + j];
            sum += got;
            ++total;
            if (got == expected) continue;
            // Only a value within rounding noise of a half may round the other way.
            const double scaled = double(x[size_t(32 * b + j)]) * 127.0 / amax;
            QVERIFY(std::abs(got - expected) == 1);
            QVERIFY2(std::fabs(std::fabs(scaled - std::trunc(scaled)) - 0.5) < 1e-2,
                     qPrintable(QString("x=%1 got %2 gguf %3")
                                    .arg(x[size_t(32 * b + j)])
                                    .arg(got)
                                    .arg(expected)));
            ++nearHalf;
          }
          QCOMPARE(row.sum[b], sum);
        }
      }
    }
    qInfo("%d quants compared with gguf-py, %d differ by one at a rounding tie", total, nearHalf);
  }

  // SIMD preparation writes the same bytes as the scalar one.
  void prepareMatchesScalar_data() {
    QTest::addColumn<GgmlType>("type");
    QTest::addColumn<SimdLevel>("level");
    for (GgmlType type : {GgmlType::Q8_0, GgmlType::Q4_K, GgmlType::F16, GgmlType::BF16})
      for (SimdLevel level : test::supportedLevels())
        if (level != SimdLevel::Scalar)
          QTest::addRow("%s %s", typeName(type), cpu::simdLevelName(level)) << type << level;
  }
  void prepareMatchesScalar() {
    QFETCH(GgmlType, type);
    QFETCH(SimdLevel, level);
    const int64_t cols = 1280;
    std::vector<float> x = test::randomActivations(cols, 7);
    for (int i = 256; i < 512; ++i) x[size_t(i)] = 0.0f;                   // an all-zero block
    x[600] = -1000.0f;                                                     // a negative maximum
    for (int i = 768; i < 800; ++i) x[size_t(i)] = float(i - 784) * 0.5f;  // exact ties
    x[1100] = 3.0f, x[1101] = -3.0f;                                       // equal magnitudes
    for (int i = 1024; i < 1100; ++i) x[size_t(i)] *= 1e-30f;              // tiny values
    const auto* simd = cpu::quant::kernelsFor(type, level);
    const auto* scalar = cpu::quant::kernelsFor(type, SimdLevel::Scalar);
    size_t stride;
    const auto a = prepare(*simd, x, cols, 1, &stride);
    const auto b = prepare(*scalar, x, cols, 1, &stride);
    QVERIFY(std::memcmp(a.data, b.data, stride) == 0);
  }

  void kernels_data() {
    QTest::addColumn<GgmlType>("type");
    QTest::addColumn<SimdLevel>("level");
    QTest::addColumn<qint64>("rows");
    QTest::addColumn<qint64>("cols");
    for (GgmlType type : test::supportedTypes())
      for (SimdLevel level : test::supportedLevels())
        for (const Shape& s : shapesFor(type))
          QTest::addRow("%s %s %lldx%lld", typeName(type), cpu::simdLevelName(level),
                        (long long)s.rows, (long long)s.cols)
              << type << level << qint64(s.rows) << qint64(s.cols);
  }

  // For 1, 2 and 5 tokens (the kernels tile 4 rows x 2 or 4 tokens), for each kernel variant:
  // (a) the kernel equals the exact double dot of the dequantized weights with the dequantized
  //     activations, up to float rounding: |err| <= 1e-5 * sum|w_i * x_hat_i| (plus, for Q4_1
  //     and Q5_1, the F16 rounding of the activation block term s = d * sum(q), as in ggml);
  // (b) a SIMD kernel equals the scalar kernel within 1e-5 * sum|w_i * x_hat_i| (float types:
  //     3e-5, up to 992 sequential float additions on the scalar side);
  // (c) the kernel is within the activation-rounding bound of the unquantized double dot.
  void kernels() {
    QFETCH(GgmlType, type);
    QFETCH(SimdLevel, level);
    QFETCH(qint64, rows);
    QFETCH(qint64, cols);
    const auto w = test::randomMatrix(type, rows, cols, uint32_t(rows * 131 + cols));
    const auto* k = cpu::quant::kernelsFor(type, level);
    const auto* scalar = cpu::quant::kernelsFor(type, SimdLevel::Scalar);
    QVERIFY(k && scalar);
    std::vector<std::vector<double>> weights;
    for (int64_t r = 0; r < rows; ++r) weights.push_back(test::dequantizedRow(w.view, r));
    const bool hasMin = type == GgmlType::Q4_1 || type == GgmlType::Q5_1;
    const double simdRtol = test::blockSizeOf(type) == 1 ? 3e-5 : 1e-5;
    for (int64_t tokens : {1, 2, 5}) {
      const std::vector<float> x = test::randomActivations(cols * tokens, uint32_t(tokens + cols));
      size_t stride;
      const auto xq = prepare(*k, x, cols, tokens, &stride);
      const std::vector<float> yScalar = runDot(*scalar, w.view, xq, stride, tokens);
      for (const auto& [variant, dot] : kernelVariants(*k)) {
        const std::vector<float> y = runDotFn(dot, w.view, xq, stride, tokens);
        for (int64_t t = 0; t < tokens; ++t) {
          const std::vector<double> xHat =
              test::reconstructActivations(k->format, xq.data + t * stride, cols);
          const std::vector<double> bound =
              roundingBound(k->format, type, x.data() + t * cols, cols);
          const auto act = cpu::quant::q8x32Row(xq.data + t * stride, cols);
          for (int64_t r = 0; r < rows; ++r) {
            double exact = 0, magnitude = 0, unquantized = 0, roundingError = 0, sTerm = 0;
            for (int64_t i = 0; i < cols; ++i) {
              const double wi = weights[size_t(r)][size_t(i)];
              exact += wi * xHat[size_t(i)];
              magnitude += std::fabs(wi * xHat[size_t(i)]);
              unquantized += wi * double(x[size_t(t * cols + i)]);
              roundingError += std::fabs(wi) * bound[size_t(i)];
            }
            if (hasMin)  // |m| * |d * sum(q)| * 2^-11 per block; |m| <= 0.05 by construction
              for (int64_t b = 0; b < cols / 32; ++b)
                sTerm += 0.05 * std::fabs(double(act.d[b]) * act.sum[b]) * 0x1p-11;
            const double got = y[size_t(t * rows + r)];
            const QString where = QString("%1: row %2 token %3").arg(variant).arg(r).arg(t);
            QVERIFY2(
                std::fabs(got - exact) <= 1e-5 * magnitude + sTerm + 1e-30,
                qPrintable(where +
                           QString(": %1 vs exact %2").arg(got, 0, 'g', 9).arg(exact, 0, 'g', 9)));
            QVERIFY2(std::fabs(got - yScalar[size_t(t * rows + r)]) <= simdRtol * magnitude + 1e-30,
                     qPrintable(where + QString(": %1 vs scalar %2")
                                            .arg(got, 0, 'g', 9)
                                            .arg(yScalar[size_t(t * rows + r)], 0, 'g', 9)));
            QVERIFY2(
                std::fabs(got - unquantized) <= roundingError + 2e-5 * magnitude + sTerm + 1e-30,
                qPrintable(where + QString(": %1 vs unquantized %2 (bound %3)")
                                       .arg(got, 0, 'g', 9)
                                       .arg(unquantized, 0, 'g', 9)
                                       .arg(roundingError)));
          }
        }
      }
    }
  }

  // A zero activation row gives exactly zero for every type and level.
  void zeroActivations() {
    for (GgmlType type : test::supportedTypes())
      for (SimdLevel level : test::supportedLevels()) {
        const int64_t cols = test::blockSizeOf(type) == 256 ? 512 : 64;
        const auto w = test::randomMatrix(type, 9, cols, 3);
        const auto* k = cpu::quant::kernelsFor(type, level);
        size_t stride;
        const auto xq = prepare(*k, std::vector<float>(size_t(cols), 0.0f), cols, 1, &stride);
        for (float v : runDot(*k, w.view, xq, stride, 1)) QCOMPARE(v, 0.0f);
      }
  }
};

QTEST_APPLESS_MAIN(TestCpuDot)
#include "test_cpu_dot.moc"
