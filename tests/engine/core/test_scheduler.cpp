// The scheduler's plans for scripted arrivals, checked against plans worked out by hand from its
// rules: decodes first (one token each), then running prompt chunks oldest first, then new
// admissions from the longest cached prefix, all within the token budget; KV blocks reserved for
// exactly the tokens computed; when the pool runs short the most recently admitted sequence is
// preempted, re-queued at the front, and later computed again (reusing its cached full blocks).
// A step that decodes takes at most promptBudgetWhileDecoding prompt tokens; a step with nothing
// decoding gives prompts the whole token budget.
#include <QtTest>

#include "runtime/engine/scheduler.h"
#include "runtime/engine/sequence_blocks.h"

using namespace ember;

namespace {

std::unique_ptr<Sequence> makeSequence(RequestId id, int32_t promptLength, TokenId token = 7) {
  auto s = std::make_unique<Sequence>();
  s->id = id;
  s->tokens.assign(static_cast<size_t>(promptLength), token);
  s->promptLength = promptLength;
  return s;
}

// Applies a plan as the engine would: the tokens are computed (full blocks committed to the
// prefix cache), and a sequence whose work reached its last token gets one new token.
void apply(const ScheduleOutcome& outcome, BlockManager& blocks) {
  for (const ScheduledWork& w : outcome.plan) {
    w.sequence->computed += w.tokenCount;
    commitComputedBlocks(*w.sequence, blocks);
    if (w.sequence->pending() == 0) w.sequence->tokens.push_back(1);
  }
}

}  // namespace

class SchedulerTest : public QObject {
  Q_OBJECT

 private slots:
  void chunksLongPromptsWithinBudget() {
    // Budget 8, block size 4: a 20-token prompt takes chunks 8, 8, 4, then decodes.
    Scheduler scheduler({/*maxRunning*/ 2, /*tokenBudget*/ 8, /*blockSize*/ 4});
    BlockManager blocks(16, 4);
    auto a = makeSequence(1, 20);
    std::deque<Sequence*> waiting{a.get()};
    std::vector<Sequence*> running;
    const int32_t expected[] = {8, 8, 4, 1, 1};
    const int32_t expectedBlocks[] = {2, 4, 5, 6, 6};  // ceil(computed-after / 4)
    for (int i = 0; i < 5; ++i) {
      const auto outcome = scheduler.schedule(waiting, running, blocks);
      QCOMPARE(outcome.plan.size(), size_t(1));
      QCOMPARE(outcome.plan[0].tokenCount, expected[i]);
      QCOMPARE(int(a->blockTable.size()), expectedBlocks[i]);
      apply(outcome, blocks);
    }
    QCOMPARE(blocks.stats().referencedBlocks, 6);
  }

  void decodesComeBeforePromptChunks() {
    // A is decoding when B (10 tokens) arrives; budget 6: A decodes 1, B gets 5, then A 1, B 5.
    Scheduler scheduler({2, 6, 16});
    BlockManager blocks(8, 16);
    auto a = makeSequence(1, 3);
    auto b = makeSequence(2, 10, 8);
    std::deque<Sequence*> waiting{a.get()};
    std::vector<Sequence*> running;
    apply(scheduler.schedule(waiting, running, blocks), blocks);  // A's prompt
    QCOMPARE(a->pending(), 1);
    waiting.push_back(b.get());
    for (int round = 0; round < 2; ++round) {
      const auto outcome = scheduler.schedule(waiting, running, blocks);
      QCOMPARE(outcome.plan.size(), size_t(2));
      QCOMPARE(outcome.plan[0].sequence, a.get());
      QCOMPARE(outcome.plan[0].tokenCount, 1);
      QCOMPARE(outcome.plan[1].sequence, b.get());
      QCOMPARE(outcome.plan[1].tokenCount, 5);
      apply(outcome, blocks);
    }
    QVERIFY(!b->prefilling());
  }

