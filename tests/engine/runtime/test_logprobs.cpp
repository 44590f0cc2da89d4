// logprobsAt on logits whose softmax is written out by hand: exp of {0, ln2, ln2, ln4, -inf} is
// {1, 2, 2, 4, 0}, so the probabilities are {1/9, 2/9, 2/9, 4/9, 0}.
#include <QtTest>

#include <cmath>
#include <limits>
#include <vector>

#include "runtime/sampling/logprobs.h"

using namespace ember;
using namespace ember::sampling;

class LogprobsTest : public QObject {
  Q_OBJECT
 private slots:
  void handComputedSoftmax() {
    const float inf = std::numeric_limits<float>::infinity();
    const std::vector<float> logits = {0.0f, float(std::log(2.0)), float(std::log(2.0)),
                                       float(std::log(4.0)), -inf};
    const PositionLogprobs p = logprobsAt(logits, 1, 3);
    QVERIFY(std::abs(p.chosen - std::log(2.0 / 9.0)) < 1e-6);
    QCOMPARE(p.top.size(), size_t(3));
    QCOMPARE(p.top[0].id, 3);  // 4/9
    QCOMPARE(p.top[1].id, 1);  // 2/9, tied with id 2: the lower id ranks first
    QCOMPARE(p.top[2].id, 2);
    QVERIFY(std::abs(p.top[0].logprob - std::log(4.0 / 9.0)) < 1e-6);
    QVERIFY(std::abs(p.top[2].logprob - std::log(2.0 / 9.0)) < 1e-6);
    QVERIFY(logprobsAt(logits, 4, 0).chosen == -inf);  // no probability at all
    QVERIFY(logprobsAt(logits, 4, 0).top.empty());
  }

  void topLongerThanTheVocabularyIsAllOfIt() {
    const std::vector<float> logits = {1.0f, 3.0f, 2.0f};
    const PositionLogprobs p = logprobsAt(logits, 0, 20);
    QCOMPARE(p.top.size(), size_t(3));
    QCOMPARE(p.top[0].id, 1);
    QCOMPARE(p.top[1].id, 2);
    QCOMPARE(p.top[2].id, 0);
    double total = 0;
    for (const RankedLogprob& r : p.top) total += std::exp(double(r.logprob));
    QVERIFY(std::abs(total - 1.0) < 1e-6);  // the whole vocabulary sums to one
    QCOMPARE(p.top[2].logprob, p.chosen);
  }

  void hugeLogitsDoNotOverflow() {
    // Without subtracting the maximum, exp(1000) is +inf and every logprob would be nan.
    const std::vector<float> logits = {1000.0f, 1000.0f};
    const PositionLogprobs p = logprobsAt(logits, 0, 1);
    QVERIFY(std::abs(p.chosen - std::log(0.5)) < 1e-6);
  }
};

QTEST_APPLESS_MAIN(LogprobsTest)
#include "test_logprobs.moc"
