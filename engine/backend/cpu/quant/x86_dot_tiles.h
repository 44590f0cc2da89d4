#pragma once
// Tiled dot-product kernels for the 32-element block types and the float types: a tile is R
// weight rows x T activation rows; each weight block is unpacked once and used for T tokens,
// each activation block is loaded once and used for R rows. Include after x86_simd.h.
//
// Integer sums per block are exact. Weights are fed to the unsigned side of the u8 x s8
// products: Q4_0 as its stored 4-bit values, with the offset 8 times the activation block's
// integer sum subtracted in lane 0; Q8_0 with VNNI as q + 128 (offset 128), without VNNI as |q|
// against sign(x, q) (the offset form would saturate vpmaddubsw); Q5_0 as |q - 16| against
// sign(x, q - 16) (llama.cpp's lane partial sums; the AVX-512 pair kernels use the offset 16).
#include "backend/cpu/quant/block_formats.h"
#include "backend/cpu/quant/kernels.h"
#include "backend/cpu/quant/x86_simd.h"
#include "gguf/ggml_types.h"

namespace ember::cpu::quant {
namespace {

using gguf::GgmlType;

template <GgmlType kType>
struct Format32;
template <>
struct Format32<GgmlType::Q4_0> {
  static constexpr size_t kBytes = 18;
  static constexpr int kOffset = 8;
  static constexpr bool kHasMin = false;
  static __m256i quants(const uint8_t* b) { return nibbles32(b + 2); }
};
template <>
struct Format32<GgmlType::Q4_1> {
  static constexpr size_t kBytes = 20;
  static constexpr int kOffset = 0;
  static constexpr bool kHasMin = true;
  static __m256i quants(const uint8_t* b) { return nibbles32(b + 4); }
};
template <>
struct Format32<GgmlType::Q5_0> {
  static constexpr size_t kBytes = 22;
  static constexpr int kOffset = 16;
  static constexpr bool kHasMin = false;
  static __m256i quants(const uint8_t* b) {
    return _mm256_or_si256(nibbles32(b + 6), fifthBits32(b + 2));
  }
  // q - 16 as int8, for tile32's sign form (see there).
  static __m256i signedQuants(const uint8_t* b) {
    return _mm256_sub_epi8(quants(b), _mm256_set1_epi8(16));
  }
};
template <>
struct Format32<GgmlType::Q5_1> {
  static constexpr size_t kBytes = 24;
  static constexpr int kOffset = 0;
  static constexpr bool kHasMin = true;
  static __m256i quants(const uint8_t* b) {
    return _mm256_or_si256(nibbles32(b + 8), fifthBits32(b + 4));
  }
};
template <>
struct Format32<GgmlType::Q8_0> {
  static constexpr size_t kBytes = 34;
  static constexpr int kOffset = EMBER_X86_VNNI ? 128 : 0;
  static constexpr bool kHasMin = false;
  static __m256i quants(const uint8_t* b) {
    const __m256i q = load256(b + 2);
#if EMBER_X86_VNNI
    return _mm256_xor_si256(q, _mm256_set1_epi8(int8_t(0x80)));  // q + 128 as unsigned
#else
    return q;
#endif
  }
};

template <GgmlType kType, int R, int T>
void tile32(const uint8_t* w, size_t wStride, const uint8_t* x, size_t xStride, int64_t cols,
            float* y, int64_t yStride) {
  using F = Format32<kType>;
  // Q5_0 always runs on q - 16 in the sign form, so that each 32-bit lane holds the same partial
  // sum (4 products of q - 16 and x) as llama.cpp's Q5_0 kernels (vec_dot and llamafile's
  // tinyBLAS): the float accumulation per lane then rounds identically.
  constexpr bool kSignedQ5 = kType == GgmlType::Q5_0;
  constexpr bool kSignTrick = (kType == GgmlType::Q8_0 && !EMBER_X86_VNNI) || kSignedQ5;
  const int64_t nb = cols / 32;
  Q8x32Row xr[T];
  for (int t = 0; t < T; ++t) xr[t] = q8x32Row(x + t * xStride, cols);
  __m256 acc[R][T];
  __m128 accMin[R][T];  // lane 1 gathers m * s for the types with a min
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r)
#pragma GCC unroll 8
    for (int t = 0; t < T; ++t) acc[r][t] = _mm256_setzero_ps(), accMin[r][t] = _mm_setzero_ps();

