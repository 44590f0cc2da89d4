// The query-lanes attention kernel (ops/attention_query_lanes.h: a several-token tile with 16
// queries per AVX-512 register) against attendHead, the per-query path of llama.cpp's
// several-token operation order (ops/reference_order.h), query by query and bit for bit: tiles of
// 1 to 64 queries (full, partial and single registers), spans of more than one conversion batch
// (64 Ki floats: 1024 positions at head size 64, 256 at 256; keys and values of different sizes
// take batches of different lengths), sliding windows that give every token its own first
// position, tiles that start mid-chunk, head sizes the kernel unrolls (64, 128, 256) and ones it
// does not (48, 80), scattered blocks of awkward sizes, a peaked softmax whose weights mostly
// round to 0. Unwritten cache slots hold NaN, so a read outside the positions some query sees
// poisons the result. A value row that is not finite makes the kernel decline without writing
// (the reference skips zero weights there); attendHeads then still gives the reference's bits.
#include <QtTest>
#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>
#include <random>
#include <vector>

#include "backend/cpu/ops/attention.h"
#include "backend/cpu/ops/attention_query_lanes.h"
#include "op_test_support.h"

using namespace ember::cpu::ops;
using ember::test::randomVector;

namespace {

// A cache of `positions` keys and values for 2 kv heads over shuffled blocks.
struct Cache {
  std::vector<int32_t> table;
  std::vector<uint16_t> keys, values;
  KvLayerView kv;

  Cache(int blockSize, int positions, int headDim, int valueDim, std::mt19937& rng) {
    const int kvHeads = 2;
    const int used = (positions + blockSize - 1) / blockSize, count = used + 3;
    std::vector<int32_t> pool(static_cast<size_t>(count));
    std::iota(pool.begin(), pool.end(), 0);
    std::shuffle(pool.begin(), pool.end(), rng);
    table.assign(pool.begin(), pool.begin() + used);
    keys.assign(size_t(count) * kvHeads * blockSize * headDim, 0x7e00);  // NaN
    values.assign(size_t(count) * kvHeads * blockSize * valueDim, 0x7e00);
    kv = {keys.data(), values.data(), count, blockSize, kvHeads, headDim, valueDim};
    for (int p = 0; p < positions; ++p)
      storeKv(kv, table, p, randomVector(rng, size_t(kvHeads) * headDim).data(),
              randomVector(rng, size_t(kvHeads) * valueDim).data());
  }
};

// tokens x group queries, token t at position tileStart + t (its heads consecutive).
std::vector<AttentionQuery> tileQueries(const std::vector<float>& q, std::vector<float>& out,
                                        int tokens, int group, int tileStart, int window,
                                        int headDim, int valueDim) {
  std::vector<AttentionQuery> queries;
  for (int t = 0; t < tokens; ++t)
    for (int h = 0; h < group; ++h) {
      const int last = tileStart + t, i = t * group + h;
      queries.push_back({q.data() + size_t(i) * headDim,
                         window > 0 ? std::max(0, last - window + 1) : 0, last,
                         out.data() + size_t(i) * valueDim});
    }
  return queries;
}

}  // namespace

class TestAttentionQueryLanes : public QObject {
  Q_OBJECT

 private slots:
  void matchesPerQuery_data() {
    QTest::addColumn<int>("blockSize");
    QTest::addColumn<int>("positions");
    QTest::addColumn<int>("tileStart");
    QTest::addColumn<int>("tokens");
    QTest::addColumn<int>("group");
    QTest::addColumn<int>("headDim");
    QTest::addColumn<int>("valueDim");
    QTest::addColumn<int>("window");
    QTest::addColumn<float>("queryScale");
    QTest::addRow("16 tokens x 3 heads = 48 queries over 1816 positions")
        << 16 << 1816 << 1800 << 16 << 3 << 64 << 64 << 0 << 2.0f;
    QTest::addRow("8 tokens x 3 = 24 queries (a register and a half)")
        << 16 << 600 << 592 << 8 << 3 << 64 << 64 << 0 << 2.0f;
    QTest::addRow("16 tokens x 4 = 64 queries, dim 256, window 512, block 7")
        << 7 << 1100 << 1084 << 16 << 4 << 256 << 256 << 512 << 2.0f;
    QTest::addRow("5 queries from position 0, dim 128") << 16 << 40 << 0 << 5 << 1 << 128 << 128
                                                        << 0 << 2.0f;
    QTest::addRow("1 query mid-chunk, block 5") << 5 << 300 << 299 << 1 << 1 << 64 << 64 << 0
                                                << 2.0f;
    QTest::addRow("13 tokens x 2, window 9 < tile, block 16")
        << 16 << 100 << 70 << 13 << 2 << 64 << 64 << 9 << 2.0f;
    QTest::addRow("16 tokens, head 48 (not unrolled), values 80")
        << 16 << 333 << 317 << 16 << 1 << 48 << 80 << 0 << 2.0f;
    QTest::addRow("head 80, values 96: batches of 816 and 672 positions")
        << 16 << 1700 << 1690 << 10 << 2 << 80 << 96 << 0 << 2.0f;
    QTest::addRow("peaked softmax, 10 tokens x 3") << 16 << 700 << 690 << 10 << 3 << 64 << 64 << 0
                                                   << 40.0f;
  }

