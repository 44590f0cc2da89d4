// Each sampling stage alone on four-token distributions, against numbers computed by hand (the
// arithmetic is in the comments; exp values to 6 places). The semantics are the reference
// definitions: repetition penalty as llama.cpp (llama-sampling.cpp, penalties), frequency and
// presence penalties as OpenAI's API reference, top-k / top-p / min-p as in llama.cpp's
// tests/test-sampling.cpp, whose cases these follow.
//
// softmax([1, 2, 3, 4]): exp(l - 4) = [0.049787, 0.135335, 0.367879, 1], sum 1.553002
//   -> p = [0.032059, 0.087144, 0.236883, 0.643914]
#include <QtTest>

#include <cmath>
#include <limits>
#include <vector>

#include "ember/error.h"
#include "runtime/sampling/stages.h"

using namespace ember;
using namespace ember::sampling;

namespace {

constexpr float kNegInf = -std::numeric_limits<float>::infinity();

Candidates makeCandidates(const QList<float>& logits) {
  const std::vector<float> values(logits.begin(), logits.end());
  Candidates candidates;
  candidates.reset(values);
  return candidates;
}

QList<int> idsOf(const Candidates& candidates) {
  QList<int> ids;
  for (const Candidate& c : candidates.items) ids << c.id;
  return ids;
}

// Probabilities by id (0 for tokens no longer among the candidates).
QList<double> probsById(const Candidates& candidates, qsizetype vocab) {
  QList<double> probs(vocab, 0.0);
  for (const Candidate& c : candidates.items) probs[c.id] = c.prob;
  return probs;
}

void compareProbs(const QList<double>& actual, const QList<double>& expected) {
  QCOMPARE(actual.size(), expected.size());
  for (qsizetype i = 0; i < actual.size(); ++i) {
    if (std::abs(actual[i] - expected[i]) > 2e-6) {
      QFAIL(qPrintable(QStringLiteral("token %1: probability %2, expected %3")
                           .arg(i).arg(actual[i], 0, 'f', 7).arg(expected[i], 0, 'f', 7)));
    }
  }
}

}  // namespace

class TestSamplingStages : public QObject {
  Q_OBJECT

 private slots:
  void softmax_data() {
    QTest::addColumn<QList<float>>("logits");
    QTest::addColumn<QList<double>>("expected");
    QTest::newRow("1 2 3 4") << QList<float>{1, 2, 3, 4}
                             << QList<double>{0.032059, 0.087144, 0.236883, 0.643914};
    // exp([-1.5, -1, -0.5, 0]) = [0.223130, 0.367879, 0.606531, 1], sum 2.197540
    QTest::newRow("0.5 1 1.5 2") << QList<float>{0.5f, 1, 1.5f, 2}
                                 << QList<double>{0.101536, 0.167405, 0.276004, 0.455054};
    // Shifting by the max keeps huge logits finite: exp([0, 0, -1, -1000]), sum 2.367879
    QTest::newRow("huge logits") << QList<float>{1000, 1000, 999, 0}
                                 << QList<double>{0.422319, 0.422319, 0.155362, 0.0};
    // -inf (a masked token) is probability 0; the other two split evenly.
    QTest::newRow("-inf masked") << QList<float>{kNegInf, 1, 1, kNegInf}
                                 << QList<double>{0, 0.5, 0.5, 0};
  }
  void softmax() {
    QFETCH(QList<float>, logits);
    QFETCH(QList<double>, expected);
    Candidates candidates = makeCandidates(logits);
    sampling::softmax(candidates);
    compareProbs(probsById(candidates, logits.size()), expected);
  }

  void softmaxOfAllMaskedThrows() {
    Candidates candidates = makeCandidates({kNegInf, kNegInf, kNegInf, kNegInf});
    QVERIFY_THROWS_EXCEPTION(ember::Error, sampling::softmax(candidates));
  }

