// The KV block pool with prefix caching, against hand-worked cases (hash chains, hits at block
// boundaries, reference counts, LRU eviction) and against a simulated KV store: a randomized run
// of 10,000 add/extend/fork/abort operations "writes" each computed token into the slot its
// block table names, and afterwards every live sequence's blocks must hold its own tokens, every
// cached block the tokens it is keyed by, and no block may leak.
#include <QtTest>

#include <map>
#include <random>

#include "runtime/engine/block_manager.h"
#include "runtime/engine/sequence_blocks.h"

using namespace ember;

namespace {

std::vector<TokenId> iota(int32_t count, TokenId first = 100) {
  std::vector<TokenId> t(static_cast<size_t>(count));
  for (int32_t i = 0; i < count; ++i) t[static_cast<size_t>(i)] = first + i;
  return t;
}

// A sequence that has computed all its tokens but the last, with its full blocks committed.
Sequence computedSequence(const std::vector<TokenId>& tokens, BlockManager& blocks) {
  Sequence s;
  s.tokens = tokens;
  s.promptLength = static_cast<int32_t>(tokens.size());
  acquireCachedPrefix(s, blocks);
  if (!reserveBlocks(s, static_cast<int32_t>(tokens.size()), blocks)) throw std::runtime_error("pool");
  s.computed = static_cast<int32_t>(tokens.size());
  commitComputedBlocks(s, blocks);
  return s;
}

}  // namespace

class BlockManagerTest : public QObject {
  Q_OBJECT

 private slots:
  void keysChainThroughParents() {
    const auto a = iota(4), b = iota(4, 200);
    const uint64_t ka = BlockManager::chainKey(BlockManager::kRootKey, a);
    QCOMPARE(BlockManager::chainKey(BlockManager::kRootKey, a), ka);  // deterministic
    QVERIFY(BlockManager::chainKey(ka, b) != BlockManager::chainKey(BlockManager::kRootKey, b));
    QVERIFY(BlockManager::chainKey(BlockManager::kRootKey, b) != ka);
    std::vector<TokenId> swapped = a;
    std::swap(swapped[0], swapped[1]);
    QVERIFY(BlockManager::chainKey(BlockManager::kRootKey, swapped) != ka);
  }

  void hitsStopAtBlockBoundaries_data() {
    // A 40-token prompt was computed with blocks of 16: blocks 0 and 1 are full and cached.
    // A new prompt sharing the first `shared` tokens (then different ones) of `length` tokens
    // reuses floor(min(shared, length - 1) / 16) blocks, at most 2.
    QTest::addColumn<int>("shared");
    QTest::addColumn<int>("length");
    QTest::addColumn<int>("hitBlocks");
    QTest::newRow("first token differs") << 0 << 50 << 0;
    QTest::newRow("15 shared") << 15 << 50 << 0;
    QTest::newRow("16 shared") << 16 << 50 << 1;
    QTest::newRow("31 shared") << 31 << 50 << 1;
    QTest::newRow("32 shared") << 32 << 50 << 2;
    QTest::newRow("40 shared, longer") << 40 << 60 << 2;
    QTest::newRow("identical 40") << 40 << 40 << 2;
    // Exactly 32 tokens, all cached: the last one must still be computed for its logits.
    QTest::newRow("32 of 32") << 32 << 32 << 1;
  }
  void hitsStopAtBlockBoundaries() {
    QFETCH(int, shared);
    QFETCH(int, length);
    QFETCH(int, hitBlocks);
    BlockManager blocks(16, 16);
    Sequence first = computedSequence(iota(40), blocks);
    releaseBlocks(first, blocks);
    QCOMPARE(blocks.stats().cachedBlocks, 2);
    std::vector<TokenId> prompt = iota(length);
    for (int i = shared; i < length; ++i) prompt[static_cast<size_t>(i)] = 9000 + i;
    Sequence s;
    s.tokens = prompt;
    s.promptLength = length;
    acquireCachedPrefix(s, blocks);
    QCOMPARE(int(s.blockTable.size()), hitBlocks);
    QCOMPARE(s.computed, hitBlocks * 16);
    QCOMPARE(s.stats.cachedPromptTokens, hitBlocks * 16);
    for (int32_t b : s.blockTable) QCOMPARE(blocks.referenceCount(b), 1);
  }