  void admitsAtMostMaxRunning() {
    Scheduler scheduler({2, 100, 16});
    BlockManager blocks(8, 16);
    auto a = makeSequence(1, 4), b = makeSequence(2, 4), c = makeSequence(3, 4);
    std::deque<Sequence*> waiting{a.get(), b.get(), c.get()};
    std::vector<Sequence*> running;
    const auto outcome = scheduler.schedule(waiting, running, blocks);
    QCOMPARE(outcome.plan.size(), size_t(2));
    QCOMPARE(running.size(), size_t(2));
    QCOMPARE(waiting.size(), size_t(1));
    QCOMPARE(waiting.front(), c.get());
  }

  void admitsFromTheCachedPrefix() {
    // A (10 tokens, blocks of 4) ran and finished: its 2 full blocks stay cached. B shares A's
    // first 9 tokens: it starts at position 8 and its first chunk is its remaining 4 tokens.
    Scheduler scheduler({2, 64, 4});
    BlockManager blocks(8, 4);
    auto a = makeSequence(1, 10);
    std::deque<Sequence*> waiting{a.get()};
    std::vector<Sequence*> running;
    apply(scheduler.schedule(waiting, running, blocks), blocks);
    releaseBlocks(*a, blocks);
    running.clear();
    auto b = makeSequence(2, 12);
    b->tokens[9] = 3;  // differs from A from token 9 on
    waiting.push_back(b.get());
    const auto outcome = scheduler.schedule(waiting, running, blocks);
    QCOMPARE(outcome.plan.size(), size_t(1));
    QCOMPARE(outcome.plan[0].tokenCount, 4);
    QCOMPARE(b->stats.cachedPromptTokens, 8);
    QCOMPARE(blocks.stats().hitBlocks, int64_t(2));
  }

  void preemptsTheNewestAndResumesIt() {
    // 4 blocks of 4 tokens. A (7 tokens) and B (7 tokens) each take 2 blocks. Both decode until
    // A needs a third block at its 9th token: B (the newest) is preempted, its blocks released
    // (its full blocks stay cached), and B waits at the front of the queue.
    Scheduler scheduler({2, 64, 4});
    BlockManager blocks(4, 4);
    auto a = makeSequence(1, 7, 5), b = makeSequence(2, 7, 6);
    std::deque<Sequence*> waiting{a.get(), b.get()};
    std::vector<Sequence*> running;
    apply(scheduler.schedule(waiting, running, blocks), blocks);  // both prompts: 8 tokens each
    QCOMPARE(blocks.availableCount(), 0);
    // Next step: A decodes its 8th token into its second block (room), B the same.
    auto outcome = scheduler.schedule(waiting, running, blocks);
    QCOMPARE(outcome.plan.size(), size_t(2));
    apply(outcome, blocks);
    // Now each holds 8 computed + 1 new token: A needs a third block; none free -> B preempted.
    outcome = scheduler.schedule(waiting, running, blocks);
    QCOMPARE(outcome.preempted, std::vector<Sequence*>{b.get()});
    QCOMPARE(outcome.plan.size(), size_t(1));
    QCOMPARE(outcome.plan[0].sequence, a.get());
    QCOMPARE(b->computed, 0);
    QVERIFY(b->blockTable.empty());
    QCOMPARE(waiting.front(), b.get());
    QCOMPARE(b->preemptions, 1);
    apply(outcome, blocks);
    // A's third block was B's second (the cache evicts a chain from its end, B's tail was
    // released first). A finishes: B is admitted again with its first block from the cache and
    // recomputes its other 5 tokens (4 + the last sampled one) in one chunk.
    releaseBlocks(*a, blocks);
    std::erase(running, a.get());
    outcome = scheduler.schedule(waiting, running, blocks);
    QCOMPARE(outcome.plan.size(), size_t(1));
    QCOMPARE(outcome.plan[0].sequence, b.get());
    QCOMPARE(b->computed, 4);
    QCOMPARE(outcome.plan[0].tokenCount, 5);
    QCOMPARE(b->stats.cachedPromptTokens, 0);  // set at its first admission only
  }

