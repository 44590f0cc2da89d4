#pragma once
// Repacked kernels in llama.cpp's float order (RepackedMatrix::llamaLanes: Q4_0, Q4_1, Q5_0,
// Q5_1, Q8_0), which give the reference kernels' bits. llama.cpp's x86 vec_dot for these types
// keeps 8 float lanes per row, lane i accumulating fma(float(P_i), d * dx, lane) over the
// blocks, where P_i is the exact integer sum over elements 4i..4i+3 of the block (Q4_0: lane 0
// also holds -8 S); then ((l0 + l4) + (l2 + l6)) + ((l1 + l5) + (l3 + l7)), plus the min terms
// summed as fma(m, f16(dx * S), acc) over the blocks (Q4_1/Q5_1). Here vector j of a block is
// exactly lane j of all 16 rows, so the 8 lanes become 8 accumulators per token of 16 rows
// each: more float work than the fused kernels (hence tiles of 2 tokens), bit-exact results.
// Included by x86_repacked_kernels.h after groupTile's helpers.
#include <vector>

namespace ember::cpu {
namespace {

// Where a tile gets its unpacked weights: from the repacked blocks, from the blocks while also
// keeping the unpacked bytes (512 per block, the w[8] vectors) for the next tiles of the same
// group, or from those kept bytes. The integers are the same either way, so are the bits.
enum class LaneWeights { Unpack, UnpackAndKeep, Kept };

#if defined(__AVX512VNNI__) && defined(__AVX512BW__)

// The kept weights of one group while its tokens go through in tiles: up to 64 blocks (2048
// columns) at 512 bytes, L1-sized; wider matrices unpack in every tile.
constexpr int64_t kKeptLaneBlocks = 64;
constexpr bool kLanesKeepWeights = true;

// (kKeptLaneBlocks, 8 vectors) per thread, allocated by the thread's first batched call.
struct alignas(64) KeptLaneBlock {
  uint8_t bytes[512];
};
inline uint8_t* keptLaneWeights() {
  thread_local std::vector<KeptLaneBlock> kept(static_cast<size_t>(kKeptLaneBlocks));
  return kept.data()->bytes;
}

// Int8's lane sums are sum (w + 128) x - 128 sum x over each quad of x: with the weights kept,
// the second part, which depends on x alone, is computed once per call and starts the vpdpbusd
// (the same integers). (tokens, blocks * 8) per thread, grown on first need.
inline const int32_t* int8QuadOffsets(const RepackedTask& task) {
  thread_local std::vector<int32_t> offsets;
  const int64_t quads = task.m->blocks * 8;
  offsets.resize(std::max(offsets.size(), size_t(task.tokens * quads)));
  for (int64_t t = 0; t < task.tokens; ++t) {
    const auto* xq = reinterpret_cast<const int8_t*>(task.x + size_t(t) * task.xStride);
    int32_t* out = offsets.data() + t * quads;
    for (int64_t q = 0; q < quads; ++q)
      out[q] = -128 * (int32_t(xq[4 * q]) + xq[4 * q + 1] + xq[4 * q + 2] + xq[4 * q + 3]);
  }
  return offsets.data();
}

template <RepackedLayout kLayout, bool kLane0Offset, bool kHasMin, bool kOffset16, int T,
          LaneWeights kWeights = LaneWeights::Unpack>
void laneTile(const RepackedMatrix& m, int64_t g, const uint8_t* x, size_t xStride, float* y,
              int64_t yStride, uint8_t* kept = nullptr, const int32_t* offsets = nullptr,
              int64_t offsetStride = 0) {
  Q8x32Row xr[T];
  for (int t = 0; t < T; ++t) xr[t] = q8x32Row(x + size_t(t) * xStride, m.cols);
  __m512 acc[T][8], accMin[T];
#pragma GCC unroll 8
  for (int t = 0; t < T; ++t) {
    accMin[t] = _mm512_setzero_ps();
#pragma GCC unroll 8
    for (int i = 0; i < 8; ++i) acc[t][i] = _mm512_setzero_ps();
  }
  const __m512i flip = _mm512_set1_epi8(int8_t(0x80));
  const __m512i zero = _mm512_setzero_si512();
  const __m512i bit4 = _mm512_set1_epi8(16);  // Q5_0's offset
  for (int64_t b = 0; b < m.blocks; ++b) {
    const uint8_t* blk = m.block(g, b);
    __m512i w[8];
    if constexpr (kWeights == LaneWeights::Kept) {
#pragma GCC unroll 8
      for (int k = 0; k < 8; ++k) w[k] = _mm512_load_si512(kept + 512 * b + 64 * k);
    } else {
      prefetchBlock(blk + kPrefetchBlocks * m.blockBytes, m.blockBytes);
      unpackBlock<kLayout>(blk, w);
    }
    if constexpr (kWeights == LaneWeights::UnpackAndKeep) {
#pragma GCC unroll 8
      for (int k = 0; k < 8; ++k) _mm512_store_si512(kept + 512 * b + 64 * k, w[k]);
    }
    const __m512 dw = _mm512_cvtph_ps(quant::load256(blk + m.quantBytes));
    __m512 mw;
    if constexpr (kHasMin) mw = _mm512_cvtph_ps(quant::load256(blk + m.quantBytes + 32));
#pragma GCC unroll 8
    for (int t = 0; t < T; ++t) {
      const int8_t* xq = xr[t].qs + 32 * b;
      const __m512 dd = _mm512_mul_ps(dw, _mm512_set1_ps(xr[t].d[b]));
#pragma GCC unroll 8
      for (int i = 0; i < 8; ++i) {
        const __m512i xb = _mm512_set1_epi32(loadQuad(xq + 4 * i));
        __m512i p;
        if constexpr (kLayout == RepackedLayout::Int8 && kWeights != LaneWeights::Unpack)
          p = _mm512_dpbusd_epi32(_mm512_set1_epi32(offsets[t * offsetStride + 8 * b + i]), w[i], xb);
        else
          p = _mm512_dpbusd_epi32(zero, w[i], xb);
        if constexpr (kLayout == RepackedLayout::Int8 && kWeights == LaneWeights::Unpack)
          p = _mm512_sub_epi32(p, _mm512_dpbusd_epi32(zero, flip, xb));  // the +128 of w
        if constexpr (kOffset16)
          p = _mm512_sub_epi32(p, _mm512_dpbusd_epi32(zero, bit4, xb));  // q - 16
        if constexpr (kLane0Offset)
          if (i == 0) p = _mm512_sub_epi32(p, _mm512_set1_epi32(8 * xr[t].sum[b]));
        acc[t][i] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(p), dd, acc[t][i]);
      }
      if constexpr (kHasMin)
        accMin[t] = _mm512_fmadd_ps(mw, _mm512_set1_ps(xr[t].s[b]), accMin[t]);
    }
  }
  const int64_t rows = quant::minOf(kRepackGroupRows, m.rows - g * kRepackGroupRows);
  const __mmask16 valid = __mmask16((1u << rows) - 1);
#pragma GCC unroll 8
  for (int t = 0; t < T; ++t) {
    const __m512* a = acc[t];
    __m512 v = _mm512_add_ps(_mm512_add_ps(_mm512_add_ps(a[0], a[4]), _mm512_add_ps(a[2], a[6])),
                             _mm512_add_ps(_mm512_add_ps(a[1], a[5]), _mm512_add_ps(a[3], a[7])));
    if constexpr (kHasMin) v = _mm512_add_ps(v, accMin[t]);
    _mm512_mask_storeu_ps(y + t * yStride + g * kRepackGroupRows, valid, v);
  }
}

constexpr int kLaneTokenTile = 2;

#else  // AVX2: the same per half group, integer lane sums from vpmaddubsw + vpmaddwd

constexpr int64_t kKeptLaneBlocks = 0;
constexpr bool kLanesKeepWeights = false;  // 16 registers: the unpack is not what limits it
inline uint8_t* keptLaneWeights() { return nullptr; }
inline const int32_t* int8QuadOffsets(const RepackedTask&) { return nullptr; }

template <RepackedLayout kLayout, bool kLane0Offset, bool kHasMin, bool kOffset16, int T,
          LaneWeights kWeights = LaneWeights::Unpack>
void laneTile(const RepackedMatrix& m, int64_t g, const uint8_t* x, size_t xStride, float* y,
              int64_t yStride, uint8_t* = nullptr) {
  static_assert(kWeights == LaneWeights::Unpack);
  Q8x32Row xr[T];
  for (int t = 0; t < T; ++t) xr[t] = q8x32Row(x + size_t(t) * xStride, m.cols);
  const int64_t rows = quant::minOf(kRepackGroupRows, m.rows - g * kRepackGroupRows);
  const __m256i lowNibble = _mm256_set1_epi8(0x0f);
  const __m256i ones = _mm256_set1_epi16(1);
  const __m256i bit4 = _mm256_set1_epi8(16);
  for (int h = 0; h < 2; ++h) {
    if (8 * h >= rows) break;
    __m256 acc[T][8], accMin[T];
    for (int t = 0; t < T; ++t) {
      accMin[t] = _mm256_setzero_ps();
      for (int i = 0; i < 8; ++i) acc[t][i] = _mm256_setzero_ps();
    }
    for (int64_t b = 0; b < m.blocks; ++b) {
      const uint8_t* blk = m.block(g, b);
      if (h == 0) prefetchBlock(blk + kPrefetchBlocks * m.blockBytes, m.blockBytes);
      __m256i w[8];
      if constexpr (kLayout != RepackedLayout::Int8) {
        for (int k = 0; k < 4; ++k) {
          const __m256i packed = quant::load256(blk + 64 * k + 32 * h);
          w[k] = _mm256_and_si256(packed, lowNibble);
          w[4 + k] = _mm256_and_si256(_mm256_srli_epi16(packed, 4), lowNibble);
        }
        if constexpr (kLayout == RepackedLayout::Nibble5) {
          const __m256i high = quant::load256(blk + 256 + 32 * h);  // as in the AVX-512 kernel
          for (int k = 0; k < 8; ++k) {
            const __m256i moved = k < 4 ? _mm256_slli_epi16(high, 4 - k)
                                        : k > 4 ? _mm256_srli_epi16(high, k - 4) : high;
            w[k] = _mm256_or_si256(w[k], _mm256_and_si256(moved, bit4));
          }
        }
      } else {
        for (int k = 0; k < 8; ++k) w[k] = quant::load256(blk + 64 * k + 32 * h);
      }
      const __m256 dw = _mm256_cvtph_ps(quant::load128(blk + m.quantBytes + 16 * h));
      __m256 mw;
      if constexpr (kHasMin) mw = _mm256_cvtph_ps(quant::load128(blk + m.quantBytes + 32 + 16 * h));
      for (int t = 0; t < T; ++t) {
        const int8_t* xq = xr[t].qs + 32 * b;
        const __m256 dd = _mm256_mul_ps(dw, _mm256_set1_ps(xr[t].d[b]));
        for (int i = 0; i < 8; ++i) {
          const __m256i xb = _mm256_set1_epi32(loadQuad(xq + 4 * i));
          __m256i pairs;
          if constexpr (kLayout != RepackedLayout::Int8)
            pairs = _mm256_maddubs_epi16(w[i], xb);  // at most 2 * 31 * 127
          else
            pairs = _mm256_maddubs_epi16(_mm256_sign_epi8(w[i], w[i]), _mm256_sign_epi8(xb, w[i]));
          __m256i p = _mm256_madd_epi16(pairs, ones);
          if constexpr (kOffset16)  // q - 16
            p = _mm256_sub_epi32(p, _mm256_madd_epi16(_mm256_maddubs_epi16(bit4, xb), ones));
          if constexpr (kLane0Offset)
            if (i == 0) p = _mm256_sub_epi32(p, _mm256_set1_epi32(8 * xr[t].sum[b]));
          acc[t][i] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(p), dd, acc[t][i]);
        }
        if constexpr (kHasMin)
          accMin[t] = _mm256_fmadd_ps(mw, _mm256_set1_ps(xr[t].s[b]), accMin[t]);
      }
    }
    const int64_t valid = quant::minOf(8, rows - 8 * h);
    for (int t = 0; t < T; ++t) {
      const __m256* a = acc[t];
      __m256 v = _mm256_add_ps(
          _mm256_add_ps(_mm256_add_ps(a[0], a[4]), _mm256_add_ps(a[2], a[6])),
          _mm256_add_ps(_mm256_add_ps(a[1], a[5]), _mm256_add_ps(a[3], a[7])));
      if constexpr (kHasMin) v = _mm256_add_ps(v, accMin[t]);
      alignas(32) float lanes[8];
      _mm256_store_ps(lanes, v);
      float* out = y + t * yStride + g * kRepackGroupRows + 8 * h;
      for (int64_t r = 0; r < valid; ++r) out[r] = lanes[r];
    }
  }
}