  for (int64_t b = 0; b < nb; ++b) {
    __m256i xq[T], base[T];
    __m256 xd[T];
    __m128 xs[T];
#pragma GCC unroll 8
    for (int t = 0; t < T; ++t) {
      xq[t] = load256(xr[t].qs + 32 * b);
      xd[t] = _mm256_set1_ps(xr[t].d[b]);
      base[t] =
          F::kOffset && !kSignedQ5 ? lane0(-F::kOffset * xr[t].sum[b]) : _mm256_setzero_si256();
      if constexpr (F::kHasMin) xs[t] = _mm_setr_ps(0.0f, xr[t].s[b], 0.0f, 0.0f);
    }
    // The R rows are one contiguous region, read R blocks at a time at R places: prefetch the
    // same share of the region kPrefetchBytes further on, which the hardware prefetcher misses.
    prefetchAhead(w + b * R * F::kBytes, R * F::kBytes);
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) {
      const uint8_t* blk = w + r * wStride + b * F::kBytes;
      __m256i q;
      if constexpr (kSignedQ5)
        q = F::signedQuants(blk);
      else
        q = F::quants(blk);
      const __m128 dm = halfPair(blk);  // d, and m for the types with a min
      const __m256 dw = _mm256_broadcastss_ps(dm);
      __m256i qAbs;
      if constexpr (kSignTrick) qAbs = _mm256_sign_epi8(q, q);
#pragma GCC unroll 8
      for (int t = 0; t < T; ++t) {
        __m256i sum;
        if constexpr (kSignTrick)
          sum = dotU8S8(base[t], qAbs, _mm256_sign_epi8(xq[t], q));
        else
          sum = dotU8S8(base[t], q, xq[t]);
        acc[r][t] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(sum), _mm256_mul_ps(dw, xd[t]), acc[r][t]);
        if constexpr (F::kHasMin) accMin[r][t] = _mm_fmadd_ps(dm, xs[t], accMin[r][t]);
      }
    }
  }
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r)
#pragma GCC unroll 8
    for (int t = 0; t < T; ++t) {
      float v = hsum(acc[r][t]);
      if constexpr (F::kHasMin) v += _mm_cvtss_f32(_mm_movehdup_ps(accMin[r][t]));
      y[t * yStride + r] = v;
    }
}

// Float weights (F32, F16, BF16) against float activations.
template <GgmlType kType>
inline __m256 loadWeights8(const uint8_t* row, int64_t i) {
  if constexpr (kType == GgmlType::F32)
    return _mm256_loadu_ps(reinterpret_cast<const float*>(row) + i);
  else if constexpr (kType == GgmlType::F16)
    return _mm256_cvtph_ps(load128(row + 2 * i));
  else
    return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(load128(row + 2 * i)), 16));
}
template <GgmlType kType>
inline float loadWeight1(const uint8_t* row, int64_t i) {
  if constexpr (kType == GgmlType::F32)
    return reinterpret_cast<const float*>(row)[i];
  else if constexpr (kType == GgmlType::F16)
    return halfToFloat(row + 2 * i);
  else
    return bf16ToFloat(loadU16(row + 2 * i));
}

template <GgmlType kType, int R, int T>
void tileFloat(const uint8_t* w, size_t wStride, const uint8_t* x, size_t xStride, int64_t cols,
               float* y, int64_t yStride) {
  __m256 acc[R][T];
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r)
#pragma GCC unroll 8
    for (int t = 0; t < T; ++t) acc[r][t] = _mm256_setzero_ps();
  const float* xf[T];
  for (int t = 0; t < T; ++t) xf[t] = reinterpret_cast<const float*>(x + t * xStride);
  int64_t i = 0;
  constexpr int64_t kWeightBytes = kType == GgmlType::F32 ? 4 : 2;
  for (; i + 8 <= cols; i += 8) {
    if (i % 32 == 0) prefetchAhead(w + i * R * kWeightBytes, 32 * R * kWeightBytes);
    __m256 xv[T];
#pragma GCC unroll 8
    for (int t = 0; t < T; ++t) xv[t] = _mm256_loadu_ps(xf[t] + i);
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) {
      const __m256 wv = loadWeights8<kType>(w + r * wStride, i);
#pragma GCC unroll 8
      for (int t = 0; t < T; ++t) acc[r][t] = _mm256_fmadd_ps(wv, xv[t], acc[r][t]);
    }
  }
  for (int r = 0; r < R; ++r)
    for (int t = 0; t < T; ++t) {
      float v = hsum(acc[r][t]);
      for (int64_t k = i; k < cols; ++k) v += loadWeight1<kType>(w + r * wStride, k) * xf[t][k];
      y[t * yStride + r] = v;
    }
}

// Runs a tile function over a whole task: full R x T tiles, then the leftover tokens and rows.
template <void (*kTileRT)(const uint8_t*, size_t, const uint8_t*, size_t, int64_t, float*, int64_t),
          void (*kTileR1)(const uint8_t*, size_t, const uint8_t*, size_t, int64_t, float*, int64_t),
          void (*kTile1T)(const uint8_t*, size_t, const uint8_t*, size_t, int64_t, float*, int64_t),
          void (*kTile11)(const uint8_t*, size_t, const uint8_t*, size_t, int64_t, float*, int64_t),
          int R, int T>
void runTiles(const DotTask& k) {
  int64_t r = 0;
  for (; r + R <= k.rows; r += R) {
    const uint8_t* w = k.w + r * k.wStride;
    int64_t t = 0;
    for (; t + T <= k.tokens; t += T)
      kTileRT(w, k.wStride, k.x + t * k.xStride, k.xStride, k.cols, k.y + t * k.yStride + r,
              k.yStride);
    for (; t < k.tokens; ++t)
      kTileR1(w, k.wStride, k.x + t * k.xStride, k.xStride, k.cols, k.y + t * k.yStride + r,
              k.yStride);
  }
  for (; r < k.rows; ++r) {
    const uint8_t* w = k.w + r * k.wStride;
    int64_t t = 0;
    for (; t + T <= k.tokens; t += T)
      kTile1T(w, k.wStride, k.x + t * k.xStride, k.xStride, k.cols, k.y + t * k.yStride + r,
              k.yStride);
    for (; t < k.tokens; ++t)
      kTile11(w, k.wStride, k.x + t * k.xStride, k.xStride, k.cols, k.y + t * k.yStride + r,
              k.yStride);
  }
}

}  // namespace
}  // namespace ember::cpu::quant
