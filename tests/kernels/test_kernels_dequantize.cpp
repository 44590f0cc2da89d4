// dequantizeToHalf, embedRows, floatToHalf and halfGemm against the CPU.
// - dequantizeToHalf: the CPU's dequantize.cpp (bit-exact against PyPI gguf) then
//   block_formats.h's floatToFp16 (round to nearest even, as numpy): identical bits required.
// - embedRows: CpuBackend::embedTokens' arithmetic (dequantizeRow, then * scale when the scale is
//   not 1): identical bits required; a negative id gives a zero row (the kernel's contract).
// - floatToHalf: floatToFp16, identical bits (incl. subnormals, overflow to infinity, signed 0).
// - halfGemm: a double-precision product of the same fp16 values; tolerance
//   1e-5 * sum_i |w_i x_i| + 1e-6 (fp16 products are exact in fp32; fp32 accumulation).
#include <QtTest>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "kernel_test_support.h"
#include "quant_fixtures.h"

using namespace ember;
using namespace ember::kernels;
using namespace ember::kernels::test;
using cpu::quant::floatToFp16;
using gguf::GgmlType;

Q_DECLARE_METATYPE(GgmlType)

namespace {

void addTypeRows() {
  QTest::addColumn<GgmlType>("type");
  for (GgmlType type : ember::test::supportedTypes())
    QTest::newRow(gguf::ggmlTypeName(type).data()) << type;
}

// Awkward shapes per type: 19 and 111 rows; 256 * 17 columns, and 19 blocks of 32 (2-byte
// aligned rows) or 73 * 8 for the types that allow it.
std::vector<std::pair<int, int>> shapesFor(GgmlType type) {
  std::vector<std::pair<int, int>> shapes = {{19, 256 * 17}, {111, 512}};
  const int64_t multiple = columnMultipleOf(type);
  if (multiple == 32) shapes.push_back({111, 608});
  if (multiple == 8) shapes.push_back({19, 584});
  return shapes;
}

uint16_t halfBits(__half h) {
  uint16_t u;
  std::memcpy(&u, &h, 2);
  return u;
}

}  // namespace

class TestKernelsDequantize : public QObject {
  Q_OBJECT

 private slots:
  void rejectsBadArguments() {  // runs without a GPU: rejected before any CUDA call
    alignas(16) static uint8_t dummy[256];
    auto* half = reinterpret_cast<__half*>(dummy);
    QCOMPARE(dequantizeToHalf(WeightType::Q4_K, dummy, 2, 128, half, nullptr),
             cudaErrorInvalidValue);
    QCOMPARE(dequantizeToHalf(WeightType::Q4_0, dummy, -1, 32, half, nullptr),
             cudaErrorInvalidValue);
    QCOMPARE(dequantizeToHalf(WeightType::Q4_0, dummy, 2, 32, half + 1, nullptr),
             cudaErrorInvalidValue);  // dst must be 16-byte aligned
    QCOMPARE(dequantizeToHalf(WeightType::Q4_0, dummy, 0, 32, half, nullptr), cudaSuccess);
    const int32_t ids[1] = {0};
    auto* out = reinterpret_cast<float*>(dummy);
    QCOMPARE(embedRows(WeightType::Q8_0, dummy, 40, ids, 1, 1.f, out, nullptr),
             cudaErrorInvalidValue);
    QCOMPARE(embedRows(WeightType::Q8_0, dummy, 32, nullptr, 1, 1.f, out, nullptr),
             cudaErrorInvalidValue);
    QCOMPARE(floatToHalf(out, -1, half, nullptr), cudaErrorInvalidValue);
    QCOMPARE(floatToHalf(out, 0, half, nullptr), cudaSuccess);
  }

  void dequantizeToHalfIsBitExact_data() { addTypeRows(); }
  void dequantizeToHalfIsBitExact() {
    EMBER_REQUIRE_CUDA_DEVICE();
    QFETCH(GgmlType, type);
    for (const auto& [rows, cols] : shapesFor(type)) {
      const auto matrix = ember::test::randomMatrix(type, rows, cols, uint32_t(rows + cols));
      const std::vector<float> reference = dequantizeOnCpu(matrix.view);
      DeviceBuffer<uint8_t> dWeight(weightBytes(matrix));
      DeviceBuffer<__half> dOut(size_t(rows) * size_t(cols));
      QVERIFY(dWeight.ok() && dOut.ok());
      EMBER_CHECK_CUDA(
          dequantizeToHalf(weightTypeOf(type), dWeight.get(), rows, cols, dOut.get(), 0));
      EMBER_CHECK_CUDA(cudaDeviceSynchronize());
      const std::vector<__half> out = dOut.download();
      for (size_t i = 0; i < out.size(); ++i) {
        const uint16_t expected = floatToFp16(reference[i]);
        if (halfBits(out[i]) != expected)
          QFAIL(qPrintable(QString("%1x%2 element %3: got 0x%4, CPU 0x%5 (%6)")
                               .arg(rows).arg(cols).arg(i)
                               .arg(halfBits(out[i]), 4, 16, QChar('0'))
                               .arg(expected, 4, 16, QChar('0'))
                               .arg(double(reference[i]))));
      }
    }
  }

