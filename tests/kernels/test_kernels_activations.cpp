// The CUDA element-wise kernels (kernels/activations.cu) against the CPU backend's ops
// (engine/backend/cpu/ops/activations.h) or, where the CPU backend has no op of its own, the
// definition written out on the host. Tolerances (|gpu - ref| <= atol + rtol * |ref|):
//  - SwiGLU vs ops::siluGluRow: atol 1e-6, rtol 1e-5 (CUDA expf vs the CPU's polynomial exp);
//  - GeGLU vs ops::geluTanh(g) * u (the CPU's fp32 formula): atol 1e-6, rtol 1e-5 (tanhf ulps);
//  - GeGLU vs ops::geluTanhGluRow (the CPU's fp16 table, as llama.cpp): |diff| <= 1e-5 +
//    2e-3 * |g * u| (fp16 rounding of g and of gelu(g), each at most 2^-11 relative);
//  - softcap vs ops::softcap: atol 1e-6 * cap, rtol 1e-5;
//  - addBias, addInPlace, gatherRows, scaleInPlace: exact (one IEEE add or multiply, or a copy;
//    scaleInPlace against the CPU layer's x *= factor in float).
// weightRowBytes is checked against the CPU backend's block layouts (quant/block_formats.h).
#include <QtTest>

#include <cmath>
#include <random>
#include <vector>

#include "backend/cpu/ops/activations.h"
#include "backend/cpu/quant/block_formats.h"
#include "ember/kernels/kernels.h"
#include "kernels/kernel_test_support.h"

using ember::kernels::test::DeviceBuffer;
using ember::kernels::test::mismatch;
using ember::kernels::test::randomVector;
namespace ops = ember::cpu::ops;
namespace quant = ember::cpu::quant;
namespace kernels = ember::kernels;

namespace {



void addSizes() {
  QTest::addColumn<int>("count");
  for (int n : {19, 64, 111, 128, 989, 4096, 3 * 8192 + 5}) QTest::newRow(qPrintable(QString::number(n))) << n;
}

}  // namespace

class TestKernelsActivations : public QObject {
  Q_OBJECT

 private slots:
  void weightRowBytes() {
    // No device needed. Reference: the byte layouts of the CPU backend's blocks.
    using kernels::WeightType;
    QCOMPARE(kernels::weightRowBytes(WeightType::F32, 989), size_t(989 * 4));
    QCOMPARE(kernels::weightRowBytes(WeightType::F16, 111), size_t(222));
    QCOMPARE(kernels::weightRowBytes(WeightType::BF16, 64), size_t(128));
    QCOMPARE(kernels::weightRowBytes(WeightType::Q4_0, 4096), 128 * sizeof(quant::BlockQ4_0));
    QCOMPARE(kernels::weightRowBytes(WeightType::Q4_1, 576), 18 * sizeof(quant::BlockQ4_1));
    QCOMPARE(kernels::weightRowBytes(WeightType::Q5_0, 640), 20 * sizeof(quant::BlockQ5_0));
    QCOMPARE(kernels::weightRowBytes(WeightType::Q5_1, 64), 2 * sizeof(quant::BlockQ5_1));
    QCOMPARE(kernels::weightRowBytes(WeightType::Q8_0, 1536), 48 * sizeof(quant::BlockQ8_0));
    QCOMPARE(kernels::weightRowBytes(WeightType::Q4_K, 4096), 16 * sizeof(quant::BlockQ4_K));
    QCOMPARE(kernels::weightRowBytes(WeightType::Q5_K, 2048), 8 * sizeof(quant::BlockQ5_K));
    QCOMPARE(kernels::weightRowBytes(WeightType::Q6_K, 14336), 56 * sizeof(quant::BlockQ6_K));
    QCOMPARE(kernels::weightRowBytes(WeightType::Q4_K, 100), size_t(0));  // not whole blocks
    QVERIFY(kernels::isSupportedWeightType(WeightType::Q6_K));
    QVERIFY(!kernels::isSupportedWeightType(WeightType(10)));  // Q2_K: not supported
  }