constexpr int kLaneTokenTile = 2;

#endif

}  // namespace
}  // namespace ember::cpu

#if defined(__AVX512VNNI__) && defined(__AVX512BW__)
#include "backend/cpu/x86_repacked_lanes_staged.h"
#endif

namespace ember::cpu {
namespace {

template <RepackedLayout kLayout, bool kLane0Offset, bool kHasMin, bool kOffset16>
void runLanes(const RepackedTask& task) {
  const RepackedMatrix& m = *task.m;
#if defined(__AVX512VNNI__) && defined(__AVX512BW__)
  // Prompts and wide batches: every offset precomputed and the weights staged once per task
  // (x86_repacked_lanes_staged.h); the same bits with less work per token.
  if (task.tokens >= kStagedMinTokens)
    return runStagedLanes<kLayout, kLane0Offset, kHasMin, kOffset16>(task);
#endif
  // More than one tile per group (batched decode of 3-7 tokens): the first tile keeps the
  // unpacked weights and the others read them, so a group's blocks are unpacked once per call.
  const bool keep = kLanesKeepWeights && task.tokens > kLaneTokenTile && m.blocks <= kKeptLaneBlocks;
  uint8_t* kept = keep ? keptLaneWeights() : nullptr;
  const int32_t* offsets = keep && kLayout == RepackedLayout::Int8 ? int8QuadOffsets(task) : nullptr;
  const int64_t quads = m.blocks * 8;
  for (int64_t g = task.group0; g < task.group1; ++g) {
    int64_t t = 0;
    if constexpr (kLanesKeepWeights) {
      if (keep) {
        laneTile<kLayout, kLane0Offset, kHasMin, kOffset16, kLaneTokenTile,
                 LaneWeights::UnpackAndKeep>(m, g, task.x, task.xStride, task.y, task.yStride, kept,
                                             offsets, quads);
        for (t = kLaneTokenTile; t + kLaneTokenTile <= task.tokens; t += kLaneTokenTile)
          laneTile<kLayout, kLane0Offset, kHasMin, kOffset16, kLaneTokenTile, LaneWeights::Kept>(
              m, g, task.x + size_t(t) * task.xStride, task.xStride, task.y + t * task.yStride,
              task.yStride, kept, offsets ? offsets + t * quads : nullptr, quads);
        if (t < task.tokens)
          laneTile<kLayout, kLane0Offset, kHasMin, kOffset16, 1, LaneWeights::Kept>(
              m, g, task.x + size_t(t) * task.xStride, task.xStride, task.y + t * task.yStride,
              task.yStride, kept, offsets ? offsets + t * quads : nullptr, quads);
        continue;
      }
    }
    for (; t + kLaneTokenTile <= task.tokens; t += kLaneTokenTile)
      laneTile<kLayout, kLane0Offset, kHasMin, kOffset16, kLaneTokenTile>(
          m, g, task.x + size_t(t) * task.xStride, task.xStride, task.y + t * task.yStride,
          task.yStride);
    if (t < task.tokens)
      laneTile<kLayout, kLane0Offset, kHasMin, kOffset16, 1>(m, g, task.x + size_t(t) * task.xStride,
                                                  task.xStride, task.y + t * task.yStride,
                                                  task.yStride);
  }
}

RepackedDotFn x86LaneKernel(const RepackedMatrix& m) {
  using L = RepackedLayout;
  if (m.layout == L::Nibble4) {
    if (m.lane0Offset) return runLanes<L::Nibble4, true, false, false>;
    return m.roundedMinSum ? runLanes<L::Nibble4, false, true, false>
                           : runLanes<L::Nibble4, false, false, false>;
  }
  if (m.layout == L::Nibble5) {
    if (m.quantOffset == 16) return runLanes<L::Nibble5, false, false, true>;
    return m.roundedMinSum ? runLanes<L::Nibble5, false, true, false>
                           : runLanes<L::Nibble5, false, false, false>;
  }
  return m.roundedMinSum ? runLanes<L::Int8, false, true, false> : runLanes<L::Int8, false, false, false>;
}

}  // namespace
}  // namespace ember::cpu
