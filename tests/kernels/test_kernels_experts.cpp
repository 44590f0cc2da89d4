// The mixture-of-experts kernels (kernels/experts.cu) against the CPU backend's code:
//  - swigluOai against cpu::ops::swigluOaiRow (gpt-oss's clamped SwiGLU, llama.cpp's alpha 1.702
//    and limit 7), over inputs from -20 to 20 so that both clamps bite: within 2 ulp-scale
//    (rtol 1e-6, atol 1e-6: expf against std::exp), in place as the backend calls it;
//  - combineExperts against the weighted sum of cpu_expert_ffn.cpp written out here (each product
//    rounded to float, added in rank order): bit for bit;
//  - argument checks without a device.
// Without a CUDA device the device rows skip with the reason.
#include <QtTest>

#include <algorithm>
#include <numeric>
#include <random>
#include <vector>

#include "backend/cpu/ops/activations.h"
#include "ember/kernels/kernels.h"
#include "kernels/kernel_test_support.h"

using ember::kernels::test::DeviceBuffer;
using ember::kernels::test::mismatch;
using ember::kernels::test::randomVector;
namespace kernels = ember::kernels;

class TestKernelsExperts : public QObject {
  Q_OBJECT

 private slots:
  void invalidArgumentsAreRejected() {
    float dummy = 0.f;
    int32_t row = 0;
    QCOMPARE(kernels::swigluOai(nullptr, &dummy, 4, 1.702f, 7.f, &dummy, nullptr), cudaErrorInvalidValue);
    QCOMPARE(kernels::swigluOai(&dummy, &dummy, -1, 1.702f, 7.f, &dummy, nullptr), cudaErrorInvalidValue);
    QCOMPARE(kernels::swigluOai(nullptr, nullptr, 0, 1.702f, 7.f, nullptr, nullptr), cudaSuccess);
    QCOMPARE(kernels::combineExperts(&dummy, &row, &dummy, 1, 0, 4, &dummy, nullptr), cudaErrorInvalidValue);
    QCOMPARE(kernels::combineExperts(&dummy, nullptr, &dummy, 1, 2, 4, &dummy, nullptr), cudaErrorInvalidValue);
    QCOMPARE(kernels::combineExperts(nullptr, nullptr, nullptr, 0, 2, 4, nullptr, nullptr), cudaSuccess);
  }

  void swigluOaiMatchesTheCpu() {
    EMBER_REQUIRE_CUDA_DEVICE();
    constexpr size_t kCount = 100003;
    const std::vector<float> gate = randomVector(kCount, -20.f, 20.f, 3);
    const std::vector<float> up = randomVector(kCount, -20.f, 20.f, 4);
    std::vector<float> want(kCount);
    ember::cpu::ops::swigluOaiRow(gate.data(), up.data(), want.data(), int64_t(kCount));
    DeviceBuffer<float> dgate(gate), dup(up);
    QVERIFY(dgate.ok() && dup.ok());
    EMBER_CHECK_CUDA(kernels::swigluOai(dgate.get(), dup.get(), int64_t(kCount), 1.702f, 7.f,
                                        dgate.get(), nullptr));  // in place, as the backend
    EMBER_CHECK_CUDA(cudaDeviceSynchronize());
    const QString bad = mismatch(dgate.download(), want, 1e-6, 1e-6);
    QVERIFY2(bad.isEmpty(), qPrintable(bad));
  }

  void combineExpertsMatchesTheCpuSum() {
    EMBER_REQUIRE_CUDA_DEVICE();
    constexpr int32_t kTokens = 37, kUsed = 4, kWidth = 200, kPairs = kTokens * kUsed;
    const std::vector<float> outputs = randomVector(size_t(kPairs) * kWidth, -3.f, 3.f, 5);
    const std::vector<float> weights = randomVector(size_t(kPairs), 0.f, 1.f, 6);
    std::vector<int32_t> grouped(static_cast<size_t>(kPairs));
    std::iota(grouped.begin(), grouped.end(), 0);
    std::shuffle(grouped.begin(), grouped.end(), std::mt19937(7));
    std::vector<float> want(size_t(kTokens) * kWidth);
    for (int32_t t = 0; t < kTokens; ++t)
      for (int32_t i = 0; i < kWidth; ++i)
        for (int32_t r = 0; r < kUsed; ++r) {
          const float product = outputs[size_t(grouped[size_t(t * kUsed + r)]) * kWidth + size_t(i)] *
                                weights[size_t(t * kUsed + r)];
          float& y = want[size_t(t) * kWidth + size_t(i)];
          y = r == 0 ? product : y + product;
        }
    DeviceBuffer<float> dout(outputs), dweights(weights), dy(want.size());
    DeviceBuffer<int32_t> dgrouped(grouped);
    QVERIFY(dout.ok() && dweights.ok() && dy.ok() && dgrouped.ok());
    EMBER_CHECK_CUDA(kernels::combineExperts(dout.get(), dgrouped.get(), dweights.get(), kTokens,
                                             kUsed, kWidth, dy.get(), nullptr));
    EMBER_CHECK_CUDA(cudaDeviceSynchronize());
    QVERIFY(dy.download() == want);
  }
};

QTEST_APPLESS_MAIN(TestKernelsExperts)
#include "test_kernels_experts.moc"
