// The mixture-of-experts kernels (kernels/experts.cu) against the CPU backend's code:
//  - swigluOai against cpu::ops::swigluOaiRow (gpt-oss's clamped SwiGLU, llama.cpp's alpha 1.702
//    and limit 7), over inputs from -20 to 20 so that both clamps bite: within 2 ulp-scale
//    (rtol 1e-6, atol 1e-6: expf against std::exp), in place as the backend calls it;
//  - combineExperts against the weighted sum of cpu_expert_ffn.cpp written out here (each product
//    rounded to float, added in rank order): bit for bit;
//  - MXFP4 (the type of the published gpt-oss files' experts): dequantizeToHalf bit for bit against
//    the CPU's dequantizer (cpu::dequantizeRow, itself checked against ggml's definition in
//    test_cpu_expert_ffn) rounded to fp16, and quantMatVec against a double dot product of the
//    CPU's dequantized rows (rtol 1e-5: fp32 accumulation in another order); random code bytes,
//    scales from 2^-10 to 2^5 and the subnormal scales e = 0 and 1, 19 blocks per row so that
//    rows start at odd byte addresses;
//  - argument checks without a device.
// Without a CUDA device the device rows skip with the reason.
#include <QtTest>

#include <algorithm>
#include <cstring>
#include <numeric>
#include <random>
#include <vector>

#include "backend/cpu/matmul.h"
#include "backend/cpu/ops/activations.h"
#include "backend/cpu/ops/half.h"
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

  void mxfp4RowsAreAccepted() {  // no device needed
    QVERIFY(kernels::isSupportedWeightType(kernels::WeightType::MXFP4));
    QCOMPARE(kernels::weightRowBytes(kernels::WeightType::MXFP4, 64), size_t(34));
    QCOMPARE(kernels::weightRowBytes(kernels::WeightType::MXFP4, 48), size_t(0));  // not whole blocks
  }

  void mxfp4MatchesTheCpu() {
    EMBER_REQUIRE_CUDA_DEVICE();
    constexpr int32_t kRows = 23, kCols = 32 * 19, kBatch = 3;
    constexpr size_t kRowBytes = size_t(kCols / 32) * 17;
    std::mt19937 rng(11);
    std::vector<uint8_t> bytes(kRowBytes * kRows);
    for (size_t b = 0; b < bytes.size() / 17; ++b) {
      bytes[b * 17] = b % 23 == 0 ? uint8_t(b % 2) : uint8_t(118 + rng() % 16);  // e
      for (int i = 1; i < 17; ++i) bytes[b * 17 + size_t(i)] = uint8_t(rng());
    }
    ember::cpu::WeightMatrix w;
    w.type = ember::gguf::GgmlType::MXFP4;
    w.rows = kRows;
    w.cols = kCols;
    w.rowBytes = kRowBytes;
    w.data = bytes.data();
    std::vector<float> reference(size_t(kRows) * kCols);
    for (int32_t r = 0; r < kRows; ++r) ember::cpu::dequantizeRow(w, r, reference.data() + size_t(r) * kCols);

    DeviceBuffer<uint8_t> dweight(bytes);
    DeviceBuffer<__half> dhalf(reference.size());
    QVERIFY(dweight.ok() && dhalf.ok());
    EMBER_CHECK_CUDA(kernels::dequantizeToHalf(kernels::WeightType::MXFP4, dweight.get(), kRows,
                                               kCols, dhalf.get(), nullptr));
    EMBER_CHECK_CUDA(cudaDeviceSynchronize());
    const std::vector<__half> half = dhalf.download();
    for (size_t i = 0; i < half.size(); ++i) {
      uint16_t got;
      std::memcpy(&got, &half[i], 2);
      if (got != ember::cpu::ops::floatToHalf(reference[i]))
        QFAIL(qPrintable(QString("element %1: 0x%2 for %3").arg(i).arg(got, 4, 16, QChar('0')).arg(reference[i])));
    }

    const std::vector<float> x = randomVector(size_t(kBatch) * kCols, -1.f, 1.f, 12);
    std::vector<float> want(size_t(kBatch) * kRows);
    for (int32_t b = 0; b < kBatch; ++b)
      for (int32_t r = 0; r < kRows; ++r) {
        double dot = 0;
        for (int32_t c = 0; c < kCols; ++c)
          dot += double(reference[size_t(r) * kCols + size_t(c)]) * x[size_t(b) * kCols + size_t(c)];
        want[size_t(b) * kRows + size_t(r)] = float(dot);
      }
    DeviceBuffer<float> dx(x), dy(want.size());
    QVERIFY(dx.ok() && dy.ok());
    EMBER_CHECK_CUDA(kernels::quantMatVec(kernels::WeightType::MXFP4, dweight.get(), kRows, kCols,
                                          dx.get(), kBatch, dy.get(), nullptr));
    EMBER_CHECK_CUDA(cudaDeviceSynchronize());
    const QString bad = mismatch(dy.download(), want, 1e-4, 1e-5);
    QVERIFY2(bad.isEmpty(), qPrintable(bad));
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
