#include "backend/cpu/ops/attention.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "backend/cpu/ops/attention_query_lanes.h"
#include "backend/cpu/ops/half.h"
#include "backend/cpu/ops/reference_order.h"
#include "backend/cpu/ops/vector_math.h"

namespace ember::cpu::ops {
namespace {

// Calls f(position, block, slot, count) for each run of positions in [first, last] that lies in
// one block, in order.
template <class F>
void forEachBlockRun(const KvLayerView& kv, std::span<const int32_t> blockTable, int32_t first,
                     int32_t last, F&& f) {
  int32_t p = first;
  while (p <= last) {
    const int32_t block = blockTable[size_t(p / kv.blockSize)];
    const int32_t slot = p % kv.blockSize;
    const int32_t count = std::min(kv.blockSize - slot, last - p + 1);
    f(p, block, slot, count);
    p += count;
  }
}

// Asks the caches for the bytes [p, p + bytes), a line at a time.
inline void prefetchLines(const void* p, int64_t bytes) {
  const char* c = static_cast<const char*>(p);
  for (int64_t offset = 0; offset < bytes; offset += 64) __builtin_prefetch(c + offset, 0, 3);
}

// out (width) = the lanes (valueLanes, width) of each column summed as sumLanes64 / sumLanes16 do,
// 64 columns at a time with the columns innermost, so that the compiler adds several columns per
// instruction (each column's sums pair the same values in the same order).
void reduceValueLanes(const float* lanes, int valueLanes, int64_t width, float* out) {
  constexpr int64_t kColumns = 64;
  for (int64_t i0 = 0; i0 < width; i0 += kColumns) {
    const int64_t w = std::min(kColumns, width - i0);
    float v[kLanes / 2][kColumns];  // after the first pairing step (l, l + 8)
    const float* at = lanes + i0;
    if (valueLanes == 4 * kLanes) {  // groups (0, 2) and (1, 3), then (0, 1)
      float g[kLanes][kColumns];
      for (int l = 0; l < kLanes; ++l)
        for (int64_t i = 0; i < w; ++i)
          g[l][i] = (at[l * width + i] + at[(32 + l) * width + i]) +
                    (at[(16 + l) * width + i] + at[(48 + l) * width + i]);
      for (int l = 0; l < kLanes / 2; ++l)
        for (int64_t i = 0; i < w; ++i) v[l][i] = g[l][i] + g[l + 8][i];
    } else {
      for (int l = 0; l < kLanes / 2; ++l)
        for (int64_t i = 0; i < w; ++i) v[l][i] = at[l * width + i] + at[(l + 8) * width + i];
    }
    for (int half = 4; half >= 1; half /= 2)
      for (int l = 0; l < half; ++l)
        for (int64_t i = 0; i < w; ++i) v[l][i] += v[l + half][i];
    std::copy(v[0], v[0] + w, out + i0);
  }
}

}  // namespace

void storeKv(const KvLayerView& kv, std::span<const int32_t> blockTable, int32_t position,
             const float* k, const float* v) {
  const VectorKernels& vk = vectorKernels();
  const int32_t block = blockTable[size_t(position / kv.blockSize)];
  const int32_t slot = position % kv.blockSize;
  for (int32_t h = 0; h < kv.kvHeads; ++h) {
    vk.toF16(k + int64_t(h) * kv.headDim, kv.keyAt(block, h, slot), kv.headDim);
    vk.toF16(v + int64_t(h) * kv.valueDim, kv.valueAt(block, h, slot), kv.valueDim);
  }
}

void roundToHalfPrecision(float* x, int64_t n) {
  vectorKernels().scaleToHalf(x, n, 1.0f);  // x * 1 is x exactly: the same roundings, vectorized
}

void attendHead(const float* q, const KvLayerView& kv, std::span<const int32_t> blockTable,
                int32_t kvHead, int32_t first, int32_t last, float scale, StepKind step,
                float* scratch, float* out) {
  const VectorKernels& vk = vectorKernels();
  const bool batched = step == StepKind::SeveralTokens;
  const bool keyLanes64 = !(batched && kv.headDim % kLanes == 0);
  const int valueLanes = batched && kv.valueDim % 4 == 0 ? kLanes : 4 * kLanes;
  // Scores over whole 16-position chunks [chunkStart, chunkEnd); positions outside [first, last]
  // are masked (-inf, weight 0), as llama.cpp's mask does over its KV cells.
  const int32_t chunkStart = first - first % kLanes;
  const int32_t chunkEnd = (last / kLanes + 1) * kLanes;
  float* scores = scratch;                           // (chunkEnd - chunkStart)
  float* lanes = scratch + (chunkEnd - chunkStart);  // (valueLanes, valueDim) value partial sums
  const float masked = -std::numeric_limits<float>::infinity();
  std::fill(scores, scores + (first - chunkStart), masked);
  std::fill(scores + (last + 1 - chunkStart), scores + (chunkEnd - chunkStart), masked);

  float maxScore = masked;
  forEachBlockRun(
      kv, blockTable, first, last, [&](int32_t p, int32_t block, int32_t slot, int32_t n) {
        float* run = scores + (p - chunkStart);
        vk.dotRows(q, kv.keyAt(block, kvHead, slot), n, kv.headDim, scale, keyLanes64, run);
        maxScore = vk.maxValue(run, n, maxScore);
      });
  const double sum = vk.expChunks(scores, (chunkEnd - chunkStart) / kLanes, maxScore);
  vk.scaleToHalf(scores + (first - chunkStart), last - first + 1, float(1.0 / sum));

  std::fill(lanes, lanes + int64_t(valueLanes) * kv.valueDim, 0.0f);
  forEachBlockRun(kv, blockTable, first, last,
                  [&](int32_t p, int32_t block, int32_t slot, int32_t n) {
                    // Zero weights are skipped: adding a zero product changes nothing.
                    vk.accumulateRows(scores + (p - chunkStart), kv.valueAt(block, kvHead, slot), n,
                                      kv.valueDim, lanes, valueLanes, p);
                  });
  reduceValueLanes(lanes, valueLanes, kv.valueDim, out);
}

namespace {

// The runs of positions over which the set of queries seeing them does not change: cuts at each
// query's first and last + 1 positions. Calls f(a, b, active, count) for each run [a, b] that some
// query sees, with the indices of those queries in `active`.
template <class F>
void forEachSharedRange(std::span<const AttentionQuery> queries, F&& f) {
  int32_t cuts[2 * kMaxTileQueries];
  int cutCount = 0;
  for (const AttentionQuery& query : queries) {
    cuts[cutCount++] = query.first;
    cuts[cutCount++] = query.last + 1;
  }
  std::sort(cuts, cuts + cutCount);
  cutCount = int(std::unique(cuts, cuts + cutCount) - cuts);
  int active[kMaxTileQueries];
  for (int c = 0; c + 1 < cutCount; ++c) {
    const int32_t a = cuts[c], b = cuts[c + 1] - 1;
    int count = 0;
    for (int j = 0; j < int(queries.size()); ++j)
      if (queries[size_t(j)].first <= a && b <= queries[size_t(j)].last) active[count++] = j;
    if (count > 0) f(a, b, active, count);
  }
}

}  // namespace

void attendHeads(std::span<const AttentionQuery> queries, const KvLayerView& kv,
                 std::span<const int32_t> blockTable, int32_t kvHead, float scale, StepKind step,
                 float* scratch, float softcap) {
  if (queries.empty()) return;
  const VectorKernels& vk = vectorKernels();
  const bool batched = step == StepKind::SeveralTokens;
  const bool keyLanes64 = !(batched && kv.headDim % kLanes == 0);
  const int valueLanes = batched && kv.valueDim % 4 == 0 ? kLanes : 4 * kLanes;
  if (queries.size() > size_t(kMaxTileQueries)) {  // in tiles of at most kMaxTileQueries
    for (size_t i = 0; i < queries.size(); i += kMaxTileQueries)
      attendHeads(queries.subspan(i, std::min<size_t>(kMaxTileQueries, queries.size() - i)), kv,
                  blockTable, kvHead, scale, step, scratch, softcap);
    return;
  }
  // A several-token step's tile on AVX-512 with the queries in the vector lanes (the same bits);
  // it declines non-finite value rows, which the lane path below takes.
  bool sinks = false;
  for (const AttentionQuery& query : queries) sinks = sinks || query.sink != kNoSink;
  if (batched && softcap <= 0.0f && !sinks && queryLanesAvailable() &&
      attendHeadsQueryLanes(queries, kv, blockTable, kvHead, scale))
    return;
  const int n = int(queries.size());
  int32_t minFirst = queries[0].first, maxLast = queries[0].last;
  for (const AttentionQuery& query : queries) {
    minFirst = std::min(minFirst, query.first);
    maxLast = std::max(maxLast, query.last);
  }
  // Each query's scratch: scores indexed by position - base (its own chunks lie inside), then its
  // value lanes (valueLanes, valueDim).
  const int32_t base = minFirst - minFirst % kLanes;
  const int64_t stride = attentionScratchFloats(maxLast - minFirst + 1, kv.valueDim);
  const int64_t lanesOffset = stride - int64_t(4 * kLanes) * kv.valueDim;
  const float masked = -std::numeric_limits<float>::infinity();
  float* scores[kMaxTileQueries];
  float* lanes[kMaxTileQueries];
  for (int j = 0; j < n; ++j) {
    const AttentionQuery& query = queries[size_t(j)];
    scores[j] = scratch + j * stride;  // scores[j][p - base] for position p
    lanes[j] = scratch + j * stride + lanesOffset;
    // As attendHead: positions of the query's 16-position chunks outside [first, last] masked.
    const int32_t chunkStart = query.first - query.first % kLanes;
    const int32_t chunkEnd = (query.last / kLanes + 1) * kLanes;
    std::fill(scores[j] + (chunkStart - base), scores[j] + (query.first - base), masked);
    std::fill(scores[j] + (query.last + 1 - base), scores[j] + (chunkEnd - base), masked);
  }

  // q.k for each query over its own positions, each key row read once per shared range.
  const float* rowQueries[kMaxTileQueries];
  float* rowOutputs[kMaxTileQueries];
  forEachSharedRange(queries, [&](int32_t a, int32_t b, const int* active, int count) {
    for (int i = 0; i < count; ++i) rowQueries[i] = queries[size_t(active[i])].q;
    forEachBlockRun(kv, blockTable, a, b, [&](int32_t p, int32_t block, int32_t slot, int32_t m) {
      for (int i = 0; i < count; ++i) rowOutputs[i] = scores[active[i]] + (p - base);
      // The next run's keys and this run's values, which the value sums read after the
      // softmax: a decode step reads every cached row of every head once, mostly from memory,
      // one block (2 KiB for 16 x 64 fp16) at a time, which the hardware prefetcher follows late.
      if (const int32_t next = p + m; next <= b) {
        const int32_t nextSlot = next % kv.blockSize;
        prefetchLines(kv.keyAt(blockTable[size_t(next / kv.blockSize)], kvHead, nextSlot),
                      int64_t(std::min(kv.blockSize - nextSlot, b - next + 1)) * kv.headDim * 2);
      }
      prefetchLines(kv.valueAt(block, kvHead, slot), int64_t(m) * kv.valueDim * 2);
      vk.dotRowsMulti(rowQueries, count, kv.keyAt(block, kvHead, slot), m, kv.headDim,
                      softcap > 0.0f ? 1.0f : scale, keyLanes64, rowOutputs);
    });
  });

  // Each query's softmax, as attendHead's: max in position order, exp over its own chunks.
  for (int j = 0; j < n; ++j) {
    const AttentionQuery& query = queries[size_t(j)];
    if (softcap > 0.0f) {  // ggml_scale(1/cap), ggml_tanh, ggml_scale(cap), each in float
      const float inverse = 1.0f / softcap;
      for (float* s = scores[j] + (query.first - base); s <= scores[j] + (query.last - base); ++s)
        *s = std::tanh(*s * inverse) * softcap * scale;
    }
    float maxScore =
        vk.maxValue(scores[j] + (query.first - base), query.last - query.first + 1, masked);
    // A sink joins the softmax as ggml's soft_max does: in the max, and exp(sink - max) in the sum.
    const bool sink = query.sink != kNoSink;
    if (sink) maxScore = std::max(maxScore, query.sink);
    const int32_t chunkStart = query.first - query.first % kLanes;
    const int32_t chunkEnd = (query.last / kLanes + 1) * kLanes;
    double sum =
        vk.expChunks(scores[j] + (chunkStart - base), (chunkEnd - chunkStart) / kLanes, maxScore);
    if (sink) sum += double(std::exp(query.sink - maxScore));
    vk.scaleToHalf(scores[j] + (query.first - base), query.last - query.first + 1,
                   float(1.0 / sum));
  }

  auto valueRow = [&](int32_t position) {
    return kv.valueAt(blockTable[size_t(position / kv.blockSize)], kvHead, position % kv.blockSize);
  };
  // A one-token step's queries (the heads of one token) all see the same positions: their value
  // sums go in one pass where the kernels have it, without lanes in memory.
  bool sameRange = true;
  for (const AttentionQuery& query : queries)
    sameRange = sameRange && query.first == minFirst && query.last == maxLast;
  const int32_t span = maxLast - minFirst + 1;
  if (vk.sumValueLanes64 && valueLanes == 4 * kLanes && sameRange &&
      span <= kValueLanes64MaxRows) {
    const uint16_t* valueRows[kValueLanes64MaxRows];
    for (int32_t i = 0; i < span; ++i) valueRows[i] = valueRow(minFirst + i);
    const float* rowWeights[kMaxTileQueries];
    float* outs[kMaxTileQueries];
    for (int j = 0; j < n; ++j) {
      rowWeights[j] = scores[j] + (minFirst - base);
      outs[j] = queries[size_t(j)].out;
    }
    if (vk.sumValueLanes64(rowWeights, outs, n, valueRows, span, kv.valueDim, minFirst)) return;
  }
  for (int j = 0; j < n; ++j)
    std::fill(lanes[j], lanes[j] + int64_t(valueLanes) * kv.valueDim, 0.0f);

  // The values, each row read once per shared range, in batches of positions across blocks; each
  // lane row still takes its positions in increasing order.
  constexpr int32_t kValueBatch = 512;  // up to Gemma's window in one call
  const float* rowWeights[kMaxTileQueries];
  float* rowLanes[kMaxTileQueries];
  const uint16_t* valueRows[kValueBatch];
  forEachSharedRange(queries, [&](int32_t a, int32_t b, const int* active, int count) {
    for (int i = 0; i < count; ++i) rowLanes[i] = lanes[active[i]];
    for (int32_t p = a; p <= b; p += kValueBatch) {
      const int32_t m = std::min(kValueBatch, b - p + 1);
      for (int32_t i = 0; i < m; ++i) valueRows[i] = valueRow(p + i);
      for (int i = 0; i < count; ++i) rowWeights[i] = scores[active[i]] + (p - base);
      vk.accumulateRowsMulti(rowWeights, rowLanes, count, valueRows, m, kv.valueDim, valueLanes, p);
    }
  });
  for (int j = 0; j < n; ++j)
    reduceValueLanes(lanes[j], valueLanes, kv.valueDim, queries[size_t(j)].out);
}

bool queryLanesAvailable() {
  static const bool available = cpuHasAvx512();
  return available;
}

}  // namespace ember::cpu::ops
