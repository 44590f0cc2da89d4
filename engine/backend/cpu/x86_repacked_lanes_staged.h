#pragma once
// The llama.cpp-order lane kernels (x86_repacked_lanes.h) for prompts, AVX-512 VNNI: the same
// integer lane sums P_i and the same float steps, so the same bits, with less work per token.
// - A row group's weights are unpacked once per task into an L1/L2 buffer of ready unsigned
//   bytes (8 vectors of 16 rows x 4 elements per block), instead of once per 2-token tile.
// - The offset that laneTile subtracts per lane and token (Q5_0's 16 S_i, Int8's 128 S_i, Q4_0's
//   8 S in lane 0; S_i the sum of the activation quad, row-independent) is computed once per task
//   for every token and block and becomes the start value of that lane's vpdpbusd.
// So a lane of a token costs one vpdpbusd, one conversion and one fma.
// - The next row group's bytes are prefetched while this one computes, spread over its tiles'
//   block steps: the unpack of a group otherwise stalls on memory with the arithmetic units idle
//   (a batched decode step reads every weight once, as a one-token step does).
// Included by x86_repacked_lanes.h in the AVX-512 build only.
#include <vector>

namespace ember::cpu {
namespace {

// Tasks of at least this many tokens take the staged kernel (fewer: laneTile, which needs no
// staging pass).
constexpr int64_t kStagedMinTokens = 8;
constexpr int kStagedTile = 3;  // tokens per tile: 24 accumulators (of 32 registers)

// Cache lines handed to the prefetcher a few at a time: [next, end), `perStep` per block step.
struct PrefetchStream {
  const uint8_t* next = nullptr;
  const uint8_t* end = nullptr;
  int perStep = 0;
  void step() {
    for (int k = 0; k < perStep && next < end; ++k, next += 64)
      _mm_prefetch(reinterpret_cast<const char*>(next), _MM_HINT_T0);
  }
};

struct StagedScratch {
  std::vector<__m512i> weights;  // (blocks, 8) vectors of one row group
  std::vector<int32_t> starts;   // (tokens, blocks, 8): each lane's vpdpbusd start value
};

// kStarts: whether the lanes start from the precomputed offsets (false: they are all zero).
template <RepackedLayout kLayout, bool kHasMin, bool kStarts, int T>
void stagedTile(const RepackedMatrix& m, int64_t g, const __m512i* w, const int32_t* starts,
                const uint8_t* x, size_t xStride, float* y, int64_t yStride,
                PrefetchStream& ahead) {
  Q8x32Row xr[T];
  for (int t = 0; t < T; ++t) xr[t] = q8x32Row(x + size_t(t) * xStride, m.cols);
  __m512 acc[T][8], accMin[T];
#pragma GCC unroll 8
  for (int t = 0; t < T; ++t) {
    accMin[t] = _mm512_setzero_ps();
#pragma GCC unroll 8
    for (int i = 0; i < 8; ++i) acc[t][i] = _mm512_setzero_ps();
  }
  const size_t startStride = size_t(m.blocks) * 8;
  for (int64_t b = 0; b < m.blocks; ++b) {
    const uint8_t* blk = m.block(g, b);
    ahead.step();
    const __m512 dw = _mm512_cvtph_ps(quant::load256(blk + m.quantBytes));
    __m512 dd[T];
#pragma GCC unroll 8
    for (int t = 0; t < T; ++t) dd[t] = _mm512_mul_ps(dw, _mm512_set1_ps(xr[t].d[b]));
#pragma GCC unroll 8
    for (int i = 0; i < 8; ++i) {
      const __m512i wi = _mm512_load_si512(w + 8 * b + i);
#pragma GCC unroll 8
      for (int t = 0; t < T; ++t) {
        const __m512i start = kStarts
                                  ? _mm512_set1_epi32(starts[size_t(t) * startStride + 8 * b + i])
                                  : _mm512_setzero_si512();
        const __m512i p = _mm512_dpbusd_epi32(
            start, wi, _mm512_set1_epi32(loadQuad(xr[t].qs + 32 * b + 4 * i)));
        acc[t][i] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(p), dd[t], acc[t][i]);
      }
    }
    if constexpr (kHasMin) {
      const __m512 mw = _mm512_cvtph_ps(quant::load256(blk + m.quantBytes + 32));
#pragma GCC unroll 8
      for (int t = 0; t < T; ++t)
        accMin[t] = _mm512_fmadd_ps(mw, _mm512_set1_ps(xr[t].s[b]), accMin[t]);
    }
  }
  const int64_t rows = quant::minOf(kRepackGroupRows, m.rows - g * kRepackGroupRows);
  const __mmask16 valid = __mmask16((1u << rows) - 1);
#pragma GCC unroll 8
  for (int t = 0; t < T; ++t) {  // laneTile's final sum
    const __m512* a = acc[t];
    __m512 v = _mm512_add_ps(_mm512_add_ps(_mm512_add_ps(a[0], a[4]), _mm512_add_ps(a[2], a[6])),
                             _mm512_add_ps(_mm512_add_ps(a[1], a[5]), _mm512_add_ps(a[3], a[7])));
    if constexpr (kHasMin) v = _mm512_add_ps(v, accMin[t]);
    _mm512_mask_storeu_ps(y + t * yStride + g * kRepackGroupRows, valid, v);
  }
}

template <RepackedLayout kLayout, bool kLane0Offset, bool kHasMin, bool kOffset16>
void runStagedLanes(const RepackedTask& task) {
  const RepackedMatrix& m = *task.m;
  thread_local StagedScratch scratch;
  const size_t perToken = size_t(m.blocks) * 8;
  // The start values: -offset * S_i per lane (S_i: the quad's exact sum), -8 S in Q4_0's lane 0.
  constexpr int32_t kOffset = kLayout == RepackedLayout::Int8 ? 128 : kOffset16 ? 16 : 0;
  constexpr bool kStarts = kOffset != 0 || kLane0Offset;  // else every start is 0
  if constexpr (kStarts) scratch.starts.resize(size_t(task.tokens) * perToken);
  scratch.weights.resize(perToken);
  const __m256i ones = _mm256_set1_epi8(1);
  for (int64_t t = 0; kStarts && t < task.tokens; ++t) {
    const Q8x32Row xr = q8x32Row(task.x + size_t(t) * task.xStride, m.cols);
    int32_t* s = scratch.starts.data() + size_t(t) * perToken;
    for (int64_t b = 0; b < m.blocks; ++b) {
      __m256i v = _mm256_setzero_si256();
      if constexpr (kOffset != 0) {
        const __m256i sums = _mm256_dpbusd_epi32(_mm256_setzero_si256(), ones,
                                                 quant::load256(xr.qs + 32 * b));
        v = _mm256_mullo_epi32(sums, _mm256_set1_epi32(-kOffset));
      }
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(s + 8 * b), v);
      if constexpr (kLane0Offset) s[8 * b] -= 8 * xr.sum[b];
    }
  }
  const int64_t groupBytes = m.blocks * int64_t(m.blockBytes);
  const int64_t blockSteps = (task.tokens + kStagedTile - 1) / kStagedTile * m.blocks;
  const int perStep = int((groupBytes / 64 + blockSteps - 1) / blockSteps);
  for (int64_t g = task.group0; g < task.group1; ++g) {
    __m512i* w = scratch.weights.data();
    for (int64_t b = 0; b < m.blocks; ++b) unpackBlock<kLayout>(m.block(g, b), w + 8 * b);
    PrefetchStream ahead;
    if (g + 1 < task.group1) ahead = {m.block(g + 1, 0), m.block(g + 1, 0) + groupBytes, perStep};
    // Tokens [t, t + T) of this group; starts is unused (and empty) when every start is 0.
    auto tile = [&]<int T>(int64_t t) {
      const int32_t* starts = kStarts ? scratch.starts.data() + size_t(t) * perToken : nullptr;
      stagedTile<kLayout, kHasMin, kStarts, T>(m, g, w, starts, task.x + size_t(t) * task.xStride,
                                               task.xStride, task.y + t * task.yStride,
                                               task.yStride, ahead);
    };
    int64_t t = 0;
    for (; t + kStagedTile <= task.tokens; t += kStagedTile)
      tile.template operator()<kStagedTile>(t);
    if (task.tokens - t == 2) tile.template operator()<2>(t);
    if (task.tokens - t == 1) tile.template operator()<1>(t);
  }
}

}  // namespace
}  // namespace ember::cpu