  void temperature_data() {
    QTest::addColumn<float>("temperature");
    QTest::addColumn<QList<double>>("expected");
    // Logits [1, 2, 3, 4] / T, then softmax.
    QTest::newRow("T=1") << 1.0f << QList<double>{0.032059, 0.087144, 0.236883, 0.643914};
    // [0.5, 1, 1.5, 2]: as in the softmax table.
    QTest::newRow("T=2") << 2.0f << QList<double>{0.101536, 0.167405, 0.276004, 0.455054};
    // [2, 4, 6, 8]: exp([-6, -4, -2, 0]) = [0.002479, 0.018316, 0.135335, 1], sum 1.156130
    QTest::newRow("T=0.5") << 0.5f << QList<double>{0.002144, 0.015842, 0.117059, 0.864955};
    // [0.01 .. 0.04]: exp([-0.03, -0.02, -0.01, 0]) = [0.970446, 0.980199, 0.990050, 1],
    // sum 3.940695: nearly uniform.
    QTest::newRow("T=100") << 100.0f << QList<double>{0.246263, 0.248738, 0.251237, 0.253762};
    // (l - 4) / 1e-30 = [-3e30, -2e30, -1e30, 0]: all mass on the best token, no inf - inf NaN.
    QTest::newRow("T=1e-30") << 1e-30f << QList<double>{0, 0, 0, 1};
  }
  void temperature() {
    QFETCH(float, temperature);
    QFETCH(QList<double>, expected);
    Candidates candidates = makeCandidates({1, 2, 3, 4});
    applyTemperature(candidates, temperature);
    sampling::softmax(candidates);
    compareProbs(probsById(candidates, 4), expected);
  }

  void topK_data() {
    QTest::addColumn<QList<float>>("logits");
    QTest::addColumn<int>("k");
    QTest::addColumn<QList<int>>("expectedIds");  // survivors, in order
    const QList<float> rising{1, 2, 3, 4};
    QTest::newRow("k=1") << rising << 1 << QList<int>{3};
    QTest::newRow("k=2") << rising << 2 << QList<int>{3, 2};
    QTest::newRow("k=3") << rising << 3 << QList<int>{3, 2, 1};
    // k = 0 is off, k >= n keeps everything: the list is untouched (id order, unsorted).
    QTest::newRow("k=0 off") << rising << 0 << QList<int>{0, 1, 2, 3};
    QTest::newRow("k=n") << rising << 4 << QList<int>{0, 1, 2, 3};
    QTest::newRow("k>n") << rising << 262144 << QList<int>{0, 1, 2, 3};
    // Ties rank the lower id first.
    const QList<float> tied{2, 5, 5, 1};
    QTest::newRow("ties k=1") << tied << 1 << QList<int>{1};
    QTest::newRow("ties k=2") << tied << 2 << QList<int>{1, 2};
    QTest::newRow("ties k=3") << tied << 3 << QList<int>{1, 2, 0};
  }
  void topK() {
    QFETCH(QList<float>, logits);
    QFETCH(int, k);
    QFETCH(QList<int>, expectedIds);
    Candidates candidates = makeCandidates(logits);
    keepTopK(candidates, k);
    QCOMPARE(idsOf(candidates), expectedIds);
  }