  void sharedBlocksAreCountedAndKept() {
    BlockManager blocks(8, 4);
    Sequence a = computedSequence(iota(9), blocks);  // blocks 0,1 full, 2 partial
    Sequence b;
    b.tokens = iota(12);
    b.promptLength = 12;
    acquireCachedPrefix(b, blocks);  // takes a's two full blocks
    QCOMPARE(b.blockTable, std::vector<int32_t>(a.blockTable.begin(), a.blockTable.begin() + 2));
    QCOMPARE(blocks.referenceCount(a.blockTable[0]), 2);
    releaseBlocks(a, blocks);
    QCOMPARE(blocks.referenceCount(b.blockTable[0]), 1);
    QCOMPARE(blocks.stats().referencedBlocks, 2);
    // a's partial block went back to the free list; the shared ones stay referenced by b.
    QCOMPARE(blocks.availableCount(), 6);
    releaseBlocks(b, blocks);
    QCOMPARE(blocks.stats().referencedBlocks, 0);
    QCOMPARE(blocks.stats().cachedBlocks, 2);
    QCOMPARE(blocks.availableCount(), 8);
    QVERIFY_THROWS_EXCEPTION(std::exception, blocks.release(0));
    QVERIFY_THROWS_EXCEPTION(std::exception, blocks.release(99));
  }

  void evictsLeastRecentlyUsedDeepestFirst() {
    // Pool of 4 blocks of 2. Chain A (2 blocks) released first, chain B (2 blocks) later. New
    // allocations take A's blocks first, A's second block before its first.
    BlockManager blocks(4, 2);
    Sequence a = computedSequence({1, 2, 3, 4}, blocks);
    Sequence b = computedSequence({5, 6, 7, 8}, blocks);
    const auto aBlocks = a.blockTable, bBlocks = b.blockTable;
    releaseBlocks(a, blocks);
    releaseBlocks(b, blocks);
    QCOMPARE(blocks.availableCount(), 4);
    QCOMPARE(*blocks.allocate(), aBlocks[1]);
    QCOMPARE(*blocks.allocate(), aBlocks[0]);
    QCOMPARE(blocks.stats().evictedBlocks, int64_t(2));
    // A is gone, B still hits; touching B makes it the most recently used.
    Sequence again;
    again.tokens = {5, 6, 7, 8, 9};
    again.promptLength = 5;
    acquireCachedPrefix(again, blocks);
    QCOMPARE(again.blockTable, bBlocks);
    Sequence lost;
    lost.tokens = {1, 2, 3, 4, 9};
    acquireCachedPrefix(lost, blocks);
    QVERIFY(lost.blockTable.empty());
    QVERIFY(!blocks.allocate().has_value());  // everything referenced
  }

  void duplicateContentStaysPrivate() {
    // Two sequences compute the same prompt at once: the second's blocks are not cached twice.
    BlockManager blocks(8, 4);
    Sequence a = computedSequence(iota(8), blocks);
    Sequence b;
    b.tokens = iota(8);
    QVERIFY(reserveBlocks(b, 8, blocks));  // computed privately, not from the cache
    b.computed = 8;
    commitComputedBlocks(b, blocks);
    QCOMPARE(b.blockKeys, a.blockKeys);  // same chain keys
    QVERIFY(!blocks.isCached(b.blockTable[0]));
    releaseBlocks(b, blocks);
    QCOMPARE(blocks.stats().freeBlocks, 6);
    QCOMPARE(blocks.stats().cachedBlocks, 2);
  }

