#pragma once
// AVX-512 helpers shared by the attention kernels of vector_math_avx512.cpp and
// attention_query_lanes_avx512.cpp; include only from files compiled with AVX-512
// (engine/CMakeLists.txt's *_avx512.cpp rule).
#include <immintrin.h>

#include <cstdint>

namespace ember::cpu::ops::avx512 {

// 16 fp16 values as floats (exact).
inline __m512 loadF16x16(const uint16_t* p) {
  return _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
}

// Stores 16 fp16 values of p at `to` as floats; sets a bit of nonFinite for each NaN or infinity.
inline void convertF16x16(const uint16_t* p, float* to, __mmask16& nonFinite) {
  const __m512 v = loadF16x16(p);
  nonFinite |= _mm512_fpclass_ps_mask(v, 0x99);  // QNaN | +inf | -inf | SNaN
  _mm512_store_ps(to, v);
}

// expfPolynomial (reference_order.h) on 16 floats: the AVX2 kernel's operations, but 2^n applied
// by vscalefps. That rounds j * 2^n once, as the AVX2 kernel's two halves do (the first product
// is exact for every n in [-192, 192]); lanes with |n| > 192 (the masked -inf scores among them)
// become 0, or infinity for n > 0, as there.
inline __m512 expPolynomial16(__m512 x) {
  const __m512 shift = _mm512_set1_ps(0x1.8p23f);
  const __m512 z = _mm512_fmadd_ps(x, _mm512_set1_ps(0x1.715476p+0f), shift);
  const __m512 n = _mm512_sub_ps(z, shift);
  const __m512 b = _mm512_fnmadd_ps(n, _mm512_set1_ps(0x1.7f7d1cp-20f),
                                    _mm512_fnmadd_ps(n, _mm512_set1_ps(0x1.62e4p-1f), x));
  const __m512 u = _mm512_mul_ps(b, b);
  const __m512 j = _mm512_fmadd_ps(
      _mm512_fmadd_ps(
          _mm512_fmadd_ps(_mm512_set1_ps(0x1.0e4020p-7f), b, _mm512_set1_ps(0x1.573e2ep-5f)), u,
          _mm512_fmadd_ps(_mm512_set1_ps(0x1.555e66p-3f), b, _mm512_set1_ps(0x1.fffdb6p-2f))),
      u, _mm512_fmadd_ps(_mm512_set1_ps(0x1.ffffecp-1f), b, _mm512_set1_ps(1.0f)));
  const __m512 result = _mm512_scalef_ps(j, n);
  const __mmask16 outside =
      _mm512_cmp_ps_mask(_mm512_abs_ps(n), _mm512_set1_ps(192.0f), _CMP_GT_OQ);
  if (outside == 0) return result;
  const __mmask16 nonPositive = _mm512_cmp_ps_mask(n, _mm512_setzero_ps(), _CMP_LE_OQ);
  return _mm512_mask_blend_ps(outside, result,
                              _mm512_mask_blend_ps(nonPositive, _mm512_set1_ps(__builtin_inff()),
                                                   _mm512_setzero_ps()));
}

// a[0..15] added elementwise as sumLanes16 adds its 16 lanes: (i, i+8), (i, i+4), then
// (0 + 2) + (1 + 3). Overwrites a.
inline __m512 sumPairwise16(__m512* a) {
  for (int l = 0; l < 8; ++l) a[l] = _mm512_add_ps(a[l], a[l + 8]);
  for (int l = 0; l < 4; ++l) a[l] = _mm512_add_ps(a[l], a[l + 4]);
  return _mm512_add_ps(_mm512_add_ps(a[0], a[2]), _mm512_add_ps(a[1], a[3]));
}

}  // namespace ember::cpu::ops::avx512
