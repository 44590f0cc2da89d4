#pragma once
// Tiled dot-product kernels for the K-quants against Q8_K activations (see x86_dot_tiles.h for
// the tiling). Per super-block and (row, token) the integer sums are exact:
//   Q4_K/Q5_K: sum_s scale[s] * dot(q_s, x_s)  and  sum_s min[s] * (bsum[2s] + bsum[2s+1]);
//   Q6_K:      sum_g scale[g] * dot(q_g, x_g) - 32 * sum_g scale[g] * bsum[g] (q stored + 32).
// The 8-bit products go through vpmaddubsw (unsigned weights <= 63, so no saturation), then
// each 16-bit pair sum is weighted by its sub-block scale with vpmaddwd / vpdpwssd.
#include "backend/cpu/quant/block_formats.h"
#include "backend/cpu/quant/kernels.h"
#include "backend/cpu/quant/x86_simd.h"
#include "gguf/ggml_types.h"

namespace ember::cpu::quant {
namespace {

using gguf::GgmlType;

// Byte-shuffle masks that spread 16-bit scale k (of 8 in a 128-bit lane) over the lane.
struct SpreadMasks {
  uint8_t mask[8][32];
};
constexpr SpreadMasks makeSpreadMasks() {
  SpreadMasks m{};
  for (int k = 0; k < 8; ++k)
    for (int i = 0; i < 32; ++i) m.mask[k][i] = uint8_t(2 * k + (i & 1));
  return m;
}
alignas(32) constexpr SpreadMasks kSpreadScale = makeSpreadMasks();

template <GgmlType kType, int R, int T>
void tileQ45K(const uint8_t* w, size_t wStride, const uint8_t* x, size_t xStride, int64_t cols,
              float* y, int64_t yStride) {
  using Block = std::conditional_t<kType == GgmlType::Q4_K, BlockQ4_K, BlockQ5_K>;
  const int64_t nb = cols / 256;
  Q8xKRow xr[T];
  for (int t = 0; t < T; ++t) xr[t] = q8xKRow(x + t * xStride, cols);
  __m256 acc[R][T];
  float accMin[R][T];
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r)
#pragma GCC unroll 8
    for (int t = 0; t < T; ++t) acc[r][t] = _mm256_setzero_ps(), accMin[r][t] = 0.0f;
  const __m256i lowNibble = _mm256_set1_epi8(0x0f);