  void cachingOffNeverHits() {
    BlockManager blocks(8, 4, /*caching*/ false);
    Sequence a = computedSequence(iota(8), blocks);
    releaseBlocks(a, blocks);
    Sequence b;
    b.tokens = iota(9);
    acquireCachedPrefix(b, blocks);
    QVERIFY(b.blockTable.empty());
    QCOMPARE(blocks.stats().cachedBlocks, 0);
    QCOMPARE(blocks.stats().freeBlocks, 8);
  }

  void spilledBlocksComeBackThroughTheTier() {
    // A tier that remembers what it was given: A's two blocks are evicted into it, and A's next
    // prompt gets them back (in chain order) into whatever blocks the pool hands out.
    struct RecordingSpill : BlockSpill {
      std::map<uint64_t, std::pair<uint64_t, std::vector<TokenId>>> held;
      std::vector<std::pair<uint64_t, int32_t>> restores;
      void spill(int32_t, uint64_t key, uint64_t parent, std::span<const TokenId> t) override {
        held[key] = {parent, std::vector<TokenId>(t.begin(), t.end())};
      }
      bool holds(uint64_t key, uint64_t parent, std::span<const TokenId> t) const override {
        const auto it = held.find(key);
        return it != held.end() && it->second.first == parent &&
               std::equal(it->second.second.begin(), it->second.second.end(), t.begin(), t.end());
      }
      bool restore(uint64_t key, int32_t block) override {
        restores.emplace_back(key, block);
        return held.erase(key) == 1;
      }
    } tier;
    BlockManager blocks(2, 2);
    blocks.setSpill(&tier);
    Sequence a = computedSequence({1, 2, 3, 4}, blocks);
    const std::vector<uint64_t> keys = a.blockKeys;
    releaseBlocks(a, blocks);
    Sequence other;
    other.tokens = {9, 9, 9, 9};
    QVERIFY(reserveBlocks(other, 4, blocks));  // evicts both of A's blocks into the tier
    QCOMPARE(tier.held.size(), size_t(2));
    QCOMPARE(blocks.stats().spilledBlocks, int64_t(2));
    releaseBlocks(other, blocks);  // private blocks: back to the free list
    Sequence again;
    again.tokens = {1, 2, 3, 4, 5};
    again.promptLength = 5;
    acquireCachedPrefix(again, blocks);
    QCOMPARE(again.computed, 4);
    QCOMPARE(again.blockKeys, keys);
    QCOMPARE(tier.restores.size(), size_t(2));
    QCOMPARE(tier.restores[0].first, keys[0]);
    QCOMPARE(tier.restores[1].first, keys[1]);
    QCOMPARE(blocks.stats().restoredBlocks, int64_t(2));
    QVERIFY(blocks.isCached(again.blockTable[0]));  // cached again, under the same keys
    QVERIFY(tier.held.empty());
  }

