// The CUDA RMSNorm and RoPE kernels against the CPU backend's ops (engine/backend/cpu/ops/norm.h,
// rope.h), on awkward and round sizes. Tolerances (|gpu - cpu| <= atol + rtol * |cpu|):
//  - rmsNorm / addRmsNorm / rmsNormHeads: atol 1e-6, rtol 2e-6 (same operations; only the order
//    of the double sum of squares differs), the residual of addRmsNorm exactly;
//  - rope: atol 1e-6, rtol 1e-5 (the angles are formed bit for bit as on the CPU; only CUDA's
//    cosf/sinf differ from the C library's by an ulp or two), YaRN and attn_factor included.
// Without a CUDA device the GPU test functions skip with the reason; argument validation runs
// everywhere (the launchers reject bad sizes before touching the device).
#include <QtTest>

#include <cmath>
#include <random>
#include <vector>

#include "backend/cpu/ops/norm.h"
#include "backend/cpu/ops/rope.h"
#include "ember/kernels/kernels.h"
#include "model/model_config.h"
#include "kernels/kernel_test_support.h"

using ember::kernels::test::DeviceBuffer;
using ember::kernels::test::mismatch;
using ember::kernels::test::randomVector;
namespace ops = ember::cpu::ops;
namespace kernels = ember::kernels;

namespace {



constexpr double kNormAtol = 1e-6, kNormRtol = 2e-6;
constexpr double kRopeAtol = 1e-6, kRopeRtol = 1e-5;

}  // namespace

class TestKernelsNormRope : public QObject {
  Q_OBJECT

 private slots:
  void invalidArgumentsAreRejected() {
    // No device needed: these return before any CUDA call.
    float dummy = 0.f;
    int32_t position = 0;
    QCOMPARE(kernels::rmsNorm(&dummy, &dummy, 1, 0, 1e-6f, &dummy, nullptr),
             cudaErrorInvalidValue);
    QCOMPARE(kernels::rmsNorm(&dummy, &dummy, -1, 8, 1e-6f, &dummy, nullptr),
             cudaErrorInvalidValue);
    QCOMPARE(kernels::rmsNorm(nullptr, &dummy, 0, 8, 1e-6f, nullptr, nullptr), cudaSuccess);
    QCOMPARE(kernels::addRmsNorm(nullptr, &dummy, &dummy, 2, 8, 1e-6f, &dummy, nullptr),
             cudaErrorInvalidValue);
    QCOMPARE(kernels::rmsNormHeads(&dummy, &dummy, 1, 0, 64, 1e-6f, nullptr),
             cudaErrorInvalidValue);
    kernels::RopeSettings odd;
    odd.headDim = 64;
    odd.ropeDims = 63;  // must be even
    QCOMPARE(kernels::rope(&dummy, 1, 1, &position, odd, nullptr), cudaErrorInvalidValue);
    kernels::RopeSettings tooWide;
    tooWide.headDim = 64;
    tooWide.ropeDims = 128;  // more than the head
    QCOMPARE(kernels::rope(&dummy, 1, 1, &position, tooWide, nullptr), cudaErrorInvalidValue);
  }

  void rmsNorm_data() {
    QTest::addColumn<int>("rows");
    QTest::addColumn<int>("width");
    QTest::newRow("1x19") << 1 << 19;
    QTest::newRow("3x64") << 3 << 64;
    QTest::newRow("7x111") << 7 << 111;
    QTest::newRow("2x128") << 2 << 128;
    QTest::newRow("5x989") << 5 << 989;
    QTest::newRow("4x4096") << 4 << 4096;
  }
  void rmsNorm() {
    EMBER_REQUIRE_CUDA_DEVICE();
    QFETCH(int, rows);
    QFETCH(int, width);
    const float eps = 1e-6f;
    const std::vector<float> x = randomVector(size_t(rows) * width, -3.f, 3.f, 11u + width);
    const std::vector<float> weight = randomVector(size_t(width), 0.5f, 1.5f, 12u + width);
    // Reference: ops::rmsNormRows.
    std::vector<float> want(x.size());
    ops::rmsNormRows(x.data(), weight.data(), rows, width, width, eps, want.data());

    DeviceBuffer<float> dx(x), dw(weight), dy(x.size());
    QVERIFY(dx.ok() && dw.ok() && dy.ok());
    EMBER_CHECK_CUDA(kernels::rmsNorm(dx.get(), dw.get(), rows, width, eps, dy.get(), nullptr));
    EMBER_CHECK_CUDA(cudaDeviceSynchronize());
    const QString bad = mismatch(dy.download(), want, kNormAtol, kNormRtol);
    QVERIFY2(bad.isEmpty(), qPrintable(bad));

    // In place (y aliasing x), as the CPU op allows.
    EMBER_CHECK_CUDA(kernels::rmsNorm(dx.get(), dw.get(), rows, width, eps, dx.get(), nullptr));
    EMBER_CHECK_CUDA(cudaDeviceSynchronize());
    const QString badInPlace = mismatch(dx.download(), want, kNormAtol, kNormRtol);
    QVERIFY2(badInPlace.isEmpty(), qPrintable(badInPlace));
  }