  void topP_data() {
    QTest::addColumn<QList<float>>("logits");
    QTest::addColumn<float>("p");
    QTest::addColumn<QList<int>>("expectedIds");
    // Sorted probabilities of [1, 2, 3, 4]: id3 0.643914, id2 0.236883, id1 0.087144,
    // id0 0.032059; cumulative 0.643914, 0.880797, 0.967941, 1.
    const QList<float> rising{1, 2, 3, 4};
    QTest::newRow("p=0.5") << rising << 0.5f << QList<int>{3};         // 0.6439 >= 0.5
    QTest::newRow("p=0.65") << rising << 0.65f << QList<int>{3, 2};    // 0.6439 < 0.65
    QTest::newRow("p=0.8") << rising << 0.8f << QList<int>{3, 2};      // 0.8808 >= 0.8
    QTest::newRow("p=0.9") << rising << 0.9f << QList<int>{3, 2, 1};   // 0.9679 >= 0.9
    QTest::newRow("p=0.97") << rising << 0.97f << QList<int>{3, 2, 1, 0};  // 0.9679 < 0.97
    // p = 0 keeps only the best token (at least one always stays, as llama.cpp).
    QTest::newRow("p=0") << rising << 0.0f << QList<int>{3};
    // p = 1 is off: untouched, id order.
    QTest::newRow("p=1 off") << rising << 1.0f << QList<int>{0, 1, 2, 3};
    // Four equal tokens, 0.25 each: 0.25 + 0.25 = 0.5 >= 0.5 exactly; ties by id.
    QTest::newRow("uniform p=0.5") << QList<float>{0, 0, 0, 0} << 0.5f << QList<int>{0, 1};
  }
  void topP() {
    QFETCH(QList<float>, logits);
    QFETCH(float, p);
    QFETCH(QList<int>, expectedIds);
    Candidates candidates = makeCandidates(logits);
    sampling::softmax(candidates);
    keepTopP(candidates, p);
    QCOMPARE(idsOf(candidates), expectedIds);
  }

  void minP_data() {
    QTest::addColumn<float>("minP");
    QTest::addColumn<QList<int>>("expectedIds");
    // pmax = 0.643914 (id 3). Threshold = minP * pmax; order (id order here) is kept.
    QTest::newRow("0.2") << 0.2f << QList<int>{2, 3};         // 0.128783: drops 0.032, 0.087
    QTest::newRow("0.05") << 0.05f << QList<int>{1, 2, 3};    // 0.032196 > 0.032059
    QTest::newRow("0.04") << 0.04f << QList<int>{0, 1, 2, 3};  // 0.025757 < 0.032059
    QTest::newRow("1") << 1.0f << QList<int>{3};              // only p == pmax
    QTest::newRow("0 off") << 0.0f << QList<int>{0, 1, 2, 3};
  }
  void minP() {
    QFETCH(float, minP);
    QFETCH(QList<int>, expectedIds);
    Candidates candidates = makeCandidates({1, 2, 3, 4});
    sampling::softmax(candidates);
    keepMinP(candidates, minP);
    QCOMPARE(idsOf(candidates), expectedIds);
  }

  void minPKeepsSortedOrder() {
    Candidates candidates = makeCandidates({1, 2, 3, 4});
    sampling::softmax(candidates);
    keepTopP(candidates, 0.99f);  // sorts: [3, 2, 1, 0]
    QCOMPARE(idsOf(candidates), (QList<int>{3, 2, 1, 0}));
    keepMinP(candidates, 0.2f);
    QCOMPARE(idsOf(candidates), (QList<int>{3, 2}));
    QVERIFY(candidates.sorted);
  }

  // After top-p 0.8: {id3 0.643914, id2 0.236883}; / 0.880797 -> [0.731059, 0.268941]
  // (= 1 / (1 + e^-1) and its complement, since p3 / p2 = e).
  void renormalizeAfterTopP() {
    Candidates candidates = makeCandidates({1, 2, 3, 4});
    sampling::softmax(candidates);
    keepTopP(candidates, 0.8f);
    renormalize(candidates);
    compareProbs(probsById(candidates, 4), {0, 0, 0.268941, 0.731059});
  }

