// sampleTokens against hand-computed distributions and against the CPU sampler's own stages
// (engine/runtime/sampling/stages.h: applyTemperature, keepTopK, softmax, keepTopP, renormalize,
// drawToken with the same uniform). Token ids must match exactly.
#include <QtTest>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "ember/kernels/kernels.h"
#include "kernel_test_support.h"
#include "runtime/sampling/candidates.h"
#include "runtime/sampling/stages.h"

using namespace ember;
using namespace ember::kernels;
using namespace ember::kernels::test;

Q_DECLARE_METATYPE(std::vector<float>)

namespace {

// Runs sampleTokens on rows of `vocab` logits with one setting per row; ids back on the host.
std::vector<int32_t> sampleOnDevice(const std::vector<float>& logits, int32_t vocab,
                                    const std::vector<DeviceSampling>& settings, bool* ok) {
  const auto rows = int32_t(settings.size());
  DeviceBuffer<float> dLogits(logits);
  DeviceBuffer<DeviceSampling> dSettings(settings);
  DeviceBuffer<int32_t> dIds(settings.size());
  const size_t workspaceBytes = sampleWorkspaceBytes(rows, vocab);
  DeviceBuffer<uint8_t> dWorkspace(workspaceBytes);
  *ok = dLogits.ok() && dSettings.ok() && dIds.ok() && dWorkspace.ok() &&
        sampleTokens(dLogits.get(), rows, vocab, dSettings.get(), dIds.get(), dWorkspace.get(),
                     workspaceBytes, 0) == cudaSuccess &&
        cudaDeviceSynchronize() == cudaSuccess;
  return dIds.download();
}

// The CPU sampler's chain (penalties and min-p off) for one row.
int32_t sampleOnCpu(const float* logits, int32_t vocab, const DeviceSampling& s) {
  sampling::Candidates candidates;
  candidates.reset(std::span<const float>(logits, size_t(vocab)));
  if (s.temperature <= 0.f) return sampling::pickGreedy(candidates);
  sampling::applyTemperature(candidates, s.temperature);
  sampling::keepTopK(candidates, s.topK);
  sampling::softmax(candidates);
  sampling::keepTopP(candidates, s.topP);
  sampling::renormalize(candidates);
  return sampling::drawToken(candidates, double(s.uniform));
}

// How many tokens the CPU's top-k/top-p keep (to check a test row stays under the kernel's cap).
size_t cpuSurvivors(const float* logits, int32_t vocab, const DeviceSampling& s) {
  sampling::Candidates candidates;
  candidates.reset(std::span<const float>(logits, size_t(vocab)));
  sampling::applyTemperature(candidates, s.temperature);
  sampling::keepTopK(candidates, s.topK);
  sampling::softmax(candidates);
  sampling::keepTopP(candidates, s.topP);
  return candidates.items.size();
}

DeviceSampling setting(float temperature, int32_t topK, float topP, float uniform) {
  DeviceSampling s;
  s.temperature = temperature;
  s.topK = topK;
  s.topP = topP;
  s.uniform = uniform;
  return s;
}

}  // namespace

class TestKernelsSampling : public QObject {
  Q_OBJECT

 private slots:
  void rejectsBadArguments() {  // runs without a GPU: rejected before any CUDA call
    alignas(16) static float dummy[16];
    DeviceSampling* settings = reinterpret_cast<DeviceSampling*>(dummy);
    int32_t* ids = reinterpret_cast<int32_t*>(dummy);
    QCOMPARE(sampleTokens(dummy, 1, 0, settings, ids, nullptr, 0, nullptr), cudaErrorInvalidValue);
    QCOMPARE(sampleTokens(dummy, -1, 4, settings, ids, nullptr, 0, nullptr),
             cudaErrorInvalidValue);
    QCOMPARE(sampleTokens(nullptr, 1, 4, settings, ids, nullptr, 0, nullptr),
             cudaErrorInvalidValue);
    QCOMPARE(sampleTokens(dummy, 0, 4, settings, ids, nullptr, 0, nullptr), cudaSuccess);
  }