  void addRmsNorm_data() { rmsNorm_data(); }
  void addRmsNorm() {
    EMBER_REQUIRE_CUDA_DEVICE();
    QFETCH(int, rows);
    QFETCH(int, width);
    const float eps = 1e-5f;
    const size_t n = size_t(rows) * width;
    const std::vector<float> residual = randomVector(n, -2.f, 2.f, 21u + width);
    const std::vector<float> delta = randomVector(n, -1.f, 1.f, 22u + width);
    const std::vector<float> weight = randomVector(size_t(width), -1.5f, 1.5f, 23u + width);
    // Reference: the CPU backend's hidden += blockOut, then ops::rmsNormRows.
    std::vector<float> wantResidual(n), wantNormed(n);
    for (size_t i = 0; i < n; ++i) wantResidual[i] = residual[i] + delta[i];
    ops::rmsNormRows(wantResidual.data(), weight.data(), rows, width, width, eps,
                     wantNormed.data());

    DeviceBuffer<float> dr(residual), dd(delta), dw(weight), dn(n);
    QVERIFY(dr.ok() && dd.ok() && dw.ok() && dn.ok());
    EMBER_CHECK_CUDA(kernels::addRmsNorm(dr.get(), dd.get(), dw.get(), rows, width, eps,
                                         dn.get(), nullptr));
    EMBER_CHECK_CUDA(cudaDeviceSynchronize());
    const QString badResidual = mismatch(dr.download(), wantResidual, 0.0, 0.0);
    QVERIFY2(badResidual.isEmpty(), qPrintable(badResidual));
    const QString badNormed = mismatch(dn.download(), wantNormed, kNormAtol, kNormRtol);
    QVERIFY2(badNormed.isEmpty(), qPrintable(badNormed));
  }

  void rmsNormHeads_data() {
    QTest::addColumn<int>("rows");
    QTest::addColumn<int>("heads");
    QTest::addColumn<int>("headDim");
    QTest::newRow("19 tokens, 3x64") << 19 << 3 << 64;
    QTest::newRow("1 token, 8x128") << 1 << 8 << 128;
    QTest::newRow("7 tokens, 4x256") << 7 << 4 << 256;
    QTest::newRow("5 tokens, 9x19") << 5 << 9 << 19;
    QTest::newRow("111 tokens, 1x111") << 111 << 1 << 111;
  }
  void rmsNormHeads() {
    EMBER_REQUIRE_CUDA_DEVICE();
    QFETCH(int, rows);
    QFETCH(int, heads);
    QFETCH(int, headDim);
    const float eps = 1e-6f;
    const size_t n = size_t(rows) * heads * headDim;
    const std::vector<float> x = randomVector(n, -4.f, 4.f, 31u + headDim);
    const std::vector<float> weight = randomVector(size_t(headDim), 0.f, 2.f, 32u + headDim);
    // Reference: the CPU backend's QK-norm, ops::rmsNormRows over each head.
    std::vector<float> want(n);
    ops::rmsNormRows(x.data(), weight.data(), int64_t(rows) * heads, headDim, headDim, eps,
                     want.data());

    DeviceBuffer<float> dx(x), dw(weight);
    QVERIFY(dx.ok() && dw.ok());
    EMBER_CHECK_CUDA(kernels::rmsNormHeads(dx.get(), dw.get(), rows, heads, headDim, eps, nullptr));
    EMBER_CHECK_CUDA(cudaDeviceSynchronize());
    const QString bad = mismatch(dx.download(), want, kNormAtol, kNormRtol);
    QVERIFY2(bad.isEmpty(), qPrintable(bad));
  }

