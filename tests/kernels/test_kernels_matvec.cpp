// quantMatVec (y (batch, rows) = x (batch, cols) W^T) for every weight type against the CPU:
// W is a random matrix of the type (random quant bytes with realistic F16 scales: every bit
// pattern occurs), dequantized by the CPU backend's dequantize.cpp (bit-exact against PyPI
// gguf); the reference is the dot product with x in double precision.
// Tolerance: |y - ref| <= 1e-5 * sum_i |w_i x_i| + 1e-6 per output. The kernel accumulates in
// fp32 (exact integer quants, the scale applied per 8 values) along chains of at most a few
// dozen operations, so its error stays near 40 ulp of the absolute sum; 1e-5 leaves ~4x margin.
#include <QtTest>

#include <cmath>
#include <string>
#include <vector>

#include "kernel_test_support.h"
#include "quant_fixtures.h"

using namespace ember;
using namespace ember::kernels;
using namespace ember::kernels::test;
using gguf::GgmlType;

Q_DECLARE_METATYPE(GgmlType)

class TestKernelsMatVec : public QObject {
  Q_OBJECT

 private slots:
  // Rejected before anything touches the device, so this runs without a GPU too. The pointers
  // are never dereferenced (aligned stand-ins).
  void rejectsBadArguments() {
    alignas(16) static float dummy[64];
    const void* w = dummy;
    float* y = dummy;
    const float* x = dummy;
    QCOMPARE(quantMatVec(WeightType::Q4_0, w, 4, 48, x, 1, y, nullptr), cudaErrorInvalidValue);
    QCOMPARE(quantMatVec(WeightType::Q4_K, w, 4, 128, x, 1, y, nullptr), cudaErrorInvalidValue);
    QCOMPARE(quantMatVec(WeightType::F16, w, 4, 12, x, 1, y, nullptr), cudaErrorInvalidValue);
    QCOMPARE(quantMatVec(WeightType::Q8_0, w, 4, 64, x, 0, y, nullptr), cudaErrorInvalidValue);
    QCOMPARE(quantMatVec(WeightType::Q8_0, w, 4, 64, x, kMaxMatVecBatch + 1, y, nullptr),
             cudaErrorInvalidValue);
    QCOMPARE(quantMatVec(WeightType::Q8_0, w, -1, 64, x, 1, y, nullptr), cudaErrorInvalidValue);
    QCOMPARE(quantMatVec(WeightType(99), w, 4, 64, x, 1, y, nullptr), cudaErrorInvalidValue);
    QCOMPARE(quantMatVec(WeightType::Q8_0, nullptr, 4, 64, x, 1, y, nullptr),
             cudaErrorInvalidValue);
    // x must be 16-byte aligned (16-byte loads).
    QCOMPARE(quantMatVec(WeightType::Q8_0, w, 4, 64, dummy + 1, 1, y, nullptr),
             cudaErrorInvalidValue);
    // Zero rows: nothing to do, no launch.
    QCOMPARE(quantMatVec(WeightType::Q8_0, w, 0, 64, x, 1, y, nullptr), cudaSuccess);
  }

  void matchesCpu_data() {
    QTest::addColumn<GgmlType>("type");
    QTest::addColumn<int>("rows");
    QTest::addColumn<int>("cols");
    QTest::addColumn<int>("batch");
    struct Shape { int rows, blocks256, batch; };
    // cols in units of 256 (every type takes them); awkward row counts and every batch bucket.
    const Shape shapes[] = {{19, 1, 1}, {111, 2, 3}, {989, 17, 8}, {989, 16, 1},
                            {19, 16, 5}, {111, 17, 2}, {1, 2, 8}};
    for (GgmlType type : ember::test::supportedTypes()) {
      const std::string name = gguf::ggmlTypeName(type).data();
      for (const Shape& s : shapes) {
        const int cols = 256 * s.blocks256;
        QTest::newRow((name + " " + std::to_string(s.rows) + "x" + std::to_string(cols) + " b" +
                       std::to_string(s.batch)).c_str())
            << type << s.rows << cols << s.batch;
      }
      // Column counts that are not a multiple of 256: 19 blocks of 32 (rows of 2-byte
      // alignment for Q4_0/Q5_0/Q8_0), and 73 * 8 for the float types.
      const int64_t multiple = columnMultipleOf(type);
      if (multiple < 256) {
        const int cols = int(multiple == 8 ? 584 : 608);
        QTest::newRow((name + " 111x" + std::to_string(cols) + " b3").c_str())
            << type << 111 << cols << 3;
        QTest::newRow((name + " 19x" + std::to_string(cols) + " b8").c_str())
            << type << 19 << cols << 8;
      }
    }
  }

  void matchesCpu() {
    EMBER_REQUIRE_CUDA_DEVICE();
    QFETCH(GgmlType, type);
    QFETCH(int, rows);
    QFETCH(int, cols);
    QFETCH(int, batch);
    const auto matrix = ember::test::randomMatrix(type, rows, cols, uint32_t(rows * 7919 + cols));
    const std::vector<float> w = dequantizeOnCpu(matrix.view);
    const std::vector<float> x = ember::test::randomActivations(int64_t(batch) * cols, 1234u + batch);

    DeviceBuffer<uint8_t> dWeight(weightBytes(matrix));
    DeviceBuffer<float> dX(x);
    DeviceBuffer<float> dY(size_t(batch) * size_t(rows));
    QVERIFY(dWeight.ok() && dX.ok() && dY.ok());
    EMBER_CHECK_CUDA(
        quantMatVec(weightTypeOf(type), dWeight.get(), rows, cols, dX.get(), batch, dY.get(), 0));
    EMBER_CHECK_CUDA(cudaDeviceSynchronize());
    const std::vector<float> y = dY.download();

    for (int b = 0; b < batch; ++b) {
      for (int r = 0; r < rows; ++r) {
        double ref = 0.0, magnitude = 0.0;
        for (int c = 0; c < cols; ++c) {
          const double term = double(w[size_t(r) * cols + c]) * double(x[size_t(b) * cols + c]);
          ref += term;
          magnitude += std::fabs(term);
        }
        const double got = y[size_t(b) * rows + r];
        const double tolerance = 1e-5 * magnitude + 1e-6;
        if (!(std::fabs(got - ref) <= tolerance))
          QFAIL(qPrintable(QString("batch %1 row %2: got %3, reference %4 (tolerance %5)")
                               .arg(b).arg(r).arg(got, 0, 'g', 9).arg(ref, 0, 'g', 9)
                               .arg(tolerance, 0, 'g', 3)));
      }
    }
  }
};

QTEST_APPLESS_MAIN(TestKernelsMatVec)
#include "test_kernels_matvec.moc"