  void invalidArgumentsAreRejected() {
    float dummy = 0.f;
    QCOMPARE(kernels::gatedActivation(&dummy, &dummy, -1, false, &dummy, nullptr),
             cudaErrorInvalidValue);
    QCOMPARE(kernels::gatedActivation(nullptr, nullptr, 0, false, nullptr, nullptr), cudaSuccess);
    QCOMPARE(kernels::addBias(&dummy, &dummy, 1, 0, nullptr), cudaErrorInvalidValue);
    QCOMPARE(kernels::softcap(&dummy, 1, 0.f, nullptr), cudaErrorInvalidValue);
    QCOMPARE(kernels::scaleInPlace(&dummy, -1, 2.f, nullptr), cudaErrorInvalidValue);
    QCOMPARE(kernels::scaleInPlace(nullptr, 3, 2.f, nullptr), cudaErrorInvalidValue);
    QCOMPARE(kernels::gatherRows(nullptr, nullptr, 2, 8, nullptr, nullptr),
             cudaErrorInvalidValue);
  }

  void swiGlu_data() { addSizes(); }
  void swiGlu() {
    EMBER_REQUIRE_CUDA_DEVICE();
    QFETCH(int, count);
    const std::vector<float> gate = randomVector(size_t(count), -20.f, 20.f, 71u + count);
    const std::vector<float> up = randomVector(size_t(count), -2.f, 2.f, 72u + count);
    std::vector<float> want(gate.size());
    ops::siluGluRow(gate.data(), up.data(), want.data(), count);  // reference

    DeviceBuffer<float> dg(gate), du(up), dout(gate.size());
    QVERIFY(dg.ok() && du.ok() && dout.ok());
    EMBER_CHECK_CUDA(kernels::gatedActivation(dg.get(), du.get(), count, false, dout.get(), nullptr));
    EMBER_CHECK_CUDA(cudaDeviceSynchronize());
    const QString bad = mismatch(dout.download(), want, 1e-6, 1e-5);
    QVERIFY2(bad.isEmpty(), qPrintable(bad));
  }

  void geGlu_data() { addSizes(); }
  void geGlu() {
    EMBER_REQUIRE_CUDA_DEVICE();
    QFETCH(int, count);
    const std::vector<float> gate = randomVector(size_t(count), -12.f, 12.f, 81u + count);
    const std::vector<float> up = randomVector(size_t(count), -2.f, 2.f, 82u + count);
    DeviceBuffer<float> dg(gate), du(up);
    QVERIFY(dg.ok() && du.ok());
    // In place over the gate, as the backend may call it.
    EMBER_CHECK_CUDA(kernels::gatedActivation(dg.get(), du.get(), count, true, dg.get(), nullptr));
    EMBER_CHECK_CUDA(cudaDeviceSynchronize());
    const std::vector<float> got = dg.download();

    // Reference 1: the CPU's fp32 formula, ops::geluTanh(g) * u.
    std::vector<float> formula(gate.size());
    for (size_t i = 0; i < gate.size(); ++i) formula[i] = ops::geluTanh(gate[i]) * up[i];
    const QString bad = mismatch(got, formula, 1e-6, 1e-5);
    QVERIFY2(bad.isEmpty(), qPrintable(bad));

    // Reference 2: the CPU backend's fp16-table GeGLU (llama.cpp's), within its fp16 rounding.
    std::vector<float> table(gate.size());
    ops::geluTanhGluRow(gate.data(), up.data(), table.data(), count);
    for (size_t i = 0; i < gate.size(); ++i) {
      const double bound = 1e-5 + 2e-3 * std::fabs(double(gate[i]) * up[i]);
      QVERIFY2(std::fabs(double(got[i]) - table[i]) <= bound,
               qPrintable(QStringLiteral("element %1: g %2, gpu %3, cpu table %4")
                              .arg(i).arg(gate[i]).arg(got[i]).arg(table[i])));
    }
  }

  void softcap_data() { addSizes(); }
  void softcap() {
    EMBER_REQUIRE_CUDA_DEVICE();
    QFETCH(int, count);
    const float cap = 30.f;  // Gemma 2's final logit cap
    const std::vector<float> x = randomVector(size_t(count), -100.f, 100.f, 91u + count);
    std::vector<float> want = x;
    ops::softcap(want.data(), count, cap);  // reference
    DeviceBuffer<float> dx(x);
    QVERIFY(dx.ok());
    EMBER_CHECK_CUDA(kernels::softcap(dx.get(), count, cap, nullptr));
    EMBER_CHECK_CUDA(cudaDeviceSynchronize());
    const QString bad = mismatch(dx.download(), want, 1e-6 * cap, 1e-5);
    QVERIFY2(bad.isEmpty(), qPrintable(bad));
  }