  void embedRowsIsBitExact_data() { addTypeRows(); }
  void embedRowsIsBitExact() {
    EMBER_REQUIRE_CUDA_DEVICE();
    QFETCH(GgmlType, type);
    const int vocab = 111;
    const int width = shapesFor(type).back().second;  // 512, 608 or 584 columns
    const auto table = ember::test::randomMatrix(type, vocab, width, 42u);
    const std::vector<float> rows = dequantizeOnCpu(table.view);
    const std::vector<int32_t> ids = {5, 0, 110, 5, 57, -1, 109};
    DeviceBuffer<uint8_t> dTable(weightBytes(table));
    DeviceBuffer<int32_t> dIds(ids);
    DeviceBuffer<float> dOut(ids.size() * size_t(width));
    QVERIFY(dTable.ok() && dIds.ok() && dOut.ok());
    for (const float scale : {1.0f, std::sqrt(640.0f)}) {  // 1, and Gemma's sqrt(width)
      EMBER_CHECK_CUDA(embedRows(weightTypeOf(type), dTable.get(), width, dIds.get(),
                                 int32_t(ids.size()), scale, dOut.get(), 0));
      EMBER_CHECK_CUDA(cudaDeviceSynchronize());
      const std::vector<float> out = dOut.download();
      for (size_t t = 0; t < ids.size(); ++t) {
        for (int i = 0; i < width; ++i) {
          float expected = 0.f;
          if (ids[t] >= 0) {
            expected = rows[size_t(ids[t]) * width + i];
            if (scale != 1.0f) expected *= scale;
          }
          const float got = out[t * width + size_t(i)];
          if (bitsOf(got) != bitsOf(expected))
            QFAIL(qPrintable(QString("scale %1 token %2 (id %3) element %4: got %5, CPU %6")
                                 .arg(double(scale)).arg(t).arg(ids[t]).arg(i)
                                 .arg(double(got), 0, 'g', 9).arg(double(expected), 0, 'g', 9)));
        }
      }
    }
  }

  void floatToHalfIsBitExact() {
    EMBER_REQUIRE_CUDA_DEVICE();
    std::mt19937 rng(7);
    std::normal_distribution<float> normal(0.f, 1.f);
    std::vector<float> x = {0.f, -0.f, 65504.f, 65519.f, 65520.f, -1e6f, 1e-8f, -3e-7f,
                            6.1e-5f, 5.96e-8f, 2.98e-8f, 1.0009766f, 1.00048828125f};
    for (int i = 0; i < 5000; ++i) x.push_back(normal(rng) * std::pow(10.f, float(i % 11) - 6.f));
    DeviceBuffer<float> dX(x);
    DeviceBuffer<__half> dOut(x.size());
    QVERIFY(dX.ok() && dOut.ok());
    EMBER_CHECK_CUDA(floatToHalf(dX.get(), int64_t(x.size()), dOut.get(), 0));
    EMBER_CHECK_CUDA(cudaDeviceSynchronize());
    const std::vector<__half> out = dOut.download();
    for (size_t i = 0; i < x.size(); ++i)
      QVERIFY2(halfBits(out[i]) == floatToFp16(x[i]),
               qPrintable(QString("x = %1").arg(double(x[i]), 0, 'g', 9)));
  }

  void halfGemmMatchesDouble_data() {
    QTest::addColumn<int>("rows");
    QTest::addColumn<int>("cols");
    QTest::addColumn<int>("tokens");
    QTest::newRow("111x256 t19") << 111 << 256 << 19;
    QTest::newRow("989x512 t37") << 989 << 512 << 37;
    QTest::newRow("19x4096 t1") << 19 << 4096 << 1;
    QTest::newRow("64x64 t64") << 64 << 64 << 64;
  }
  void halfGemmMatchesDouble() {
    EMBER_REQUIRE_CUDA_DEVICE();
    QFETCH(int, rows);
    QFETCH(int, cols);
    QFETCH(int, tokens);
    std::mt19937 rng(uint32_t(rows * 31 + tokens));
    std::normal_distribution<float> normal(0.f, 1.f);
    std::vector<__half> w(size_t(rows) * cols), x(size_t(tokens) * cols);
    for (__half& v : w) v = __float2half(normal(rng) * 0.1f);
    for (__half& v : x) v = __float2half(normal(rng));
    DeviceBuffer<__half> dW(w), dX(x);
    DeviceBuffer<float> dY(size_t(tokens) * rows);
    QVERIFY(dW.ok() && dX.ok() && dY.ok());
    cublasHandle_t handle = nullptr;
    QCOMPARE(cublasCreate(&handle), CUBLAS_STATUS_SUCCESS);
    const cublasStatus_t status = halfGemm(handle, dW.get(), rows, cols, dX.get(), tokens, dY.get());
    cudaDeviceSynchronize();
    cublasDestroy(handle);
    QCOMPARE(status, CUBLAS_STATUS_SUCCESS);
    const std::vector<float> y = dY.download();
    for (int t = 0; t < tokens; ++t) {
      for (int r = 0; r < rows; ++r) {
        double ref = 0.0, magnitude = 0.0;
        for (int c = 0; c < cols; ++c) {
          const double term = double(__half2float(w[size_t(r) * cols + c])) *
                              double(__half2float(x[size_t(t) * cols + c]));
          ref += term;
          magnitude += std::fabs(term);
        }
        const double got = y[size_t(t) * rows + r];
        if (!(std::fabs(got - ref) <= 1e-5 * magnitude + 1e-6))
          QFAIL(qPrintable(QString("token %1 row %2: got %3, reference %4")
                               .arg(t).arg(r).arg(got, 0, 'g', 9).arg(ref, 0, 'g', 9)));
      }
    }
  }
};

QTEST_APPLESS_MAIN(TestKernelsDequantize)
#include "test_kernels_dequantize.moc"