  for (int64_t b = 0; b < nb; ++b) {
    __m128i bsumPairs[T];  // bsum[2s] + bsum[2s + 1] for s = 0..7
    float xd[T];
#pragma GCC unroll 8
    for (int t = 0; t < T; ++t) {
      const int16_t* bs = xr[t].bsums + 16 * b;
      bsumPairs[t] = _mm_hadd_epi16(load128(bs), load128(bs + 8));
      xd[t] = xr[t].d[b];
    }
    prefetchAhead(w + b * R * sizeof(Block), R * int64_t(sizeof(Block)));
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) {
      const Block* blk = reinterpret_cast<const Block*>(w + r * wStride) + b;
      const ScalesMins sm = unpackScalesMins(blk->scales);
      uint64_t scaleBytes, minBytes;
      std::memcpy(&scaleBytes, sm.scale, 8);
      std::memcpy(&minBytes, sm.min, 8);
      const __m256i scales16 =
          _mm256_broadcastsi128_si256(_mm_cvtepu8_epi16(_mm_cvtsi64_si128(int64_t(scaleBytes))));
      const __m128i mins16 = _mm_cvtepu8_epi16(_mm_cvtsi64_si128(int64_t(minBytes)));
      __m256i sum[T];
#pragma GCC unroll 8
      for (int t = 0; t < T; ++t) sum[t] = _mm256_setzero_si256();
      __m256i highBits;
      if constexpr (kType == GgmlType::Q5_K) highBits = load256(blk->qh);
#pragma GCC unroll 4
      for (int j = 0; j < 4; ++j) {
        const __m256i q = load256(blk->qs + 32 * j);
        __m256i low = _mm256_and_si256(q, lowNibble);
        __m256i high = _mm256_and_si256(_mm256_srli_epi16(q, 4), lowNibble);
        if constexpr (kType == GgmlType::Q5_K) {  // bits 2j and 2j + 1 of qh, moved to bit 4
          const __m256i one = _mm256_set1_epi8(1);
          low = _mm256_or_si256(low, _mm256_slli_epi16(_mm256_and_si256(highBits, one), 4));
          high = _mm256_or_si256(
              high, _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(highBits, 1), one), 4));
          highBits = _mm256_srli_epi16(highBits, 2);
        }
        const __m256i scaleLow = _mm256_shuffle_epi8(scales16, load256(kSpreadScale.mask[2 * j]));
        const __m256i scaleHigh =
            _mm256_shuffle_epi8(scales16, load256(kSpreadScale.mask[2 * j + 1]));
#pragma GCC unroll 8
        for (int t = 0; t < T; ++t) {
          const int8_t* xq = xr[t].qs + 256 * b + 64 * j;
          sum[t] = dotI16(sum[t], _mm256_maddubs_epi16(low, load256(xq)), scaleLow);
          sum[t] = dotI16(sum[t], _mm256_maddubs_epi16(high, load256(xq + 32)), scaleHigh);
        }
      }
      const float d = halfToFloat(reinterpret_cast<const uint8_t*>(&blk->d));
      const float dmin = halfToFloat(reinterpret_cast<const uint8_t*>(&blk->dmin));
#pragma GCC unroll 8
      for (int t = 0; t < T; ++t) {
        acc[r][t] =
            _mm256_fmadd_ps(_mm256_set1_ps(d * xd[t]), _mm256_cvtepi32_ps(sum[t]), acc[r][t]);
        const int32_t minSum = hsumInt(_mm_madd_epi16(mins16, bsumPairs[t]));
        accMin[r][t] += dmin * xd[t] * float(minSum);
      }
    }
  }
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r)
#pragma GCC unroll 8
    for (int t = 0; t < T; ++t) y[t * yStride + r] = hsum(acc[r][t]) - accMin[r][t];
}

// [scale k x 8 | scale k+1 x 8] as 16-bit lanes, from the 16 scales as 16-bit lanes (k even).
inline __m256i scalePair(__m256i scales16, int k) {
  const __m256i pair = _mm256_permutevar8x32_epi32(scales16, _mm256_set1_epi32(k / 2));
  return _mm256_shuffle_epi8(
      pair, _mm256_setr_epi8(0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 2, 3, 2, 3, 2, 3, 2, 3,
                             2, 3, 2, 3, 2, 3, 2, 3));
}