  // Logits by id {-1, 2, 0, 1}: in rank order id 1 (2), id 3 (1), id 2 (0), id 0 (-1).
  // T = 1: exp(l - 2) = 1, 0.367879, 0.135335, 0.049787 (ids 1, 3, 2, 0), sum 1.553001;
  // probabilities 0.643914, 0.236883, 0.087144, 0.032059; cumulative 0.643914, 0.880797,
  // 0.967941, 1.
  void handComputed_data() {
    QTest::addColumn<std::vector<float>>("logits");
    QTest::addColumn<float>("temperature");
    QTest::addColumn<int>("topK");
    QTest::addColumn<float>("topP");
    QTest::addColumn<float>("uniform");
    QTest::addColumn<int>("expected");
    const std::vector<float> l = {-1.f, 2.f, 0.f, 1.f};
    QTest::newRow("greedy") << l << 0.f << 0 << 1.f << 0.5f << 1;
    QTest::newRow("greedy ties: lowest id") << std::vector<float>{3, 5, 5, 1} << 0.f << 0 << 1.f
                                            << 0.f << 1;
    // top-p 0.9: 0.880797 < 0.9 <= 0.967941, so ids {1, 3, 2} stay (mass 0.967941). The draw
    // compares u * 0.967941 with the running sums 0.643914, 0.880797, 0.967941.
    QTest::newRow("top-p 0.9, u 0") << l << 1.f << 0 << 0.9f << 0.f << 1;
    QTest::newRow("top-p 0.9, u 0.66") << l << 1.f << 0 << 0.9f << 0.66f << 1;   // 0.638841
    QTest::newRow("top-p 0.9, u 0.67") << l << 1.f << 0 << 0.9f << 0.67f << 3;   // 0.648520
    QTest::newRow("top-p 0.9, u 0.95") << l << 1.f << 0 << 0.9f << 0.95f << 2;   // 0.919544
    QTest::newRow("top-p 0.9, u 0.999") << l << 1.f << 0 << 0.9f << 0.999f << 2; // 0.966973
    // top-p 0.5: the best token alone reaches 0.643914.
    QTest::newRow("top-p 0.5") << l << 1.f << 0 << 0.5f << 0.99f << 1;
    // top-k 2: ids {1, 3}, weights 1 and 0.367879 (sum 1.367879): u 0.70 -> 0.957515 < 1,
    // u 0.76 -> 1.039588 > 1.
    QTest::newRow("top-k 2, u 0.70") << l << 1.f << 2 << 1.f << 0.70f << 1;
    QTest::newRow("top-k 2, u 0.76") << l << 1.f << 2 << 1.f << 0.76f << 3;
    // top-k 3 then top-p 0.8 over the three kept (sum 1.503214): 0.665241, then 0.909969 >= 0.8,
    // so ids {1, 3}; u 0.5 -> 0.683940 (id 1), u 0.9 -> 1.231091 (id 3).
    QTest::newRow("top-k 3 top-p 0.8, u 0.5") << l << 1.f << 3 << 0.8f << 0.5f << 1;
    QTest::newRow("top-k 3 top-p 0.8, u 0.9") << l << 1.f << 3 << 0.8f << 0.9f << 3;
    // No cut, T = 2: the walk goes in id order over exp((l - 2) / 2) = 0.223130, 1, 0.367879,
    // 0.606531 (running 0.223130, 1.223130, 1.591009, 2.197540; u * 2.197540 below).
    QTest::newRow("T 2, u 0.05") << l << 2.f << 0 << 1.f << 0.05f << 0;  // 0.109877
    QTest::newRow("T 2, u 0.5") << l << 2.f << 0 << 1.f << 0.5f << 1;    // 1.098770
    QTest::newRow("T 2, u 0.7") << l << 2.f << 0 << 1.f << 0.7f << 2;    // 1.538278
    QTest::newRow("T 2, u 0.9") << l << 2.f << 0 << 1.f << 0.9f << 3;    // 1.977786
    // top-k above the vocabulary is no cut: id order, T = 1 running sums 0.049787, 1.049787, ..
    // u 0.02 -> 0.031060: id 0.
    QTest::newRow("top-k 10 > vocab") << l << 1.f << 10 << 1.f << 0.02f << 0;
    // Ties at the top-k threshold go to the lower ids: logits {1, 3, 3, 0}.
    QTest::newRow("top-k 1 tie") << std::vector<float>{1, 3, 3, 0} << 1.f << 1 << 1.f << 0.9f
                                 << 1;
    // top-k 2 keeps ids 1 and 2 with equal weight, in id order: u 0.49 -> id 1, 0.51 -> id 2.
    QTest::newRow("top-k 2 tie, u 0.49") << std::vector<float>{1, 3, 3, 0} << 1.f << 2 << 1.f
                                         << 0.49f << 1;
    QTest::newRow("top-k 2 tie, u 0.51") << std::vector<float>{1, 3, 3, 0} << 1.f << 2 << 1.f
                                         << 0.51f << 2;
  }
  void handComputed() {
    EMBER_REQUIRE_CUDA_DEVICE();
    QFETCH(std::vector<float>, logits);
    QFETCH(float, temperature);
    QFETCH(int, topK);
    QFETCH(float, topP);
    QFETCH(float, uniform);
    QFETCH(int, expected);
    const DeviceSampling s = setting(temperature, topK, topP, uniform);
    // The CPU chain agrees with the hand computation (guards the table itself).
    QCOMPARE(sampleOnCpu(logits.data(), int32_t(logits.size()), s), expected);
    bool ok = false;
    const std::vector<int32_t> ids = sampleOnDevice(logits, int32_t(logits.size()), {s}, &ok);
    QVERIFY(ok);
    QCOMPARE(ids[0], expected);
  }