  void scaleInPlace_data() { addSizes(); }
  void scaleInPlace() {
    EMBER_REQUIRE_CUDA_DEVICE();
    QFETCH(int, count);
    const float factor = 0.22f;  // a Granite residual multiplier
    const std::vector<float> x = randomVector(size_t(count), -50.f, 50.f, 95u + count);
    std::vector<float> want = x;
    for (float& v : want) v *= factor;  // reference: CpuLayerOps::scale
    DeviceBuffer<float> dx(x);
    QVERIFY(dx.ok());
    EMBER_CHECK_CUDA(kernels::scaleInPlace(dx.get(), count, factor, nullptr));
    EMBER_CHECK_CUDA(cudaDeviceSynchronize());
    const QString bad = mismatch(dx.download(), want, 0.0, 0.0);
    QVERIFY2(bad.isEmpty(), qPrintable(bad));
  }

  void addBiasAndInPlace_data() {
    QTest::addColumn<int>("rows");
    QTest::addColumn<int>("width");
    QTest::newRow("1x19") << 1 << 19;
    QTest::newRow("7x111") << 7 << 111;
    QTest::newRow("3x989") << 3 << 989;
    QTest::newRow("64x128") << 64 << 128;
    QTest::newRow("2x4096") << 2 << 4096;
  }
  void addBiasAndInPlace() {
    EMBER_REQUIRE_CUDA_DEVICE();
    QFETCH(int, rows);
    QFETCH(int, width);
    const size_t n = size_t(rows) * width;
    const std::vector<float> y = randomVector(n, -5.f, 5.f, 101u + width);
    const std::vector<float> x = randomVector(n, -5.f, 5.f, 102u + width);
    const std::vector<float> bias = randomVector(size_t(width), -1.f, 1.f, 103u + width);
    // Reference: the definitions, y + bias[column] then + x, one float add each.
    std::vector<float> withBias(n), withBoth(n);
    for (size_t i = 0; i < n; ++i) {
      withBias[i] = y[i] + bias[i % size_t(width)];
      withBoth[i] = withBias[i] + x[i];
    }
    DeviceBuffer<float> dy(y), dx(x), db(bias);
    QVERIFY(dy.ok() && dx.ok() && db.ok());
    EMBER_CHECK_CUDA(kernels::addBias(dy.get(), db.get(), rows, width, nullptr));
    EMBER_CHECK_CUDA(cudaDeviceSynchronize());
    QVERIFY(dy.download() == withBias);
    EMBER_CHECK_CUDA(kernels::addInPlace(dy.get(), dx.get(), int64_t(n), nullptr));
    EMBER_CHECK_CUDA(cudaDeviceSynchronize());
    QVERIFY(dy.download() == withBoth);
  }

  void gatherRows_data() {
    QTest::addColumn<int>("rows");
    QTest::addColumn<int>("width");
    QTest::newRow("19 of 19 x 111") << 19 << 111;
    QTest::newRow("5 of 64 x 989") << 64 << 989;
    QTest::newRow("3 of 7 x 49152 (vocab)") << 7 << 49152;
  }
  void gatherRows() {
    EMBER_REQUIRE_CUDA_DEVICE();
    QFETCH(int, rows);
    QFETCH(int, width);
    const std::vector<float> x = randomVector(size_t(rows) * width, -9.f, 9.f, 111u + width);
    // Picks: the last row, the first, one from the middle, then a repeat of the last.
    std::vector<int32_t> picks{rows - 1, 0, rows / 2, rows - 1};
    if (rows > 10) picks.push_back(7);
    std::vector<float> want;  // reference: the rows copied on the host
    for (int32_t r : picks)
      want.insert(want.end(), x.begin() + long(r) * width, x.begin() + long(r + 1) * width);
    DeviceBuffer<float> dx(x), dout(want.size());
    DeviceBuffer<int32_t> dpicks(picks);
    QVERIFY(dx.ok() && dout.ok() && dpicks.ok());
    EMBER_CHECK_CUDA(kernels::gatherRows(dx.get(), dpicks.get(), int32_t(picks.size()), width,
                                         dout.get(), nullptr));
    EMBER_CHECK_CUDA(cudaDeviceSynchronize());
    QVERIFY(dout.download() == want);
  }
};

QTEST_APPLESS_MAIN(TestKernelsActivations)
#include "test_kernels_activations.moc"
