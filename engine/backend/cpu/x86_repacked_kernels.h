#pragma once
// The x86 repacked kernels (see repacked_kernels.h), included once by the AVX-512 build and once
// by the AVX2 build; everything has internal linkage.
//
// AVX-512 VNNI: the 16 rows of a group are the 16 lanes of a vector. Per block the weights are
// unpacked once into 8 vectors W[j] (elements 4j..4j+3 of every row; Int8 as q + 128 so that
// they are vpdpbusd's unsigned side, with 128 * S subtracted from the exact sum), then for each
// token of the tile 8 vpdpbusd against the broadcast activation quads give the 16 row sums.
// Nibble5 ORs the fifth bits into the nibbles and subtracts offset * S from the exact sum.
// AVX2: the same per half group (8 rows per 256-bit vector) with vpmaddubsw: Nibble4 sums the
// 16-bit pairs of all 8 vectors (at most 8 * 2 * 15 * 127 = 30480, no overflow) before one
// vpmaddwd, Nibble5 those of 4 vectors at a time (4 * 2 * 31 * 127 = 31496); Int8 multiplies |q| by sign(x, q) (pairs at most 2 * 128 * 127) and widens each.
#include "backend/cpu/quant/kernels.h"
#include "backend/cpu/quant/x86_simd.h"
#include "backend/cpu/repacked_kernels.h"

