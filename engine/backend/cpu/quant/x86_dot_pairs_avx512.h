#pragma once
// AVX-512 kernels for the 32-element block types that take two blocks per 512-bit vector:
// lanes 0-7 hold the partial sums of block b, lanes 8-15 those of block b + 1. Per row and
// pair: one vpdpbusd, one conversion, one multiply-add with the vector [dw*dx of b x 8 |
// dw*dx of b+1 x 8]. The exact integer offset correction (Q4_0, Q5_0, Q8_0) enters lanes 0
// and 8 through vpdpbusd's accumulator, and the min term of Q4_1/Q5_1 (m * s per block) is
// one more multiply-add into lanes 0 and 8 of the same accumulator. Include after
// x86_dot_tiles.h, in the AVX-512 build only.
#include "backend/cpu/quant/x86_dot_tiles.h"

namespace ember::cpu::quant {
namespace {

// Permutation indices: lane 0 over lanes 0-7 and lane `second` over lanes 8-15; lane `first`
// to lane 0 and lane `second` to lane 8 (used with a zero mask for the other lanes).
inline __m512i spreadPair(int second) {
  return _mm512_setr_epi32(0, 0, 0, 0, 0, 0, 0, 0, second, second, second, second, second, second,
                           second, second);
}
inline __m512i placePair(int first, int second) {
  return _mm512_setr_epi32(first, 0, 0, 0, 0, 0, 0, 0, second, 0, 0, 0, 0, 0, 0, 0);
}
constexpr __mmask16 kLanes0And8 = 0x0101;

// Two blocks' quants as one vector, in the activation order: block b's 32, then block b + 1's.
template <GgmlType kType>
inline __m512i pairQuants(const uint8_t* b0, const uint8_t* b1) {
  using F = Format32<kType>;
  if constexpr (kType == GgmlType::Q8_0) {
    const __m512i q =
        _mm512_inserti64x4(_mm512_castsi256_si512(load256(b0 + 2)), load256(b1 + 2), 1);
    return _mm512_xor_si512(q, _mm512_set1_epi8(int8_t(0x80)));
  } else {
    constexpr int kQs = F::kBytes - 16;  // the nibbles end every block
    // [qs0, qs0, qs1, qs1] by two broadcasting loads (no shuffle), then >> [0, 4, 0, 4] & 15:
    // the low and high nibbles of each block.
    const __m512i spread = _mm512_mask_broadcast_i32x4(_mm512_broadcast_i32x4(load128(b0 + kQs)),
                                                       0xff00, load128(b1 + kQs));
    __m512i q =
        _mm512_and_si512(_mm512_srlv_epi64(spread, _mm512_setr_epi64(0, 0, 4, 4, 0, 0, 4, 4)),
                         _mm512_set1_epi8(0x0f));
    if constexpr (kType == GgmlType::Q5_0 || kType == GgmlType::Q5_1) {
      constexpr int kQh = kType == GgmlType::Q5_0 ? 2 : 4;
      const uint64_t bits = uint64_t(loadU32(b0 + kQh)) | uint64_t(loadU32(b1 + kQh)) << 32;
      q = _mm512_or_si512(q, _mm512_maskz_mov_epi8(__mmask64(bits), _mm512_set1_epi8(0x10)));
    }
    return q;
  }
}

// The F16 pairs (d, m) of two blocks as floats [d0, m0, d1, m1] in lanes 0-3 (others undefined).
inline __m512 pairScales(const uint8_t* b0, const uint8_t* b1) {
  const __m128i halves =
      _mm_insert_epi32(_mm_cvtsi32_si128(int32_t(loadU32(b0))), int32_t(loadU32(b1)), 1);
  return _mm512_castps128_ps512(_mm_cvtph_ps(halves));
}

template <GgmlType kType, int R, int T>
void tile32Pairs(const uint8_t* w, size_t wStride, const uint8_t* x, size_t xStride, int64_t cols,
                 float* y, int64_t yStride) {
  using F = Format32<kType>;
  const int64_t nb = cols / 32;
  Q8x32Row xr[T];
  for (int t = 0; t < T; ++t) xr[t] = q8x32Row(x + t * xStride, cols);
  __m512 acc[R][T];
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r)
#pragma GCC unroll 8
    for (int t = 0; t < T; ++t) acc[r][t] = _mm512_setzero_ps();

  // One step: blocks b and b + 1, or (kSingle, an odd last block) block b alone, with the
  // second half zeroed on the activation side.
  auto step = [&]<bool kSingle>(int64_t b) {
    __m512i xq[T], base[T];
    __m512 xd[T], xs[T];
#pragma GCC unroll 8
    for (int t = 0; t < T; ++t) {
      const float d1 = kSingle ? 0.0f : xr[t].d[b + 1];
      xq[t] = kSingle ? _mm512_zextsi256_si512(load256(xr[t].qs + 32 * b))
                      : _mm512_loadu_si512(xr[t].qs + 32 * b);
      xd[t] = _mm512_permutexvar_ps(spreadPair(1),
                                    _mm512_castps128_ps512(_mm_setr_ps(xr[t].d[b], d1, 0, 0)));
      if constexpr (F::kOffset != 0) {
        const int32_t s1 = kSingle ? 0 : xr[t].sum[b + 1];
        base[t] = _mm512_maskz_permutexvar_epi32(
            kLanes0And8, placePair(0, 1),
            _mm512_castsi128_si512(
                _mm_setr_epi32(-F::kOffset * xr[t].sum[b], -F::kOffset * s1, 0, 0)));
      }
      if constexpr (F::kHasMin) {
        const float s1 = kSingle ? 0.0f : xr[t].s[b + 1];
        xs[t] =
            _mm512_maskz_permutexvar_ps(kLanes0And8, placePair(0, 1),
                                        _mm512_castps128_ps512(_mm_setr_ps(xr[t].s[b], s1, 0, 0)));
      }
    }
    prefetchAhead(w + b * R * F::kBytes, 2 * R * F::kBytes);
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) {
      const uint8_t* b0 = w + r * wStride + b * F::kBytes;
      const uint8_t* b1 = kSingle ? b0 : b0 + F::kBytes;  // stays inside the row
      const __m512i q = pairQuants<kType>(b0, b1);
      const __m512 dm = pairScales(b0, b1);
      const __m512 dw = _mm512_permutexvar_ps(spreadPair(2), dm);
#pragma GCC unroll 8
      for (int t = 0; t < T; ++t) {
        const __m512i sum =
            _mm512_dpbusd_epi32(F::kOffset != 0 ? base[t] : _mm512_setzero_si512(), q, xq[t]);
        acc[r][t] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(sum), _mm512_mul_ps(dw, xd[t]), acc[r][t]);
      }
      if constexpr (F::kHasMin) {
        const __m512 mw = _mm512_maskz_permutexvar_ps(kLanes0And8, placePair(1, 3), dm);
#pragma GCC unroll 8
        for (int t = 0; t < T; ++t) acc[r][t] = _mm512_fmadd_ps(mw, xs[t], acc[r][t]);
      }
    }
  };
  int64_t b = 0;
  for (; b + 2 <= nb; b += 2) step.template operator()<false>(b);
  if (b < nb) step.template operator()<true>(b);
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r)
#pragma GCC unroll 8
    for (int t = 0; t < T; ++t) y[t * yStride + r] = _mm512_reduce_add_ps(acc[r][t]);
}

}  // namespace
}  // namespace ember::cpu::quant
