// The Sampler as the engine uses it: the whole chain with a seeded draw. References: the
// hand-computed softmax of [1, 2, 3, 4] (see test_sampling_stages.cpp) for the draw frequencies,
// with a binomial tolerance; a full std::sort of the vocabulary for the top-k survivors; and the
// seed contract from RELIABILITY.md 18 (same seed and settings, same tokens).
#include <QtTest>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdlib>
#include <new>
#include <limits>
#include <numeric>
#include <vector>

#include "ember/error.h"
#include "ember/rng.h"
#include "runtime/sampling/sampler.h"

using namespace ember;

// Counts every heap allocation in this test program, to check that sample() makes none. The
// whole plain (non-aligned) family is replaced, so that each new pairs with a matching delete.
static std::atomic<long> gAllocations{0};
static void* countedAllocation(std::size_t size) noexcept {
  ++gAllocations;
  return std::malloc(size ? size : 1);
}
void* operator new(std::size_t size) {
  if (void* p = countedAllocation(size)) return p;
  throw std::bad_alloc();
}
void* operator new[](std::size_t size) {
  if (void* p = countedAllocation(size)) return p;
  throw std::bad_alloc();
}
void* operator new(std::size_t size, const std::nothrow_t&) noexcept {
  return countedAllocation(size);
}
void* operator new[](std::size_t size, const std::nothrow_t&) noexcept {
  return countedAllocation(size);
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { std::free(p); }

namespace {

// Logits that look like a model's: uniform in [-10, 10), from a fixed seed.
std::vector<float> randomLogits(size_t vocab, uint64_t seed) {
  Xoshiro256StarStar generator(seed);
  std::vector<float> logits(vocab);
  for (float& logit : logits) logit = generator.nextFloat() * 20.0f - 10.0f;
  return logits;
}

SamplingParams plainDraw() {  // temperature 1, every filter off
  SamplingParams params;
  params.temperature = 1.0f;
  params.topK = 0;
  params.topP = 1.0f;
  params.minP = 0.0f;
  return params;
}

// Samples `steps` tokens, feeding each back into the history as generation does, with logits
// that change with the step so the stream is not one distribution over and over.
std::vector<TokenId> generate(Sampler& sampler, size_t vocab, int steps) {
  std::vector<TokenId> history;
  for (int step = 0; step < steps; ++step) {
    const std::vector<float> logits = randomLogits(vocab, 1000 + uint64_t(step));
    history.push_back(sampler.sample(logits, history));
  }
  return history;
}

}  // namespace

class TestSampler : public QObject {
  Q_OBJECT

 private slots:
  void sameSeedSameTokens_data() {
    QTest::addColumn<quint64>("seed");
    QTest::newRow("0") << quint64(0);
    QTest::newRow("42") << quint64(42);
    QTest::newRow("2^64-1") << quint64(std::numeric_limits<uint64_t>::max());
  }
  // RELIABILITY.md 18: the same seed twice gives the same text. 1000 draws with the default
  // chain (top-k 40, top-p 0.95, min-p 0.05, T 0.8) and penalties on.
  void sameSeedSameTokens() {
    QFETCH(quint64, seed);
    SamplingParams params;
    params.seed = seed;
    params.repeatPenalty = 1.1f;
    params.frequencyPenalty = 0.2f;
    Sampler first(params, 500), second(params, 500);
    QCOMPARE(first.seedUsed(), uint64_t(seed));
    QCOMPARE(generate(first, 500, 1000), generate(second, 500, 1000));
  }

  void differentSeedsDiffer() {
    SamplingParams params = plainDraw();
    params.seed = 1;
    Sampler one(params, 500);
    params.seed = 2;
    Sampler two(params, 500);
    const auto a = generate(one, 500, 1000), b = generate(two, 500, 1000);
    // Each step draws from ~500 tokens; agreeing on all 1000 would be astronomically unlikely.
    QVERIFY(a != b);
    int same = 0;
    for (size_t i = 0; i < a.size(); ++i) same += a[i] == b[i] ? 1 : 0;
    QVERIFY2(same < 200, qPrintable(QString::number(same)));
  }

  // No seed: one is drawn, reported, and reproduces the same tokens when given back.
  void randomSeedIsReportedAndReproduces() {
    SamplingParams params = plainDraw();
    Sampler unseeded(params, 300);
    const auto tokens = generate(unseeded, 300, 200);
    params.seed = unseeded.seedUsed();
    Sampler replay(params, 300);
    QCOMPARE(generate(replay, 300, 200), tokens);
    QVERIFY(Sampler(plainDraw(), 300).seedUsed() != Sampler(plainDraw(), 300).seedUsed());
  }

  void greedyIgnoresTheSeed() {
    SamplingParams params = plainDraw();
    params.temperature = 0.0f;
    params.seed = 7;
    Sampler a(params, 400);
    params.seed = 8;
    Sampler b(params, 400);
    const auto tokensA = generate(a, 400, 50);
    QCOMPARE(generate(b, 400, 50), tokensA);
    // And it is the argmax at every step (ids of the max; random floats have no ties here).
    for (int step = 0; step < 50; ++step) {
      const auto logits = randomLogits(400, 1000 + uint64_t(step));
      const auto best = std::max_element(logits.begin(), logits.end()) - logits.begin();
      QCOMPARE(tokensA[size_t(step)], TokenId(best));
    }
  }

  // Greedy's pick is the first candidate in ranksBefore's order (candidates.h): the highest
  // logit, ties to the lowest id, -0 equal to +0, -inf masked. Hand-computed cases, then logits
  // with many ties, where the plain greedy pick (one pass over the logits) must equal the
  // candidate path (taken when a penalty is on; an empty history leaves the logits alone) and
  // std::min_element under ranksBefore.
  void greedyTiesGoToTheLowestId() {
    SamplingParams plain = plainDraw();
    plain.temperature = 0.0f;
    SamplingParams penalised = plain;
    penalised.repeatPenalty = 1.5f;
    const float inf = std::numeric_limits<float>::infinity();
    Sampler a(plain, 4), b(penalised, 4);
    for (Sampler* s : {&a, &b}) {
      QCOMPARE(s->sample(std::vector<float>{1, 3, -0.0f, 3}, {}), 1);
      QCOMPARE(s->sample(std::vector<float>{-0.0f, 0.0f, -inf, -0.0f}, {}), 0);
      QCOMPARE(s->sample(std::vector<float>{-inf, 0.0f, -0.0f, -inf}, {}), 1);
      QCOMPARE(s->sample(std::vector<float>{-inf, -inf, -inf, -7}, {}), 3);
    }
    // id 1 penalised: 3 / 1.5 = 2 < 2.5, so id 3 wins.
    QCOMPARE(b.sample(std::vector<float>{1, 3, -0.0f, 2.5f}, std::vector<TokenId>{1}), 3);

    constexpr size_t kVocab = 5000;
    Sampler fast(plain, kVocab), chain(penalised, kVocab);
    for (int step = 0; step < 20; ++step) {
      std::vector<float> logits = randomLogits(kVocab, 2000 + uint64_t(step));
      for (float& x : logits) x = std::round(x);  // 21 distinct values: ties at the top
      std::vector<sampling::Candidate> ranked(kVocab);
      for (size_t i = 0; i < kVocab; ++i) ranked[i] = {TokenId(i), logits[i], 0.0f};
      const TokenId want = std::min_element(ranked.begin(), ranked.end(), sampling::ranksBefore)->id;
      QCOMPARE(fast.sample(logits, {}), want);
      QCOMPARE(chain.sample(logits, {}), want);
      QVERIFY(fast.lastSurvivors().empty());
    }
  }

  // The greedy pass reads the logits 8 at a time and the rest one by one: the best logit and a
  // bad one in either part, on a vocabulary of 4099 (512 groups of 8, 3 left). Reference: the
  // first id under ranksBefore (the highest logit, ties to the lowest id, -0 equal to +0), and
  // the errors of badInputThrows.
  void greedyPassCoversEveryPosition() {
    SamplingParams plain = plainDraw();
    plain.temperature = 0.0f;
    constexpr size_t kVocab = 4099;
    Sampler sampler(plain, kVocab);
    const float nan = std::numeric_limits<float>::quiet_NaN();
    const float inf = std::numeric_limits<float>::infinity();
    for (size_t at : {size_t(0), size_t(5), size_t(4095), size_t(4096), size_t(4098)}) {
      std::vector<float> logits(kVocab, -3.0f);
      logits[at] = 2.0f;
      QCOMPARE(sampler.sample(logits, {}), TokenId(at));
      logits.assign(kVocab, -inf);  // only zeros and -inf: the first zero, whatever its sign
      logits[at] = -0.0f;
      if (at + 1 < kVocab) logits[at + 1] = 0.0f;
      QCOMPARE(sampler.sample(logits, {}), TokenId(at));
    }
    for (size_t at : {size_t(17), size_t(4000), size_t(4097)})
      for (float bad : {nan, inf}) {
        std::vector<float> logits(kVocab, 1.0f);
        logits[at] = bad;
        QVERIFY_THROWS_EXCEPTION(Error, sampler.sample(logits, {}));
      }
  }

  // 100k draws from softmax([1, 2, 3, 4]) = [0.032059, 0.087144, 0.236883, 0.643914]; each count
  // within 5 binomial standard deviations sqrt(n p (1 - p)) (about 56, 89, 134, 151) of n p.
  // Deterministic: the seed is fixed, so this never flakes.
  void drawFrequenciesMatchSoftmax_data() {
    QTest::addColumn<float>("topP");
    QTest::addColumn<QList<double>>("expected");
    QTest::newRow("plain") << 1.0f << QList<double>{0.032059, 0.087144, 0.236883, 0.643914};
    // top-p 0.8 keeps {3, 2}, renormalized [0.268941, 0.731059]; ids 0 and 1 never drawn.
    QTest::newRow("top-p 0.8") << 0.8f << QList<double>{0, 0, 0.268941, 0.731059};
  }
  void drawFrequenciesMatchSoftmax() {
    QFETCH(float, topP);
    QFETCH(QList<double>, expected);
    constexpr int kDraws = 100000;
    SamplingParams params = plainDraw();
    params.topP = topP;
    params.seed = 12345;
    Sampler sampler(params, 4);
    const std::vector<float> logits{1, 2, 3, 4};
    std::vector<int> counts(4, 0);
    for (int i = 0; i < kDraws; ++i) ++counts[size_t(sampler.sample(logits, {}))];
    for (size_t id = 0; id < 4; ++id) {
      const double p = expected[qsizetype(id)];
      const double sd = std::sqrt(kDraws * p * (1 - p));
      const double deviation = std::abs(counts[id] - kDraws * p);
      QVERIFY2(p > 0 ? deviation <= 5 * sd : counts[id] == 0,
               qPrintable(QStringLiteral("id %1: %2 draws, expected %3 +- %4")
                              .arg(id).arg(counts[id]).arg(kDraws * p).arg(5 * sd)));
    }
  }

  // Gemma's vocabulary (262144) with top-k 40: the survivors are exactly the 40 best logits in
  // order (reference: a full sort of a copy), and the sampler sorted only those 40.
  void bigVocabularyTopKSortsOnlyK() {
    constexpr size_t kVocab = 262144;
    const std::vector<float> logits = randomLogits(kVocab, 99);
    SamplingParams params = plainDraw();
    params.topK = 40;
    params.seed = 3;
    Sampler sampler(params, kVocab);
    const TokenId picked = sampler.sample(logits, {});

    std::vector<TokenId> byLogit(kVocab);
    std::iota(byLogit.begin(), byLogit.end(), 0);
    std::stable_sort(byLogit.begin(), byLogit.end(), [&](TokenId a, TokenId b) {
      return logits[size_t(a)] > logits[size_t(b)];
    });
    const auto survivors = sampler.lastSurvivors();
    QCOMPARE(survivors.size(), size_t(40));
    for (size_t i = 0; i < 40; ++i) QCOMPARE(survivors[i].id, byLogit[i]);
    QVERIFY(std::any_of(survivors.begin(), survivors.end(),
                        [&](const auto& c) { return c.id == picked; }));
    QCOMPARE(sampler.lastSortedElements(), size_t(40));
  }

  // Top-k off and top-p 0.9 on a peaked distribution: ten tokens at logit 20 hold nearly all
  // the mass, so top-p stops inside the first sorted chunk (64) instead of sorting 262144.
  void bigVocabularyTopPSortsOnlyTheHead() {
    constexpr size_t kVocab = 262144;
    std::vector<float> logits = randomLogits(kVocab, 5);
    for (size_t id = 1000; id < 1010; ++id) logits[id] = 20.0f;
    SamplingParams params = plainDraw();
    params.topP = 0.9f;
    params.seed = 4;
    Sampler sampler(params, kVocab);
    const TokenId picked = sampler.sample(logits, {});
    QVERIFY(picked >= 1000 && picked < 1010);
    // Each of the ten has p = e^20 / (10 e^20 + 262134 * mean(e^l)) with mean(e^l) over
    // [-10, 10) = (e^10 - e^-10) / 20 = 1101.3: 4.85e8 / 5.14e9 = 0.0944. Nine sum to 0.850 < 0.9,
    // ten to 0.944: all ten stay, ranked by id (ties), and nothing else.
    const auto survivors = sampler.lastSurvivors();
    QCOMPARE(survivors.size(), size_t(10));
    for (size_t i = 0; i < survivors.size(); ++i) QCOMPARE(survivors[i].id, TokenId(1000 + i));
    QCOMPARE(sampler.lastSortedElements(), size_t(64));
  }

  // The penalty window: logits [3, 2.9, 0, 0], repetition 2, greedy. Penalising id0 gives
  // 3 / 2 = 1.5 < 2.9, so the pick moves from 0 to 1 exactly when id0 is in the window.
  void penaltyWindow_data() {
    QTest::addColumn<int>("lastN");
    QTest::addColumn<QList<int>>("history");
    QTest::addColumn<int>("expected");
    QTest::newRow("id0 recent") << 64 << QList<int>{0} << 1;
    QTest::newRow("id0 outside last 1") << 1 << QList<int>{0, 2} << 0;
    QTest::newRow("id0 inside last 2") << 2 << QList<int>{0, 2} << 1;
    QTest::newRow("-1 = whole history") << -1 << QList<int>{0, 2, 3, 3, 2} << 1;
    QTest::newRow("0 = off") << 0 << QList<int>{0} << 0;
    QTest::newRow("window longer than history") << 64 << QList<int>{2, 0} << 1;
  }
  void penaltyWindow() {
    QFETCH(int, lastN);
    QFETCH(QList<int>, history);
    QFETCH(int, expected);
    SamplingParams params = plainDraw();
    params.temperature = 0.0f;
    params.repeatPenalty = 2.0f;
    params.penaltyLastN = lastN;
    Sampler sampler(params, 4);
    const std::vector<TokenId> tokens(history.begin(), history.end());
    QCOMPARE(sampler.sample(std::vector<float>{3, 2.9f, 0, 0}, tokens), expected);
    // The penalty does not stick: an empty history gives the unpenalised argmax again.
    QCOMPARE(sampler.sample(std::vector<float>{3, 2.9f, 0, 0}, {}), 0);
  }

  // The decode loop must not allocate per token: after construction, sample() reuses the
  // Sampler's buffers, with every stage and the penalties on, on Gemma's vocabulary size.
  void sampleDoesNotAllocate() {
    constexpr size_t kVocab = 262144;
    const std::vector<float> logits = randomLogits(kVocab, 11);
    const std::vector<TokenId> history{5, 9, 5, 100000, 262143};
    SamplingParams params;  // top-k 40, top-p 0.95, min-p 0.05
    params.repeatPenalty = 1.3f;
    params.presencePenalty = 0.5f;
    params.seed = 1;
    Sampler sampler(params, kVocab);
    SamplingParams noTopK = params;
    noTopK.topK = 0;  // top-p's chunked sort over the whole vocabulary
    Sampler nucleus(noTopK, kVocab);
    SamplingParams greedyParams = params;
    greedyParams.temperature = 0.0f;
    Sampler greedy(greedyParams, kVocab);
    const long before = gAllocations.load();
    for (int i = 0; i < 20; ++i) {
      sampler.sample(logits, history);
      nucleus.sample(logits, history);
      greedy.sample(logits, history);
    }
    QCOMPARE(gAllocations.load() - before, 0L);
    // The counter does see allocations (the replacement operator new is in effect).
    auto* probe = new std::vector<int>(10);
    QVERIFY(gAllocations.load() - before >= 2);
    delete probe;
  }

  void tinyTemperatureActsGreedy() {
    SamplingParams params = plainDraw();
    params.temperature = 1e-30f;
    Sampler sampler(params, 4);
    for (int i = 0; i < 100; ++i) QCOMPARE(sampler.sample(std::vector<float>{1, 2, 3, 4}, {}), 3);
  }

  void badInputThrows() {
    SamplingParams params = plainDraw();
    params.repeatPenalty = 1.5f;
    Sampler sampler(params, 4);
    const float nan = std::numeric_limits<float>::quiet_NaN();
    const float inf = std::numeric_limits<float>::infinity();
    QVERIFY_THROWS_EXCEPTION(Error, sampler.sample(std::vector<float>{1, 2, 3}, {}));
    QVERIFY_THROWS_EXCEPTION(Error, sampler.sample(std::vector<float>{1, nan, 3, 4}, {}));
    QVERIFY_THROWS_EXCEPTION(Error, sampler.sample(std::vector<float>{1, inf, 3, 4}, {}));
    QVERIFY_THROWS_EXCEPTION(Error, sampler.sample(std::vector<float>(4, -inf), {}));
    QVERIFY_THROWS_EXCEPTION(Error, sampler.sample(std::vector<float>{1, 2, 3, 4},
                                                   std::vector<TokenId>{0, 9}));
    // The sampler is still usable afterwards (its scratch was left clean): -inf masks a token.
    QCOMPARE(sampler.sample(std::vector<float>{-inf, -inf, 5, -inf}, std::vector<TokenId>{2}), 2);
  }

  void invalidSettingsAreRejectedAtConstruction() {
    SamplingParams params;
    params.temperature = -1.0f;
    QVERIFY_THROWS_EXCEPTION(Error, Sampler(params, 10));
    QVERIFY_THROWS_EXCEPTION(Error, Sampler(SamplingParams{}, 0));
  }
};

QTEST_APPLESS_MAIN(TestSampler)
#include "test_sampler.moc"