  void waitsWhileThePoolCannotHoldIt() {
    // A runs with 3 of 4 blocks; B needs 3: it is not admitted (no thrashing) and waits.
    Scheduler scheduler({2, 64, 4});
    BlockManager blocks(4, 4);
    auto a = makeSequence(1, 10), b = makeSequence(2, 9, 9);
    std::deque<Sequence*> waiting{a.get()};
    std::vector<Sequence*> running;
    apply(scheduler.schedule(waiting, running, blocks), blocks);
    waiting.push_back(b.get());
    const auto outcome = scheduler.schedule(waiting, running, blocks);
    QCOMPARE(outcome.plan.size(), size_t(1));
    QCOMPARE(outcome.plan[0].sequence, a.get());
    QCOMPARE(waiting.front(), b.get());
    QVERIFY(b->blockTable.empty());
  }

  void reportsSequencesThatCannotFitAlone() {
    // 2 blocks of 4 tokens: an 8-token prompt fits; its first decode needs a third block.
    Scheduler scheduler({1, 64, 4});
    BlockManager blocks(2, 4);
    auto a = makeSequence(1, 8);
    std::deque<Sequence*> waiting{a.get()};
    std::vector<Sequence*> running;
    apply(scheduler.schedule(waiting, running, blocks), blocks);
    const auto outcome = scheduler.schedule(waiting, running, blocks);
    QVERIFY(outcome.plan.empty());
    QCOMPARE(outcome.outOfBlocks, std::vector<Sequence*>{a.get()});
    QVERIFY(running.empty());
  }
  void capsPromptTokensWhileOthersDecode() {
    // Budget 64, 8 prompt tokens while decoding, blocks of 4. A (3 tokens) is alone: its prompt
    // goes in one step. B (30 tokens) arrives while A decodes: every step is A 1 + B 8, then the
    // rest of B (30 - 24 = 6), then both decode.
    Scheduler scheduler({/*maxRunning*/ 3, /*tokenBudget*/ 64, /*blockSize*/ 4,
                         /*promptBudgetWhileDecoding*/ 8});
    BlockManager blocks(32, 4);
    auto a = makeSequence(1, 3), b = makeSequence(2, 30, 8);
    std::deque<Sequence*> waiting{a.get()};
    std::vector<Sequence*> running;
    auto outcome = scheduler.schedule(waiting, running, blocks);
    QCOMPARE(outcome.plan.size(), size_t(1));
    QCOMPARE(outcome.plan[0].tokenCount, 3);
    apply(outcome, blocks);
    waiting.push_back(b.get());
    const int32_t expectedB[] = {8, 8, 8, 6, 1};
    for (int step = 0; step < 5; ++step) {
      outcome = scheduler.schedule(waiting, running, blocks);
      QCOMPARE(outcome.plan.size(), size_t(2));
      QCOMPARE(outcome.plan[0].sequence, a.get());
      QCOMPARE(outcome.plan[0].tokenCount, 1);
      QCOMPARE(outcome.plan[1].sequence, b.get());
      QCOMPARE(outcome.plan[1].tokenCount, expectedB[step]);
      apply(outcome, blocks);
    }
    QCOMPARE(b->computed, 31);  // its prompt and its first sampled token
  }

  void promptsTakeTheWholeBudgetWhenNothingDecodes() {
    // Same limits. Nothing decodes: A (20) and B (20), arriving together, both go in the first
    // step (40 <= 64), and C (100) alone takes 64 then 36: the cap of 8 never applies.
    Scheduler scheduler({3, 64, 4, 8});
    BlockManager blocks(64, 4);
    auto a = makeSequence(1, 20), b = makeSequence(2, 20, 8);
    std::deque<Sequence*> waiting{a.get(), b.get()};
    std::vector<Sequence*> running;
    auto outcome = scheduler.schedule(waiting, running, blocks);
    QCOMPARE(outcome.plan.size(), size_t(2));
    QCOMPARE(outcome.plan[0].tokenCount, 20);
    QCOMPARE(outcome.plan[1].tokenCount, 20);

    Scheduler alone({1, 64, 4, 8});
    BlockManager others(64, 4);
    auto c = makeSequence(3, 100, 9);
    std::deque<Sequence*> queue{c.get()};
    std::vector<Sequence*> runningC;
    const int32_t expected[] = {64, 36, 1};
    for (int32_t tokens : expected) {
      outcome = alone.schedule(queue, runningC, others);
      QCOMPARE(outcome.plan.size(), size_t(1));
      QCOMPARE(outcome.plan[0].tokenCount, tokens);
      apply(outcome, others);
    }
  }