namespace ember::cpu {
namespace {

using quant::Q8x32Row;
using quant::q8x32Row;

inline int32_t loadQuad(const int8_t* p) {
  int32_t v;
  std::memcpy(&v, p, 4);
  return v;
}

// Decode streams the weights once per token, faster than the hardware prefetcher follows: every
// cache line of the block this many blocks ahead (the matrix's groups follow one another, so
// this runs into the next group; prefetching past the end is harmless).
constexpr int64_t kPrefetchBlocks = 12;
inline void prefetchBlock(const uint8_t* p, size_t bytes) {
  for (size_t off = 0; off < bytes; off += 64)
    _mm_prefetch(reinterpret_cast<const char*>(p + off), _MM_HINT_T0);
}

#if defined(__AVX512VNNI__) && defined(__AVX512BW__)

// w[j] = elements 4j..4j+3 of the block's 16 rows as vpdpbusd's unsigned bytes: the nibbles
// (Nibble4), with the fifth bits ORed in (Nibble5), or q + 128 (Int8).
template <RepackedLayout kLayout>
inline void unpackBlock(const uint8_t* blk, __m512i w[8]) {
  if constexpr (kLayout != RepackedLayout::Int8) {
    const __m512i lowNibble = _mm512_set1_epi8(0x0f);
#pragma GCC unroll 4
    for (int k = 0; k < 4; ++k) {
      const __m512i packed = _mm512_loadu_si512(blk + 64 * k);
      w[k] = _mm512_and_si512(packed, lowNibble);
      w[4 + k] = _mm512_and_si512(_mm512_srli_epi16(packed, 4), lowNibble);
    }
    if constexpr (kLayout == RepackedLayout::Nibble5) {
      // Bit k of each high byte becomes bit 4 of w[k]'s byte (16-bit shifts: for these
      // distances the bit that lands on bit 4 comes from the same byte).
      const __m512i high = _mm512_loadu_si512(blk + 256), bit4 = _mm512_set1_epi8(16);
#pragma GCC unroll 8
      for (int k = 0; k < 8; ++k) {
        const __m512i moved = k < 4 ? _mm512_slli_epi16(high, 4 - k)
                                    : k > 4 ? _mm512_srli_epi16(high, k - 4) : high;
        w[k] = _mm512_ternarylogic_epi32(w[k], moved, bit4, 0xF8);  // w | (moved & bit4)
      }
    }
  } else {
    const __m512i flip = _mm512_set1_epi8(int8_t(0x80));
#pragma GCC unroll 8
    for (int k = 0; k < 8; ++k) w[k] = _mm512_xor_si512(_mm512_loadu_si512(blk + 64 * k), flip);
  }
}

// Row groups g[0..G) (G = 1 or 2) for T tokens. Two groups go block by block side by side, each
// with its own accumulators (so each group's sums are those of one group alone). A batched
// decode step streams a large matrix from memory slower than the arithmetic could take it; two
// read streams far apart in memory keep more of it in flight (SmolLM2's 49152 x 576 output at 8
// tokens on 2 threads, from memory: best of 3, 1207 -> 1130 us).
template <RepackedLayout kLayout, bool kRoundedSum, int T, int G = 1>
void groupTile(const RepackedMatrix& m, const int64_t* g, const uint8_t* x, size_t xStride,
               float* y, int64_t yStride) {
  Q8x32Row xr[T];
  for (int t = 0; t < T; ++t) xr[t] = q8x32Row(x + size_t(t) * xStride, m.cols);
  __m512 acc[G][T];
#pragma GCC unroll 8
  for (int t = 0; t < T; ++t)
    for (int k = 0; k < G; ++k) acc[k][t] = _mm512_setzero_ps();
  const int32_t offset = m.quantOffset;
  for (int64_t b = 0; b < m.blocks; ++b) {
#pragma GCC unroll 2
    for (int k = 0; k < G; ++k) {
      const uint8_t* blk = m.block(g[k], b);
      prefetchBlock(blk + kPrefetchBlocks * m.blockBytes, m.blockBytes);
      __m512i w[8];
      unpackBlock<kLayout>(blk, w);
      const __m512 dw = _mm512_cvtph_ps(quant::load256(blk + m.quantBytes));
      const __m512 mw =
          m.hasMin ? _mm512_cvtph_ps(quant::load256(blk + m.quantBytes + 32)) : _mm512_setzero_ps();
#pragma GCC unroll 8
      for (int t = 0; t < T; ++t) {
        const int8_t* xq = xr[t].qs + 32 * b;
        __m512i even = _mm512_setzero_si512(), odd = _mm512_setzero_si512();
#pragma GCC unroll 4
        for (int j = 0; j < 8; j += 2) {
          even = _mm512_dpbusd_epi32(even, w[j], _mm512_set1_epi32(loadQuad(xq + 4 * j)));
          odd = _mm512_dpbusd_epi32(odd, w[j + 1], _mm512_set1_epi32(loadQuad(xq + 4 * j + 4)));
        }
        __m512i sum = _mm512_add_epi32(even, odd);
        if constexpr (kLayout == RepackedLayout::Int8)
          sum = _mm512_sub_epi32(sum, _mm512_set1_epi32(128 * xr[t].sum[b]));
        if constexpr (kLayout == RepackedLayout::Nibble5)  // q - offset
          sum = _mm512_sub_epi32(sum, _mm512_set1_epi32(offset * xr[t].sum[b]));
        const float dx = xr[t].d[b];
        acc[k][t] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(sum), _mm512_mul_ps(dw, _mm512_set1_ps(dx)),
                                    acc[k][t]);
        acc[k][t] = _mm512_fmadd_ps(
            mw, _mm512_set1_ps(kRoundedSum ? xr[t].s[b] : dx * float(xr[t].sum[b])), acc[k][t]);
      }
    }
  }
  for (int k = 0; k < G; ++k) {
    const int64_t rows = quant::minOf(kRepackGroupRows, m.rows - g[k] * kRepackGroupRows);
    const __mmask16 valid = __mmask16((1u << rows) - 1);
#pragma GCC unroll 8
    for (int t = 0; t < T; ++t)
      _mm512_mask_storeu_ps(y + t * yStride + g[k] * kRepackGroupRows, valid, acc[k][t]);
  }
}

template <RepackedLayout kLayout, bool kRoundedSum, int T>
void groupTile(const RepackedMatrix& m, int64_t g, const uint8_t* x, size_t xStride, float* y,
               int64_t yStride) {
  groupTile<kLayout, kRoundedSum, T, 1>(m, &g, x, xStride, y, yStride);
}

#else  // AVX2

template <RepackedLayout kLayout, bool kRoundedSum, int T>
void groupTile(const RepackedMatrix& m, int64_t g, const uint8_t* x, size_t xStride, float* y,
               int64_t yStride) {
  Q8x32Row xr[T];
  for (int t = 0; t < T; ++t) xr[t] = q8x32Row(x + size_t(t) * xStride, m.cols);
  const int64_t rows = quant::minOf(kRepackGroupRows, m.rows - g * kRepackGroupRows);
  const __m256i lowNibble = _mm256_set1_epi8(0x0f);
  const __m256i ones = _mm256_set1_epi16(1);
  const __m256i bit4 = _mm256_set1_epi8(16);
  const int32_t offset = m.quantOffset;
  for (int h = 0; h < 2; ++h) {  // rows 8h .. 8h + 7
    if (8 * h >= rows) break;
    __m256 acc[T];
#pragma GCC unroll 8
    for (int t = 0; t < T; ++t) acc[t] = _mm256_setzero_ps();
    for (int64_t b = 0; b < m.blocks; ++b) {
      const uint8_t* blk = m.block(g, b);
      if (h == 0) prefetchBlock(blk + kPrefetchBlocks * m.blockBytes, m.blockBytes);
      __m256i w[8];
      if constexpr (kLayout != RepackedLayout::Int8) {
#pragma GCC unroll 4
        for (int k = 0; k < 4; ++k) {
          const __m256i packed = quant::load256(blk + 64 * k + 32 * h);
          w[k] = _mm256_and_si256(packed, lowNibble);
          w[4 + k] = _mm256_and_si256(_mm256_srli_epi16(packed, 4), lowNibble);
        }
        if constexpr (kLayout == RepackedLayout::Nibble5) {
          const __m256i high = quant::load256(blk + 256 + 32 * h);  // as in laneTile
#pragma GCC unroll 8
          for (int k = 0; k < 8; ++k) {
            const __m256i moved = k < 4 ? _mm256_slli_epi16(high, 4 - k)
                                        : k > 4 ? _mm256_srli_epi16(high, k - 4) : high;
            w[k] = _mm256_or_si256(w[k], _mm256_and_si256(moved, bit4));
          }
        }
      } else {
#pragma GCC unroll 8
        for (int k = 0; k < 8; ++k) w[k] = quant::load256(blk + 64 * k + 32 * h);
      }
      const __m256 dw = _mm256_cvtph_ps(quant::load128(blk + m.quantBytes + 16 * h));
      const __m256 mw = m.hasMin
          ? _mm256_cvtph_ps(quant::load128(blk + m.quantBytes + 32 + 16 * h)) : _mm256_setzero_ps();
#pragma GCC unroll 8
      for (int t = 0; t < T; ++t) {
        const int8_t* xq = xr[t].qs + 32 * b;
        __m256i sum;
        if constexpr (kLayout == RepackedLayout::Nibble4) {
          __m256i pairs = _mm256_setzero_si256();
#pragma GCC unroll 8
          for (int j = 0; j < 8; ++j)
            pairs = _mm256_add_epi16(
                pairs, _mm256_maddubs_epi16(w[j], _mm256_set1_epi32(loadQuad(xq + 4 * j))));
          sum = _mm256_madd_epi16(pairs, ones);
        } else if constexpr (kLayout == RepackedLayout::Nibble5) {
          // 5-bit q: a pair is at most 2 * 31 * 127, so 4 vectors' pairs fit in int16.
          __m256i low = _mm256_setzero_si256(), high = _mm256_setzero_si256();
#pragma GCC unroll 4
          for (int j = 0; j < 4; ++j) {
            low = _mm256_add_epi16(
                low, _mm256_maddubs_epi16(w[j], _mm256_set1_epi32(loadQuad(xq + 4 * j))));
            high = _mm256_add_epi16(
                high, _mm256_maddubs_epi16(w[4 + j], _mm256_set1_epi32(loadQuad(xq + 16 + 4 * j))));
          }
          sum = _mm256_add_epi32(_mm256_madd_epi16(low, ones), _mm256_madd_epi16(high, ones));
          sum = _mm256_sub_epi32(sum, _mm256_set1_epi32(offset * xr[t].sum[b]));  // q - offset
        } else {
          sum = _mm256_setzero_si256();
#pragma GCC unroll 8
          for (int j = 0; j < 8; ++j) {
            const __m256i xb = _mm256_set1_epi32(loadQuad(xq + 4 * j));
            const __m256i pairs =
                _mm256_maddubs_epi16(_mm256_sign_epi8(w[j], w[j]), _mm256_sign_epi8(xb, w[j]));
            sum = _mm256_add_epi32(sum, _mm256_madd_epi16(pairs, ones));
          }
        }
        const float dx = xr[t].d[b];
        acc[t] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(sum), _mm256_mul_ps(dw, _mm256_set1_ps(dx)),
                                 acc[t]);
        acc[t] = _mm256_fmadd_ps(mw, _mm256_set1_ps(kRoundedSum ? xr[t].s[b] : dx * float(xr[t].sum[b])), acc[t]);
      }
    }
    const int64_t valid = quant::minOf(8, rows - 8 * h);
#pragma GCC unroll 8
    for (int t = 0; t < T; ++t) {
      float* out = y + t * yStride + g * kRepackGroupRows + 8 * h;
      if (valid == 8) {
        _mm256_storeu_ps(out, acc[t]);
      } else {
        alignas(32) float lanes[8];
        _mm256_store_ps(lanes, acc[t]);
        for (int64_t r = 0; r < valid; ++r) out[r] = lanes[r];
      }
    }
  }
}

