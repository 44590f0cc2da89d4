// The scheduler's plans for scripted arrivals, checked against plans worked out by hand from its
// rules: admit up to maxRunning, decodes first (one token each), then prompt chunks oldest first
// within the token budget, KV blocks reserved for exactly the tokens computed.
#include <QtTest>

#include "runtime/engine/scheduler.h"

using namespace ember;

namespace {

std::unique_ptr<Sequence> makeSequence(RequestId id, int32_t promptLength) {
  auto s = std::make_unique<Sequence>();
  s->id = id;
  s->tokens.assign(static_cast<size_t>(promptLength), 7);
  s->promptLength = promptLength;
  return s;
}

// Applies a plan as the engine would: the tokens are computed, and a sequence that finished its
// prompt or decoded gets one new token.
void apply(const std::vector<ScheduledWork>& plan) {
  for (const ScheduledWork& w : plan) {
    w.sequence->computed += w.tokenCount;
    if (!w.sequence->prefilling()) w.sequence->tokens.push_back(1);
  }
}

}  // namespace

class SchedulerTest : public QObject {
  Q_OBJECT

 private slots:
  void chunksLongPromptsWithinBudget() {
    // Budget 8, block size 4: a 20-token prompt takes chunks 8, 8, 4, then decodes.
    Scheduler scheduler({/*maxRunning*/ 2, /*tokenBudget*/ 8, /*blockSize*/ 4});
    BlockAllocator blocks(16);
    auto a = makeSequence(1, 20);
    std::deque<Sequence*> waiting{a.get()};
    std::vector<Sequence*> running, full;
    const int32_t expected[] = {8, 8, 4, 1, 1};
    const int32_t expectedBlocks[] = {2, 4, 5, 6, 6};  // ceil(computed-after / 4)
    for (int i = 0; i < 5; ++i) {
      const auto plan = scheduler.schedule(waiting, running, blocks, full);
      QCOMPARE(plan.size(), size_t(1));
      QCOMPARE(plan[0].tokenCount, expected[i]);
      QCOMPARE(int(a->blockTable.size()), expectedBlocks[i]);
      apply(plan);
    }
    QVERIFY(full.empty());
    QCOMPARE(blocks.freeCount(), 16 - 6);
  }

  void decodesComeBeforePromptChunks() {
    // A is decoding when B (10 tokens) arrives; budget 6: A decodes 1, B gets 5, then A 1, B 5.
    Scheduler scheduler({2, 6, 16});
    BlockAllocator blocks(8);
    auto a = makeSequence(1, 3);
    auto b = makeSequence(2, 10);
    std::deque<Sequence*> waiting{a.get()};
    std::vector<Sequence*> running, full;
    apply(scheduler.schedule(waiting, running, blocks, full));  // A's prompt
    QVERIFY(!a->prefilling());
    waiting.push_back(b.get());
    for (int round = 0; round < 2; ++round) {
      const auto plan = scheduler.schedule(waiting, running, blocks, full);
      QCOMPARE(plan.size(), size_t(2));
      QCOMPARE(plan[0].sequence, a.get());
      QCOMPARE(plan[0].tokenCount, 1);
      QCOMPARE(plan[1].sequence, b.get());
      QCOMPARE(plan[1].tokenCount, 5);
      apply(plan);
    }
    QVERIFY(!b->prefilling());
  }

  void admitsAtMostMaxRunning() {
    Scheduler scheduler({2, 100, 16});
    BlockAllocator blocks(8);
    auto a = makeSequence(1, 4), b = makeSequence(2, 4), c = makeSequence(3, 4);
    std::deque<Sequence*> waiting{a.get(), b.get(), c.get()};
    std::vector<Sequence*> running, full;
    const auto plan = scheduler.schedule(waiting, running, blocks, full);
    QCOMPARE(plan.size(), size_t(2));
    QCOMPARE(running.size(), size_t(2));
    QCOMPARE(waiting.size(), size_t(1));
    QCOMPARE(waiting.front(), c.get());
  }

  void reportsSequencesThatRunOutOfBlocks() {
    // 2 blocks of 4 tokens: an 8-token prompt fits; its first decode needs a third block.
    Scheduler scheduler({1, 64, 4});
    BlockAllocator blocks(2);
    auto a = makeSequence(1, 8);
    std::deque<Sequence*> waiting{a.get()};
    std::vector<Sequence*> running, full;
    apply(scheduler.schedule(waiting, running, blocks, full));
    QVERIFY(full.empty());
    const auto plan = scheduler.schedule(waiting, running, blocks, full);
    QVERIFY(plan.empty());
    QCOMPARE(full.size(), size_t(1));
    QCOMPARE(full[0], a.get());
  }

  void blockAllocatorRejectsDoubleRelease() {
    BlockAllocator blocks(3);
    const auto b0 = blocks.allocate();
    QCOMPARE(*b0, 0);
    blocks.release(*b0);
    QVERIFY_THROWS_EXCEPTION(std::exception, blocks.release(*b0));
    QVERIFY_THROWS_EXCEPTION(std::exception, blocks.release(7));
    QCOMPARE(blocks.freeCount(), 3);
  }
};

QTEST_APPLESS_MAIN(SchedulerTest)
#include "test_scheduler.moc"