  void penalties_data() {
    QTest::addColumn<QList<int>>("recent");
    QTest::addColumn<float>("repeat");
    QTest::addColumn<float>("frequency");
    QTest::addColumn<float>("presence");
    QTest::addColumn<QList<float>>("expected");
    // Logits [2, -1, 0, 3]. recent [0, 1, 0, 3]: counts id0 2, id1 1, id2 0, id3 1.
    const QList<int> recent{0, 1, 0, 3};
    // Repetition 2: positive / 2, non-positive * 2: 2 -> 1, -1 -> -2, 3 -> 1.5; id2 not recent.
    QTest::newRow("repeat 2") << recent << 2.0f << 0.0f << 0.0f << QList<float>{1, -2, 0, 1.5f};
    // Repetition 0.5 (favours repeats): 2 / 0.5 = 4, -1 * 0.5 = -0.5, 3 / 0.5 = 6.
    QTest::newRow("repeat 0.5") << recent << 0.5f << 0.0f << 0.0f
                                << QList<float>{4, -0.5f, 0, 6};
    // Frequency 0.5: minus count * 0.5: 2 - 1 = 1, -1 - 0.5 = -1.5, 3 - 0.5 = 2.5.
    QTest::newRow("frequency 0.5") << recent << 1.0f << 0.5f << 0.0f
                                   << QList<float>{1, -1.5f, 0, 2.5f};
    // Presence 0.25: minus 0.25 once per recent token: 1.75, -1.25, 0, 2.75.
    QTest::newRow("presence 0.25") << recent << 1.0f << 0.0f << 0.25f
                                   << QList<float>{1.75f, -1.25f, 0, 2.75f};
    // All three: repetition first, then id0: 1 - (2 * 0.5 + 0.25) = -0.25;
    // id1: -2 - (0.5 + 0.25) = -2.75; id3: 1.5 - 0.75 = 0.75.
    QTest::newRow("all three") << recent << 2.0f << 0.5f << 0.25f
                               << QList<float>{-0.25f, -2.75f, 0, 0.75f};
    // A zero logit is multiplied by the repetition penalty: stays 0.
    QTest::newRow("zero logit") << QList<int>{2} << 2.0f << 0.0f << 0.0f
                                << QList<float>{2, -1, 0, 3};
    // Negative frequency favours repeats: id1 -1 - 3 * (-1) = 2.
    QTest::newRow("negative frequency") << QList<int>{1, 1, 1} << 1.0f << -1.0f << 0.0f
                                        << QList<float>{2, 2, 0, 3};
    QTest::newRow("empty window") << QList<int>{} << 2.0f << 0.5f << 0.25f
                                  << QList<float>{2, -1, 0, 3};
  }
  void penalties() {
    QFETCH(QList<int>, recent);
    QFETCH(float, repeat);
    QFETCH(float, frequency);
    QFETCH(float, presence);
    QFETCH(QList<float>, expected);
    Candidates candidates = makeCandidates({2, -1, 0, 3});
    SamplingParams params;
    params.repeatPenalty = repeat;
    params.frequencyPenalty = frequency;
    params.presencePenalty = presence;
    std::vector<uint32_t> counts(4, 0);
    const std::vector<TokenId> window(recent.begin(), recent.end());
    applyPenalties(candidates, window, params, counts);
    for (qsizetype i = 0; i < expected.size(); ++i) {
      QCOMPARE(candidates.items[static_cast<size_t>(i)].logit, expected[i]);
    }
    QCOMPARE(counts, std::vector<uint32_t>(4, 0));  // scratch left clean for the next call
  }

  void penaltiesRejectOutOfRangeIds() {
    Candidates candidates = makeCandidates({2, -1, 0, 3});
    SamplingParams params;
    params.repeatPenalty = 2.0f;
    std::vector<uint32_t> counts(4, 0);
    const std::vector<TokenId> window{0, 4};
    QVERIFY_THROWS_EXCEPTION(ember::Error, applyPenalties(candidates, window, params, counts));
    const std::vector<TokenId> negative{-1};
    QVERIFY_THROWS_EXCEPTION(ember::Error, applyPenalties(candidates, negative, params, counts));
    QCOMPARE(counts, std::vector<uint32_t>(4, 0));
    QCOMPARE(candidates.items[0].logit, 2.0f);  // nothing applied
  }

  void greedy_data() {
    QTest::addColumn<QList<float>>("logits");
    QTest::addColumn<int>("expectedId");
    QTest::newRow("clear best") << QList<float>{1, 2, 3, 4} << 3;
    QTest::newRow("tie in the middle") << QList<float>{1, 4, 4, 2} << 1;
    QTest::newRow("tie first and last") << QList<float>{4, 1, 1, 4} << 0;
    QTest::newRow("all equal") << QList<float>{0, 0, 0, 0} << 0;
    QTest::newRow("negatives and -inf") << QList<float>{kNegInf, -1, -1, -2} << 1;
  }
  void greedy() {
    QFETCH(QList<float>, logits);
    QFETCH(int, expectedId);
    QCOMPARE(pickGreedy(makeCandidates(logits)), expectedId);
  }

