#include "backend/cpu/ops/attention.h"

#include <algorithm>
#include <cmath>
#include <limits>

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
  for (int64_t i = 0; i < n; ++i) x[i] = roundToHalf(x[i]);
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
        for (int32_t i = 0; i < n; ++i) maxScore = std::max(maxScore, run[i]);
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
  // out[d] = the lanes of column d summed as sumLanes64 / sumLanes16 do, row by row.
  const int64_t width = kv.valueDim;
  const auto addRows = [&](int dst, int src) {
    float* d = lanes + dst * width;
    const float* s = lanes + src * width;
    for (int64_t i = 0; i < width; ++i) d[i] += s[i];
  };
  if (valueLanes == 4 * kLanes)  // groups (0, 2) and (1, 3), then (0, 1)
    for (int l = 0; l < kLanes; ++l) {
      addRows(l, 32 + l);
      addRows(16 + l, 48 + l);
      addRows(l, 16 + l);
    }
  for (int half = 8; half >= 1; half /= 2)
    for (int l = 0; l < half; ++l) addRows(l, l + half);
  std::copy(lanes, lanes + width, out);
}

}  // namespace ember::cpu::ops
