#pragma once
// Vectorized activation preparation. Produces the same bytes as quantize_activations.cpp: the
// scale is computed from the exact maximum magnitude with the same scalar operations, and
// vroundps/vcvtps2dq round half to even like nearbyint.
#include "backend/cpu/quant/kernels.h"
#include "backend/cpu/quant/x86_simd.h"

namespace ember::cpu::quant {
namespace {

inline float hmax(__m256 v) {
  __m128 m = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  m = _mm_max_ps(m, _mm_movehl_ps(m, m));
  m = _mm_max_ss(m, _mm_movehdup_ps(m));
  return _mm_cvtss_f32(m);
}

inline __m256 absPs(__m256 v) { return _mm256_andnot_ps(_mm256_set1_ps(-0.0f), v); }

inline __m256i roundToInt32(__m256 v, __m256 scale) {
  return _mm256_cvtps_epi32(
      _mm256_round_ps(_mm256_mul_ps(v, scale), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
}

inline float roundThroughFp16Fast(float v) {
  return _cvtsh_ss(_cvtss_sh(v, _MM_FROUND_TO_NEAREST_INT));
}

void prepareQ8x32Simd(const float* x, int64_t cols, uint8_t* out) {
  const int64_t nb = cols / 32;
  auto* qs = reinterpret_cast<int8_t*>(out);
  auto* d = reinterpret_cast<float*>(out + cols);
  auto* sum = reinterpret_cast<int32_t*>(d + nb);
  float* s = d + 2 * nb;
  for (int64_t b = 0; b < nb; ++b) {
    const float* v = x + 32 * b;
    const __m256 v0 = _mm256_loadu_ps(v), v1 = _mm256_loadu_ps(v + 8);
    const __m256 v2 = _mm256_loadu_ps(v + 16), v3 = _mm256_loadu_ps(v + 24);
    const float amax = hmax(
        _mm256_max_ps(_mm256_max_ps(absPs(v0), absPs(v1)), _mm256_max_ps(absPs(v2), absPs(v3))));
    const float scale = amax / 127.0f;
    const __m256 inverse = _mm256_set1_ps(amax != 0.0f ? 127.0f / amax : 0.0f);
    const __m256i i0 = roundToInt32(v0, inverse), i1 = roundToInt32(v1, inverse);
    const __m256i i2 = roundToInt32(v2, inverse), i3 = roundToInt32(v3, inverse);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(qs + 32 * b), packInt8(i0, i1, i2, i3));
    const int32_t total =
        hsumInt(_mm256_add_epi32(_mm256_add_epi32(i0, i1), _mm256_add_epi32(i2, i3)));
    d[b] = roundThroughFp16Fast(scale);
    sum[b] = total;
    s[b] = roundThroughFp16Fast(scale * float(total));
  }
}

void prepareQ8xKSimd(const float* x, int64_t cols, uint8_t* out) {
  const int64_t nb = cols / 256;
  auto* qs = reinterpret_cast<int8_t*>(out);
  auto* d = reinterpret_cast<float*>(out + cols);
  auto* bsums = reinterpret_cast<int16_t*>(d + nb);
  for (int64_t b = 0; b < nb; ++b) {
    const float* v = x + 256 * b;
    __m256 maxAbs = _mm256_setzero_ps();
    for (int k = 0; k < 32; ++k) maxAbs = _mm256_max_ps(maxAbs, absPs(_mm256_loadu_ps(v + 8 * k)));
    const float amax = hmax(maxAbs);
    int8_t* q = qs + 256 * b;
    int16_t* bs = bsums + 16 * b;
    if (amax == 0.0f) {
      d[b] = 0.0f;
      std::memset(q, 0, 256);
      std::memset(bs, 0, 32);
      continue;
    }
    // The signed value of the first element of largest magnitude (the scalar scan keeps it).
    float max = 0.0f;
    const __m256 target = _mm256_set1_ps(amax);
    for (int k = 0; k < 32; ++k) {
      const int mask =
          _mm256_movemask_ps(_mm256_cmp_ps(absPs(_mm256_loadu_ps(v + 8 * k)), target, _CMP_EQ_OQ));
      if (mask) {
        max = v[8 * k + __builtin_ctz(unsigned(mask))];
        break;
      }
    }
    const float inverseScalar = -127.0f / max;
    const __m256 inverse = _mm256_set1_ps(inverseScalar);
    for (int k = 0; k < 8; ++k) {  // 32 elements: two groups of 16 for the sums
      const float* p = v + 32 * k;
      const __m256i i0 = roundToInt32(_mm256_loadu_ps(p), inverse);
      const __m256i i1 = roundToInt32(_mm256_loadu_ps(p + 8), inverse);
      const __m256i i2 = roundToInt32(_mm256_loadu_ps(p + 16), inverse);
      const __m256i i3 = roundToInt32(_mm256_loadu_ps(p + 24), inverse);
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(q + 32 * k), packInt8(i0, i1, i2, i3));
      bs[2 * k] = int16_t(hsumInt(_mm256_add_epi32(i0, i1)));
      bs[2 * k + 1] = int16_t(hsumInt(_mm256_add_epi32(i2, i3)));
    }
    d[b] = 1.0f / inverseScalar;
  }
}

void prepareF16RoundedSimd(const float* x, int64_t cols, uint8_t* out) {
  auto* y = reinterpret_cast<float*>(out);
  int64_t i = 0;
  for (; i + 8 <= cols; i += 8)
    _mm256_storeu_ps(
        y + i, _mm256_cvtph_ps(_mm256_cvtps_ph(_mm256_loadu_ps(x + i), _MM_FROUND_TO_NEAREST_INT)));
  for (; i < cols; ++i) y[i] = roundThroughFp16Fast(x[i]);
}

}  // namespace
}  // namespace ember::cpu::quant