  void rope_data() {
    QTest::addColumn<int>("tokens");
    QTest::addColumn<int>("heads");
    QTest::addColumn<int>("headDim");
    QTest::addColumn<int>("ropeDims");
    QTest::addColumn<bool>("neox");
    QTest::addColumn<float>("freqBase");
    QTest::addColumn<float>("freqScale");
    QTest::addColumn<bool>("freqFactors");
    QTest::addColumn<float>("extFactor");   // YaRN blend (0: none)
    QTest::addColumn<float>("attnFactor");  // multiplies cos and sin
    QTest::newRow("normal 64, llama") << 19 << 9 << 64 << 64 << false << 10000.f << 1.f << false
                                      << 0.f << 1.f;
    QTest::newRow("neox 128, qwen2") << 7 << 14 << 128 << 128 << true << 1000000.f << 1.f
                                     << false << 0.f << 1.f;
    QTest::newRow("neox 256, gemma3") << 5 << 4 << 256 << 256 << true << 1000000.f << 0.125f
                                      << false << 0.f << 1.f;
    QTest::newRow("normal 128, rope_freqs (llama 3.1)") << 11 << 8 << 128 << 128 << false
                                                        << 500000.f << 1.f << true << 0.f << 1.f;
    QTest::newRow("partial: 64 of 128 rotated, neox") << 3 << 5 << 128 << 64 << true << 10000.f
                                                      << 1.f << true << 0.f << 1.f;
    QTest::newRow("partial: 10 of 18 rotated, normal") << 111 << 3 << 18 << 10 << false
                                                       << 10000.f << 0.5f << false << 0.f << 1.f;
    // YaRN as in a Qwen / Mistral 3 file (factor 4: freqScale 0.25, ext_factor 1), and the
    // magnitude alone (LongRoPE's attn_factor without a blend).
    QTest::newRow("neox 128, YaRN factor 4") << 23 << 4 << 128 << 128 << true << 1000000.f
                                             << 0.25f << false << 1.f << 1.f;
    QTest::newRow("normal 64, YaRN factor 8, attn_factor 0.9, rope_freqs")
        << 7 << 3 << 64 << 64 << false << 10000.f << 0.125f << true << 1.f << 0.9f;
    QTest::newRow("neox 96 of 96, attn_factor 1.19 only") << 5 << 2 << 96 << 96 << true
                                                          << 10000.f << 1.f << true << 0.f
                                                          << 1.19f;
  }
  void rope() {
    EMBER_REQUIRE_CUDA_DEVICE();
    QFETCH(int, tokens);
    QFETCH(int, heads);
    QFETCH(int, headDim);
    QFETCH(int, ropeDims);
    QFETCH(bool, neox);
    QFETCH(float, freqBase);
    QFETCH(float, freqScale);
    QFETCH(bool, freqFactors);
    QFETCH(float, extFactor);
    QFETCH(float, attnFactor);
    const size_t n = size_t(tokens) * heads * headDim;
    const std::vector<float> x = randomVector(n, -1.f, 1.f, 41u + headDim);
    const std::vector<float> factors =
        freqFactors ? randomVector(size_t(ropeDims / 2), 1.f, 8.f, 42u) : std::vector<float>{};
    // Positions from 0 up to long contexts, out of order (each token independent).
    std::vector<int32_t> positions(static_cast<size_t>(tokens));
    std::mt19937 rng(43u + tokens);
    for (int32_t t = 0; t < tokens; ++t)
      positions[size_t(t)] = t == 0 ? 0 : int32_t(rng() % 3001);

    // Reference: ops::ropeAngles + ops::applyRope per token.
    ops::RopeParams params;
    params.dims = ropeDims;
    params.freqBase = freqBase;
    params.freqScale = freqScale;
    params.freqFactors = freqFactors ? factors.data() : nullptr;
    params.style = neox ? ember::model::RopeStyle::Neox : ember::model::RopeStyle::Normal;
    params.extFactor = extFactor;
    params.attnFactor = attnFactor;
    if (extFactor != 0.f)  // original context 4096, llama.cpp's default betas 32 and 1
      ember::model::yarnCorrectionDims(ropeDims, 4096, freqBase, 32.f, 1.f, params.corrDims);
    std::vector<float> want = x;
    std::vector<float> cosSin(static_cast<size_t>(ropeDims));
    for (int32_t t = 0; t < tokens; ++t) {
      ops::ropeAngles(params, positions[size_t(t)], cosSin.data());
      ops::applyRope(params, cosSin.data(), want.data() + size_t(t) * heads * headDim, heads,
                     headDim);
    }

    DeviceBuffer<float> dx(x);
    DeviceBuffer<int32_t> dpos(positions);
    DeviceBuffer<float> dfactors(factors);
    QVERIFY(dx.ok() && dpos.ok() && dfactors.ok());
    kernels::RopeSettings settings;
    settings.headDim = headDim;
    settings.ropeDims = ropeDims;
    settings.freqBase = freqBase;
    settings.freqScale = freqScale;
    settings.freqFactors = freqFactors ? dfactors.get() : nullptr;
    settings.neox = neox;
    settings.extFactor = extFactor;
    settings.attnFactor = attnFactor;
    settings.corrDims[0] = params.corrDims[0];
    settings.corrDims[1] = params.corrDims[1];
    EMBER_CHECK_CUDA(kernels::rope(dx.get(), tokens, heads, dpos.get(), settings, nullptr));
    EMBER_CHECK_CUDA(cudaDeviceSynchronize());
    const std::vector<float> got = dx.download();
    const QString bad = mismatch(got, want, kRopeAtol, kRopeRtol);
    QVERIFY2(bad.isEmpty(), qPrintable(bad));
    // The dims past ropeDims pass through untouched.
    for (size_t row = 0; row < size_t(tokens) * heads; ++row)
      for (int32_t d = ropeDims; d < headDim; ++d)
        QCOMPARE(got[row * headDim + size_t(d)], x[row * headDim + size_t(d)]);
  }
};

QTEST_APPLESS_MAIN(TestKernelsNormRope)
#include "test_kernels_norm_rope.moc"