  void draw_data() {
    QTest::addColumn<QList<float>>("probs");
    QTest::addColumn<double>("u");
    QTest::addColumn<int>("expectedId");
    // Cumulative [0.1, 0.3, 0.6, 1.0]: the first whose cumulative exceeds u.
    const QList<float> rising{0.1f, 0.2f, 0.3f, 0.4f};
    QTest::newRow("u=0") << rising << 0.0 << 0;
    QTest::newRow("u=0.05") << rising << 0.05 << 0;
    QTest::newRow("u=0.15") << rising << 0.15 << 1;
    QTest::newRow("u=0.35") << rising << 0.35 << 2;
    QTest::newRow("u=0.65") << rising << 0.65 << 3;
    QTest::newRow("u=0.999999") << rising << 0.999999 << 3;
    // Cumulative [0, 0.5, 0.5, 1]: probability-0 tokens are never drawn, even at u = 0.
    const QList<float> gaps{0, 0.5f, 0, 0.5f};
    QTest::newRow("gaps u=0") << gaps << 0.0 << 1;
    QTest::newRow("gaps u=0.49") << gaps << 0.49 << 1;
    QTest::newRow("gaps u=0.5") << gaps << 0.5 << 3;
  }
  void draw() {
    QFETCH(QList<float>, probs);
    QFETCH(double, u);
    QFETCH(int, expectedId);
    Candidates candidates = makeCandidates({0, 0, 0, 0});
    for (qsizetype i = 0; i < probs.size(); ++i) candidates.items[size_t(i)].prob = probs[i];
    QCOMPARE(drawToken(candidates, u), expectedId);
  }

  // The whole chain by hand: logits [1, 2, 3, 4], T = 1, top-k 3 -> ids [3, 2, 1] with
  // exp([0, -1, -2]) = [1, 0.367879, 0.135335], sum 1.503215 -> [0.665241, 0.244728, 0.090031];
  // top-p 0.9: 0.665241 + 0.244728 = 0.909969 >= 0.9 -> [3, 2]; min-p 0.3: threshold
  // 0.199572 < 0.244728 -> [3, 2]; renormalized [0.731059, 0.268941]. Draw u = 0.7 -> 3
  // (0.731 > 0.7), u = 0.75 -> 2.
  void wholeChainByHand() {
    for (const auto& [u, expectedId] : {std::pair{0.7, 3}, std::pair{0.75, 2}}) {
      Candidates candidates = makeCandidates({1, 2, 3, 4});
      applyTemperature(candidates, 1.0f);
      keepTopK(candidates, 3);
      QCOMPARE(idsOf(candidates), (QList<int>{3, 2, 1}));
      sampling::softmax(candidates);
      compareProbs(probsById(candidates, 4), {0, 0.090031, 0.244728, 0.665241});
      keepTopP(candidates, 0.9f);
      keepMinP(candidates, 0.3f);
      renormalize(candidates);
      QCOMPARE(idsOf(candidates), (QList<int>{3, 2}));
      compareProbs(probsById(candidates, 4), {0, 0, 0.268941, 0.731059});
      QCOMPARE(drawToken(candidates, u), expectedId);
    }
  }

  void emptyCandidatesThrow() {
    Candidates candidates;
    QVERIFY_THROWS_EXCEPTION(ember::Error, pickGreedy(candidates));
    QVERIFY_THROWS_EXCEPTION(ember::Error, renormalize(candidates));
    QVERIFY_THROWS_EXCEPTION(ember::Error, drawToken(candidates, 0.5));
  }
};

QTEST_APPLESS_MAIN(TestSamplingStages)
#include "test_sampling_stages.moc"