// kTiledOrder: the float order of llama.cpp's tiled K-quant matmul (ggml-cpu/tiled), which it
// runs for products of at least kTiledMinTokens tokens: per super-block the whole integer sum
// I becomes a float once, and y += fma(float(I) * d, xd, y) (the product with xd fused into
// the addition, as llama.cpp's build compiles it). Otherwise llama.cpp's vec_dot order: lanes of
// partial sums, fma(d * xd, lane, acc) per super-block and a horizontal sum at the end.
template <int R, int T, bool kTiledOrder = false>
void tileQ6K(const uint8_t* w, size_t wStride, const uint8_t* x, size_t xStride, int64_t cols,
             float* y, int64_t yStride) {
  const int64_t nb = cols / 256;
  Q8xKRow xr[T];
  for (int t = 0; t < T; ++t) xr[t] = q8xKRow(x + t * xStride, cols);
  __m256 acc[R][T];
  float accTiled[R][T];
  // kTiledOrder with 4 rows: the 4 rows' sums of a token go through one vector (lane r: row r),
  // the same operations as the scalar path.
  constexpr bool kRowVectors = kTiledOrder && R == 4;
  __m128 accRows[T];
  for (int t = 0; t < T; ++t) accRows[t] = _mm_setzero_ps();
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r)
#pragma GCC unroll 8
    for (int t = 0; t < T; ++t) acc[r][t] = _mm256_setzero_ps(), accTiled[r][t] = 0.0f;
  const __m256i lowNibble = _mm256_set1_epi8(0x0f);
  const __m256i twoBits = _mm256_set1_epi8(0x03);

  for (int64_t b = 0; b < nb; ++b) {
    prefetchAhead(w + b * R * sizeof(BlockQ6_K), R * int64_t(sizeof(BlockQ6_K)));
    __m256i rowSums[R][T];  // kRowVectors: each row's lanes of partial sums
    float dRow[R];
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) {
      const BlockQ6_K* blk = reinterpret_cast<const BlockQ6_K*>(w + r * wStride) + b;
      const __m256i scales16 = _mm256_cvtepi8_epi16(load128(blk->scales));
      __m256i sum[T];
#pragma GCC unroll 8
      for (int t = 0; t < T; ++t)  // the -32 offset of every quant, weighted by its scale
        sum[t] = _mm256_sub_epi32(
            _mm256_setzero_si256(),
            _mm256_slli_epi32(_mm256_madd_epi16(scales16, load256(xr[t].bsums + 16 * b)), 5));
#pragma GCC unroll 2
      for (int h = 0; h < 2; ++h) {
        const __m256i lowA = load256(blk->ql + 64 * h);
        const __m256i lowB = load256(blk->ql + 64 * h + 32);
        const __m256i hi = load256(blk->qh + 32 * h);
        const __m256i q[4] = {
            _mm256_or_si256(_mm256_and_si256(lowA, lowNibble),
                            _mm256_slli_epi16(_mm256_and_si256(hi, twoBits), 4)),
            _mm256_or_si256(
                _mm256_and_si256(lowB, lowNibble),
                _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(hi, 2), twoBits), 4)),
            _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(lowA, 4), lowNibble),
                            _mm256_and_si256(hi, _mm256_set1_epi8(0x30))),
            _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(lowB, 4), lowNibble),
                            _mm256_and_si256(_mm256_srli_epi16(hi, 2), _mm256_set1_epi8(0x30))),
        };
#pragma GCC unroll 4
        for (int g = 0; g < 4; ++g) {
          const __m256i scale = scalePair(scales16, 8 * h + 2 * g);
#pragma GCC unroll 8
          for (int t = 0; t < T; ++t) {
            const int8_t* xq = xr[t].qs + 256 * b + 128 * h + 32 * g;
            sum[t] = dotI16(sum[t], _mm256_maddubs_epi16(q[g], load256(xq)), scale);
          }
        }
      }
      const float d = halfToFloat(reinterpret_cast<const uint8_t*>(&blk->d));
#pragma GCC unroll 8
      for (int t = 0; t < T; ++t) {
        if constexpr (kRowVectors) {
          rowSums[r][t] = sum[t];
          dRow[r] = d;
        } else if constexpr (kTiledOrder) {
          const float scaled = float(hsumInt(sum[t])) * d;
          accTiled[r][t] = __builtin_fmaf(scaled, xr[t].d[b], accTiled[r][t]);
        } else {
          acc[r][t] = _mm256_fmadd_ps(_mm256_set1_ps(d * xr[t].d[b]), _mm256_cvtepi32_ps(sum[t]),
                                      acc[r][t]);
        }
      }
    }
    if constexpr (kRowVectors) {
      const __m128 d4 = _mm_loadu_ps(dRow);
#pragma GCC unroll 8
      for (int t = 0; t < T; ++t) {
        const __m128i sums = hsumInt4(rowSums[0][t], rowSums[1][t], rowSums[2][t], rowSums[3][t]);
        const __m128 scaled = _mm_mul_ps(_mm_cvtepi32_ps(sums), d4);
        accRows[t] = _mm_fmadd_ps(scaled, _mm_set1_ps(xr[t].d[b]), accRows[t]);
      }
    }
  }
  if constexpr (kRowVectors) {
    for (int t = 0; t < T; ++t) {
      alignas(16) float out[4];
      _mm_store_ps(out, accRows[t]);
      for (int r = 0; r < R; ++r) y[t * yStride + r] = out[r];
    }
    return;
  }
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r)
#pragma GCC unroll 8
    for (int t = 0; t < T; ++t) y[t * yStride + r] = kTiledOrder ? accTiled[r][t] : hsum(acc[r][t]);
}

}  // namespace
}  // namespace ember::cpu::quant