  void arrivalsShareTheCapOldestFirst() {
    // A decodes; B (10) and C (10) arrive together; cap 8. Step 1: A 1, B 8 (the cap is spent,
    // C waits). Step 2: A 1, B's last 2, C 6. Step 3: A 1, B decodes 1, C's last 4. Step 4: all
    // three decode.
    Scheduler scheduler({3, 64, 4, 8});
    BlockManager blocks(32, 4);
    auto a = makeSequence(1, 3), b = makeSequence(2, 10, 8), c = makeSequence(3, 10, 9);
    std::deque<Sequence*> waiting{a.get()};
    std::vector<Sequence*> running;
    apply(scheduler.schedule(waiting, running, blocks), blocks);
    waiting.push_back(b.get());
    waiting.push_back(c.get());
    const std::vector<std::vector<std::pair<Sequence*, int32_t>>> expected = {
        {{a.get(), 1}, {b.get(), 8}},
        {{a.get(), 1}, {b.get(), 2}, {c.get(), 6}},
        {{a.get(), 1}, {b.get(), 1}, {c.get(), 4}},
        {{a.get(), 1}, {b.get(), 1}, {c.get(), 1}},
    };
    for (const auto& step : expected) {
      const auto outcome = scheduler.schedule(waiting, running, blocks);
      QCOMPARE(outcome.plan.size(), step.size());
      for (size_t i = 0; i < step.size(); ++i) {
        QCOMPARE(outcome.plan[i].sequence, step[i].first);
        QCOMPARE(outcome.plan[i].tokenCount, step[i].second);
      }
      apply(outcome, blocks);
    }
  }

  void recomputesAPreemptedSequenceWithinTheCap() {
    // 6 blocks of 4, no prefix cache, cap 2. A (3), B (7), C (7) arrive together: one step of
    // 17 prompt tokens (nothing decodes), 5 blocks held. One decode step for all three. Then A
    // needs its 2nd block (the last free one) and B its 3rd: C, the newest, is preempted.
    // A finishes; C (9 tokens now) is admitted again next to B's decoding, so its recompute
    // goes 2 tokens a step.
    Scheduler scheduler({3, 64, 4, 2});
    BlockManager blocks(6, 4, /*caching*/ false);
    auto a = makeSequence(1, 3), b = makeSequence(2, 7, 8), c = makeSequence(3, 7, 9);
    std::deque<Sequence*> waiting{a.get(), b.get(), c.get()};
    std::vector<Sequence*> running;
    auto outcome = scheduler.schedule(waiting, running, blocks);
    QCOMPARE(outcome.plan.size(), size_t(3));
    QCOMPARE(outcome.plan[2].tokenCount, 7);
    apply(outcome, blocks);
    QCOMPARE(blocks.availableCount(), 1);
    outcome = scheduler.schedule(waiting, running, blocks);
    QCOMPARE(outcome.plan.size(), size_t(3));
    apply(outcome, blocks);
    outcome = scheduler.schedule(waiting, running, blocks);
    QCOMPARE(outcome.preempted, std::vector<Sequence*>{c.get()});
    QCOMPARE(outcome.plan.size(), size_t(2));
    apply(outcome, blocks);
    releaseBlocks(*a, blocks);
    std::erase(running, a.get());
    QCOMPARE(int(c->tokens.size()), 9);
    for (int step = 0; step < 2; ++step) {
      outcome = scheduler.schedule(waiting, running, blocks);
      QCOMPARE(outcome.plan.size(), size_t(2));
      QCOMPARE(outcome.plan[0].sequence, b.get());
      QCOMPARE(outcome.plan[0].tokenCount, 1);
      QCOMPARE(outcome.plan[1].sequence, c.get());
      QCOMPARE(outcome.plan[1].tokenCount, 2);
      apply(outcome, blocks);
    }
    QCOMPARE(c->computed, 4);
    QCOMPARE(c->preemptions, 1);
  }
};

QTEST_APPLESS_MAIN(SchedulerTest)
#include "test_scheduler.moc"