  void randomizedOperationsKeepEveryBlockConsistent() {
    constexpr int32_t kBlockSize = 4, kBlocks = 48;
    BlockManager blocks(kBlocks, kBlockSize);
    // The simulated KV store: what each slot of each block holds (-1: never written).
    std::vector<TokenId> kv(static_cast<size_t>(kBlocks * kBlockSize), -1);
    std::map<int, std::unique_ptr<Sequence>> live;
    std::mt19937 rng(20261129);
    int nextId = 0;
    auto pick = [&]() -> Sequence* {
      if (live.empty()) return nullptr;
      auto it = live.begin();
      std::advance(it, std::uniform_int_distribution<size_t>(0, live.size() - 1)(rng));
      return it->second.get();
    };
    // "Computes" the sequence's pending tokens: writes them into their slots, as a backend would.
    auto compute = [&](Sequence& s) {
      if (!reserveBlocks(s, static_cast<int32_t>(s.tokens.size()), blocks)) return false;
      for (int32_t p = s.computed; p < static_cast<int32_t>(s.tokens.size()); ++p) {
        const int32_t block = s.blockTable[static_cast<size_t>(p / kBlockSize)];
        // Never write a block someone else holds or the cache keys.
        if (blocks.referenceCount(block) != 1 || blocks.isCached(block))
          qFatal("write into shared or cached block %d", block);
        kv[static_cast<size_t>(block * kBlockSize + p % kBlockSize)] = s.tokens[static_cast<size_t>(p)];
      }
      s.computed = static_cast<int32_t>(s.tokens.size());
      commitComputedBlocks(s, blocks);
      return true;
    };
    auto add = [&](std::vector<TokenId> tokens) {
      auto s = std::make_unique<Sequence>();
      s->tokens = std::move(tokens);
      s->promptLength = static_cast<int32_t>(s->tokens.size());
      acquireCachedPrefix(*s, blocks);
      if (compute(*s)) {
        live.emplace(nextId++, std::move(s));
      } else {
        releaseBlocks(*s, blocks);  // the pool is full: the request would wait
      }
    };
    std::uniform_int_distribution<int> op(0, 3), len(1, 14), tok(0, 2);
    for (int i = 0; i < 10000; ++i) {
      Sequence* s = pick();
      switch (op(rng)) {
        case 0: {  // add: a new prompt from a 3-token alphabet (so prefixes repeat a lot)
          std::vector<TokenId> t(static_cast<size_t>(len(rng)));
          for (auto& x : t) x = tok(rng);
          add(std::move(t));
          break;
        }
        case 1:  // extend: decode a few tokens
          if (s) {
            for (int k = len(rng) / 4 + 1; k > 0; --k) s->tokens.push_back(tok(rng));
            if (!compute(*s)) s->tokens.resize(static_cast<size_t>(s->computed));
          }
          break;
        case 2:  // fork: regenerate from a prefix of another sequence
          if (s) {
            const auto keep = std::uniform_int_distribution<size_t>(1, s->tokens.size())(rng);
            std::vector<TokenId> t(s->tokens.begin(), s->tokens.begin() + static_cast<long>(keep));
            t.push_back(tok(rng));
            add(std::move(t));
          }
          break;
        default:  // abort / finish
          if (s) {
            releaseBlocks(*s, blocks);
            std::erase_if(live, [s](const auto& e) { return e.second.get() == s; });
          }
      }
      // Reference counts equal the number of live tables naming each block.
      std::vector<int32_t> refs(kBlocks, 0);
      for (const auto& [id, q] : live)
        for (int32_t b : q->blockTable) ++refs[static_cast<size_t>(b)];
      for (int32_t b = 0; b < kBlocks; ++b)
        if (refs[static_cast<size_t>(b)] != blocks.referenceCount(b))
          QFAIL(qPrintable(QString("op %1: block %2 has %3 references, tables name it %4 times")
                               .arg(i).arg(b).arg(blocks.referenceCount(b)).arg(refs[size_t(b)])));
    }
    // Every live sequence's blocks hold its own tokens.
    for (const auto& [id, q] : live)
      for (int32_t p = 0; p < q->computed; ++p)
        QCOMPARE(kv[static_cast<size_t>(q->blockTable[static_cast<size_t>(p / kBlockSize)] *
                                            kBlockSize + p % kBlockSize)],
                 q->tokens[static_cast<size_t>(p)]);
    // Every cached block holds the tokens it is keyed by.
    for (int32_t b = 0; b < kBlocks; ++b)
      if (const auto t = blocks.cachedTokens(b))
        for (int32_t k = 0; k < kBlockSize; ++k)
          QCOMPARE(kv[static_cast<size_t>(b * kBlockSize + k)], (*t)[static_cast<size_t>(k)]);
    QVERIFY(blocks.stats().hitBlocks > 100);   // the run exercised the cache
    QVERIFY(blocks.stats().evictedBlocks > 0);  // and eviction
    for (auto& [id, q] : live) releaseBlocks(*q, blocks);
    QCOMPARE(blocks.stats().referencedBlocks, 0);  // nothing leaked
    QCOMPARE(blocks.availableCount(), kBlocks);
  }
};

QTEST_APPLESS_MAIN(BlockManagerTest)
#include "test_block_manager.moc"