  // Several rows in one call, each with its own settings, on vocabularies up to Gemma's 262144,
  // against the CPU chain. Row r's logits: normal(0, 2) with a raised head of 30 tokens (so the
  // nucleus stays below the kernel's 1024-candidate cap; checked) and the maximum duplicated at
  // a higher id (argmax ties).
  void matchesCpuChain_data() {
    QTest::addColumn<int>("vocab");
    QTest::newRow("7") << 7;
    QTest::newRow("1000") << 1000;
    QTest::newRow("49152 (SmolLM2)") << 49152;
    QTest::newRow("262144 (Gemma 3)") << 262144;
  }
  void matchesCpuChain() {
    EMBER_REQUIRE_CUDA_DEVICE();
    QFETCH(int, vocab);
    std::mt19937 rng{uint32_t(vocab)};
    std::normal_distribution<float> normal(0.f, 2.f);
    std::uniform_real_distribution<float> unit(0.f, 1.f);
    const std::vector<DeviceSampling> base = {
        setting(0.f, 0, 1.f, 0.f),        setting(0.8f, 40, 0.95f, 0.f),
        setting(1.f, 1, 1.f, 0.f),        setting(1.f, 0, 1.f, 0.f),
        setting(0.7f, 0, 0.9f, 0.f),      setting(1.5f, 1000, 1.f, 0.f),
        setting(1.2f, 200, 0.5f, 0.f),    setting(0.01f, 0, 0.99f, 0.f)};
    std::vector<DeviceSampling> settings;
    for (int repeat = 0; repeat < 4; ++repeat)
      for (DeviceSampling s : base) {
        s.uniform = unit(rng);
        settings.push_back(s);
      }
    const auto rows = settings.size();
    std::vector<float> logits(rows * size_t(vocab));
    for (size_t r = 0; r < rows; ++r) {
      float* row = logits.data() + r * size_t(vocab);
      for (int i = 0; i < vocab; ++i) row[i] = normal(rng);
      for (int i = 0; i < std::min(vocab, 30); ++i) row[size_t(rng()) % size_t(vocab)] += 12.f;
      const float* best = std::max_element(row, row + vocab);
      row[vocab - 1] = *best;  // a tie for the maximum (the lower id must win)
      if (settings[r].temperature > 0.f && (settings[r].topK == 0 || settings[r].topK > 1024) &&
          settings[r].topP < 1.f)
        QVERIFY2(cpuSurvivors(row, vocab, settings[r]) <= 1024, "test row exceeds the cap");
    }
    bool ok = false;
    const std::vector<int32_t> ids = sampleOnDevice(logits, vocab, settings, &ok);
    QVERIFY(ok);
    for (size_t r = 0; r < rows; ++r) {
      const int32_t expected = sampleOnCpu(logits.data() + r * size_t(vocab), vocab, settings[r]);
      QVERIFY2(ids[r] == expected,
               qPrintable(QString("row %1 (T %2, top-k %3, top-p %4, u %5): got %6, CPU %7")
                              .arg(r).arg(double(settings[r].temperature)).arg(settings[r].topK)
                              .arg(double(settings[r].topP)).arg(double(settings[r].uniform))
                              .arg(ids[r]).arg(expected)));
    }
  }
};

QTEST_APPLESS_MAIN(TestKernelsSampling)
#include "test_kernels_sampling.moc"