  void matchesPerQuery() {
    if (!queryLanesAvailable()) QSKIP("this CPU lacks AVX-512 F/BW/VL/DQ: the kernel never runs");
    QFETCH(int, blockSize);
    QFETCH(int, positions);
    QFETCH(int, tileStart);
    QFETCH(int, tokens);
    QFETCH(int, group);
    QFETCH(int, headDim);
    QFETCH(int, valueDim);
    QFETCH(int, window);
    QFETCH(float, queryScale);
    std::mt19937 rng(uint32_t(positions * 13 + tokens * 7 + group));
    Cache cache(blockSize, positions, headDim, valueDim, rng);
    const float scale = 1.0f / std::sqrt(float(headDim));
    const int count = tokens * group;
    for (int kvHead = 0; kvHead < 2; ++kvHead) {
      std::vector<float> q = randomVector(rng, size_t(count) * headDim, queryScale);
      roundToHalfPrecision(q.data(), int64_t(q.size()));
      std::vector<float> out(size_t(count) * valueDim, -1.0f);
      const auto queries =
          tileQueries(q, out, tokens, group, tileStart, window, headDim, valueDim);
      QVERIFY(attendHeadsQueryLanes(queries, cache.kv, cache.table, kvHead, scale));
      std::vector<float> single(size_t(attentionScratchFloats(positions, valueDim)));
      std::vector<float> expected(static_cast<size_t>(valueDim));
      for (int i = 0; i < count; ++i) {
        const AttentionQuery& query = queries[size_t(i)];
        attendHead(query.q, cache.kv, cache.table, kvHead, query.first, query.last, scale,
                   StepKind::SeveralTokens, single.data(), expected.data());
        QVERIFY2(std::memcmp(expected.data(), query.out, sizeof(float) * size_t(valueDim)) == 0,
                 qPrintable(QString("query %1 of kv head %2").arg(i).arg(kvHead)));
      }
    }
  }

  void declinesNonFiniteValues() {
    if (!queryLanesAvailable()) QSKIP("this CPU lacks AVX-512 F/BW/VL/DQ: the kernel never runs");
    std::mt19937 rng(5);
    const int positions = 400, tokens = 16, group = 3, dim = 64;
    Cache cache(16, positions, dim, dim, rng);
    // An infinite value behind a zero key, under a peaked softmax (scores of about +-40 sigma
    // elsewhere, a maximum near +100): its weight rounds to 0 for every query, so the reference
    // skips the row and stays finite, where 0 x inf would be NaN.
    const int row = 3;
    const int32_t block = cache.table[size_t(row / 16)];
    std::fill_n(cache.kv.keyAt(block, 0, row % 16), dim, uint16_t(0));
    cache.kv.valueAt(block, 0, row % 16)[7] = 0x7c00;  // +inf
    const int count = tokens * group;
    std::vector<float> q = randomVector(rng, size_t(count) * dim, 40.0f);
    roundToHalfPrecision(q.data(), int64_t(q.size()));
    std::vector<float> out(size_t(count) * dim, -1.0f);
    const auto queries = tileQueries(q, out, tokens, group, positions - tokens, 0, dim, dim);
    const float scale = 0.125f;
    QVERIFY(!attendHeadsQueryLanes(queries, cache.kv, cache.table, 0, scale));
    QVERIFY(std::all_of(out.begin(), out.end(), [](float x) { return x == -1.0f; }));

    // attendHeads (in the reference's tile size) falls back to the lane path: the reference bits.
    const int tile = 24;
    std::vector<float> scratch(size_t(attentionTileScratchFloats(tile, positions, dim)));
    for (int i = 0; i < count; i += tile)
      attendHeads({queries.data() + i, size_t(tile)}, cache.kv, cache.table, 0, scale,
                  StepKind::SeveralTokens, scratch.data());
    std::vector<float> single(size_t(attentionScratchFloats(positions, dim))), expected(dim);
    for (int i = 0; i < count; ++i) {
      const AttentionQuery& query = queries[size_t(i)];
      attendHead(query.q, cache.kv, cache.table, 0, query.first, query.last, scale,
                 StepKind::SeveralTokens, single.data(), expected.data());
      QVERIFY(std::all_of(expected.begin(), expected.end(),
                          [](float x) { return std::isfinite(x); }));
      QVERIFY2(std::memcmp(expected.data(), query.out, sizeof(float) * size_t(dim)) == 0,
               qPrintable(QString("query %1").arg(i)));
    }
  }
};

QTEST_APPLESS_MAIN(TestAttentionQueryLanes)
#include "test_attention_query_lanes.moc"