#endif

// Groups outer, token tiles inner: a group's weights (a few KiB) stay in L1 while every tile of
// tokens runs over them.
template <RepackedLayout kLayout, bool kRoundedSum>
void runRepacked(const RepackedTask& task) {
  const RepackedMatrix& m = *task.m;
#if defined(__AVX512VNNI__) && defined(__AVX512BW__)
  // A full tile (a batched decode step of 8): the two halves of the task's groups side by side.
  if (task.tokens == kRepackTokenTile && task.group1 - task.group0 >= 2) {
    const int64_t half = (task.group1 - task.group0) / 2;
    for (int64_t i = 0; i < half; ++i) {
      const int64_t pair[2] = {task.group0 + i, task.group0 + half + i};
      groupTile<kLayout, kRoundedSum, kRepackTokenTile, 2>(m, pair, task.x, task.xStride, task.y,
                                                           task.yStride);
    }
    if (2 * half < task.group1 - task.group0)
      groupTile<kLayout, kRoundedSum, kRepackTokenTile>(m, task.group1 - 1, task.x, task.xStride,
                                                        task.y, task.yStride);
    return;
  }
#endif
  for (int64_t g = task.group0; g < task.group1; ++g) {
    int64_t t = 0;
    for (; t + kRepackTokenTile <= task.tokens; t += kRepackTokenTile)
      groupTile<kLayout, kRoundedSum, kRepackTokenTile>(m, g, task.x + size_t(t) * task.xStride, task.xStride,
                                           task.y + t * task.yStride, task.yStride);
    const uint8_t* x = task.x + size_t(t) * task.xStride;
    float* y = task.y + t * task.yStride;
    switch (task.tokens - t) {
      case 1: groupTile<kLayout, kRoundedSum, 1>(m, g, x, task.xStride, y, task.yStride); break;
      case 2: groupTile<kLayout, kRoundedSum, 2>(m, g, x, task.xStride, y, task.yStride); break;
      case 3: groupTile<kLayout, kRoundedSum, 3>(m, g, x, task.xStride, y, task.yStride); break;
      case 4: groupTile<kLayout, kRoundedSum, 4>(m, g, x, task.xStride, y, task.yStride); break;
      case 5: groupTile<kLayout, kRoundedSum, 5>(m, g, x, task.xStride, y, task.yStride); break;
      case 6: groupTile<kLayout, kRoundedSum, 6>(m, g, x, task.xStride, y, task.yStride); break;
      case 7: groupTile<kLayout, kRoundedSum, 7>(m, g, x, task.xStride, y, task.yStride); break;
      default: break;
    }
  }
}

}  // namespace
}  // namespace ember::cpu

