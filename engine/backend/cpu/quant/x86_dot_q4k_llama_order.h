#pragma once
// Q4_K against Q8_K in the float order of llama.cpp's x86 CPU backend, which repacks Q4_K
// matrices whose row count is a multiple of 8 into 8-row interleaved blocks at load and runs
// them with its own kernels. Their integer sums are exact, as ours are; what differs from
// tileQ45K (x86_dot_kquants.h) is where the sums become floats. Per (row, token):
//   acc    = fma(float(I_c), d * xd, acc)     I_c: sum over the chunk's sub-blocks of
//                                                scale[s] * dot(q_s, x_s)
//   accMin = fma(float(M_c), dmin * xd, accMin)   M_c: sum of min[s] * (bsum[2s] + bsum[2s+1])
//   y      = acc - accMin
// where a chunk c is a whole super-block (256 elements) for a token run on its own (its
// one-token kernel) and a pair of sub-blocks (64 elements, 4 per super-block) for tokens run
// in groups of 4 (its multi-token kernel). matmul picks which tokens go which way.
#include "backend/cpu/quant/block_formats.h"
#include "backend/cpu/quant/kernels.h"
#include "backend/cpu/quant/x86_dot_kquants.h"
#include "backend/cpu/quant/x86_simd.h"

namespace ember::cpu::quant {
namespace {

// kChunks: float accumulations per super-block (1: one-token order, 4: multi-token order).
template <int kChunks, int R, int T>
void tileQ4KLlamaOrder(const uint8_t* w, size_t wStride, const uint8_t* x, size_t xStride,
                       int64_t cols, float* y, int64_t yStride) {
  static_assert(kChunks == 1 || kChunks == 4);
  const int64_t nb = cols / 256;
  Q8xKRow xr[T];
  for (int t = 0; t < T; ++t) xr[t] = q8xKRow(x + t * xStride, cols);
  float acc[R][T], accMin[R][T];
  for (int r = 0; r < R; ++r)
    for (int t = 0; t < T; ++t) acc[r][t] = 0.0f, accMin[r][t] = 0.0f;
  // With 4 rows and 4 chunks, the 4 x 4 chunk sums of a token are transposed so that each
  // chunk's fma runs on the 4 rows at once (lane r: row r), the same operations as the scalar
  // path below, with a vector per token instead of 16 scalar chains.
  constexpr bool kRowVectors = kChunks == 4 && R == 4;
  __m128 accRows[T], accMinRows[T];
  for (int t = 0; t < T; ++t) accRows[t] = _mm_setzero_ps(), accMinRows[t] = _mm_setzero_ps();
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
    prefetchAhead(w + b * R * sizeof(BlockQ4_K), R * int64_t(sizeof(BlockQ4_K)));
    __m128 chunkSums[R][T], chunkMinSums[R][T];  // kRowVectors: as floats, lane j: chunk j
    float dRow[R], dminRow[R];
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) {
      const BlockQ4_K* blk = reinterpret_cast<const BlockQ4_K*>(w + r * wStride) + b;
      const ScalesMins sm = unpackScalesMins(blk->scales);
      uint64_t scaleBytes, minBytes;
      std::memcpy(&scaleBytes, sm.scale, 8);
      std::memcpy(&minBytes, sm.min, 8);
      const __m256i scales16 =
          _mm256_broadcastsi128_si256(_mm_cvtepu8_epi16(_mm_cvtsi64_si128(int64_t(scaleBytes))));
      const __m128i mins16 = _mm_cvtepu8_epi16(_mm_cvtsi64_si128(int64_t(minBytes)));
      __m256i chunk[T][4];  // per pair of sub-blocks: scale-weighted products, in int32 lanes
#pragma GCC unroll 4
      for (int j = 0; j < 4; ++j) {  // sub-blocks 2j (low nibbles) and 2j + 1 (high nibbles)
        const __m256i q = load256(blk->qs + 32 * j);
        const __m256i low = _mm256_and_si256(q, lowNibble);
        const __m256i high = _mm256_and_si256(_mm256_srli_epi16(q, 4), lowNibble);
        const __m256i scaleLow = _mm256_shuffle_epi8(scales16, load256(kSpreadScale.mask[2 * j]));
        const __m256i scaleHigh =
            _mm256_shuffle_epi8(scales16, load256(kSpreadScale.mask[2 * j + 1]));
#pragma GCC unroll 8
        for (int t = 0; t < T; ++t) {
          const int8_t* xq = xr[t].qs + 256 * b + 64 * j;
          const __m256i sum = _mm256_madd_epi16(_mm256_maddubs_epi16(low, load256(xq)), scaleLow);
          chunk[t][j] = dotI16(sum, _mm256_maddubs_epi16(high, load256(xq + 32)), scaleHigh);
        }
      }
      const float d = halfToFloat(reinterpret_cast<const uint8_t*>(&blk->d));
      const float dmin = halfToFloat(reinterpret_cast<const uint8_t*>(&blk->dmin));
#pragma GCC unroll 8
      for (int t = 0; t < T; ++t) {
        const float scale = d * xd[t], scaleMin = dmin * xd[t];
        // Lane j: min[2j] * bsumPair[2j] + min[2j + 1] * bsumPair[2j + 1].
        const __m128i chunkMins = _mm_madd_epi16(mins16, bsumPairs[t]);
        if constexpr (kChunks == 1) {
          const __m256i all = _mm256_add_epi32(_mm256_add_epi32(chunk[t][0], chunk[t][1]),
                                               _mm256_add_epi32(chunk[t][2], chunk[t][3]));
          acc[r][t] = __builtin_fmaf(float(hsumInt(all)), scale, acc[r][t]);
          accMin[r][t] = __builtin_fmaf(float(hsumInt(chunkMins)), scaleMin, accMin[r][t]);
        } else if constexpr (kRowVectors) {
          chunkSums[r][t] =
              _mm_cvtepi32_ps(hsumInt4(chunk[t][0], chunk[t][1], chunk[t][2], chunk[t][3]));
          chunkMinSums[r][t] = _mm_cvtepi32_ps(chunkMins);
          dRow[r] = d, dminRow[r] = dmin;
        } else {
          alignas(16) int32_t sums[4], mins[4];
          _mm_store_si128(reinterpret_cast<__m128i*>(sums),
                          hsumInt4(chunk[t][0], chunk[t][1], chunk[t][2], chunk[t][3]));
          _mm_store_si128(reinterpret_cast<__m128i*>(mins), chunkMins);
          for (int j = 0; j < 4; ++j) {
            acc[r][t] = __builtin_fmaf(float(sums[j]), scale, acc[r][t]);
            accMin[r][t] = __builtin_fmaf(float(mins[j]), scaleMin, accMin[r][t]);
          }
        }
      }
    }
    if constexpr (kRowVectors) {
      const __m128 d4 = _mm_loadu_ps(dRow), dmin4 = _mm_loadu_ps(dminRow);
#pragma GCC unroll 8
      for (int t = 0; t < T; ++t) {
        const __m128 xd4 = _mm_set1_ps(xd[t]);
        const __m128 scale4 = _mm_mul_ps(d4, xd4), scaleMin4 = _mm_mul_ps(dmin4, xd4);
        __m128 s0 = chunkSums[0][t], s1 = chunkSums[1][t], s2 = chunkSums[2][t],
               s3 = chunkSums[3][t];
        __m128 m0 = chunkMinSums[0][t], m1 = chunkMinSums[1][t], m2 = chunkMinSums[2][t],
               m3 = chunkMinSums[3][t];
        _MM_TRANSPOSE4_PS(s0, s1, s2, s3);  // now s_j: chunk j of rows 0..3
        _MM_TRANSPOSE4_PS(m0, m1, m2, m3);
        accRows[t] = _mm_fmadd_ps(s0, scale4, accRows[t]);
        accRows[t] = _mm_fmadd_ps(s1, scale4, accRows[t]);
        accRows[t] = _mm_fmadd_ps(s2, scale4, accRows[t]);
        accRows[t] = _mm_fmadd_ps(s3, scale4, accRows[t]);
        accMinRows[t] = _mm_fmadd_ps(m0, scaleMin4, accMinRows[t]);
        accMinRows[t] = _mm_fmadd_ps(m1, scaleMin4, accMinRows[t]);
        accMinRows[t] = _mm_fmadd_ps(m2, scaleMin4, accMinRows[t]);
        accMinRows[t] = _mm_fmadd_ps(m3, scaleMin4, accMinRows[t]);
      }
    }
  }
  if constexpr (kRowVectors) {
    for (int t = 0; t < T; ++t) {
      alignas(16) float out[4];
      _mm_store_ps(out, _mm_sub_ps(accRows[t], accMinRows[t]));
      for (int r = 0; r < R; ++r) y[t * yStride + r] = out[r];
    }
  } else {
    for (int r = 0; r < R; ++r)
      for (int t = 0; t < T; ++t) y[t * yStride + r] = acc[r][t] - accMin[r][t];
  }
}

}  // namespace
}  // namespace ember::cpu::quant