#include "backend/cpu/x86_repacked_lanes.h"
#if defined(__AVX512VNNI__) && defined(__AVX512BW__)
#include "backend/cpu/x86_repacked_q4k.h"
#include "backend/cpu/x86_repacked_q6k.h"
#endif

namespace ember::cpu {
namespace {

RepackedDotFn x86RepackedKernel(const RepackedMatrix& m) {
  using L = RepackedLayout;
#if defined(__AVX512VNNI__) && defined(__AVX512BW__)
  if (m.layout == L::NibbleK) return runNibbleK;
  if (m.layout == L::SixK) return runSixK;
#else
  if (m.layout == L::SixK) return nullptr;  // nor a SixK one
  if (m.layout == L::NibbleK) return nullptr;  // AVX2 has no NibbleK kernel: the scalar one
#endif
  if (m.llamaLanes) return x86LaneKernel(m);
  if (m.layout == L::Nibble5)
    return m.roundedMinSum ? runRepacked<L::Nibble5, true> : runRepacked<L::Nibble5, false>;
  if (m.layout == L::Nibble4)
    return m.roundedMinSum ? runRepacked<L::Nibble4, true> : runRepacked<L::Nibble4, false>;
  return m.roundedMinSum ? runRepacked<L::Int8, true> : runRepacked<L::Int8, false>;
}

}  // namespace
}  // namespace ember::cpu
