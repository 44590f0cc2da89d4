// Compiled with AVX-512 F/BW/VL/DQ + VNNI + FMA + F16C (engine/CMakeLists.txt's *_avx512.cpp
// rule); used only after a CPU check. The integer attention kernels of attention_int8.h: each
// lane of a register runs the scalar kernel's operations in the scalar kernel's order (integer
// sums are exact in any order), so the results are the scalar table's bit for bit.
#include <immintrin.h>

// GCC 12 warns that the intrinsics' own undefined pass-through operands may be used
// uninitialized (a false positive of its headers at -O3).
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

#include <cstring>

#include "backend/cpu/ops/attention_int8.h"

namespace ember::cpu::ops {
namespace {

__m512 load16Halves(const uint16_t* x) {
  return _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(x)));
}

float rowMaxAbs(const uint16_t* row, int64_t n) {
  __m512 m = _mm512_setzero_ps();
  for (int64_t e = 0; e < n; e += 16) m = _mm512_max_ps(m, _mm512_abs_ps(load16Halves(row + e)));
  return _mm512_reduce_max_ps(m);
}

// round(x * inverse) clamped to [-128, 127] (vcvtps2dq gives INT_MIN for NaN: -128, as the
// scalar kernel's roundToInt8).
__m512i roundToInt8Lanes(__m512 x, __m512 inverse) {
  const __m512i q = _mm512_cvtps_epi32(_mm512_mul_ps(x, inverse));
  return _mm512_min_epi32(_mm512_max_epi32(q, _mm512_set1_epi32(-128)), _mm512_set1_epi32(127));
}

float inverseOf(float m) { return m > 0.0f ? 127.0f / m : 0.0f; }

void quantizeKeysAvx512(const uint16_t* const* rows, int64_t count, int64_t n, int8_t* out,
                        float* scales, int32_t* sums) {
  for (int64_t i = 0; i < count; ++i) {
    const uint16_t* row = rows[i];
    const float m = rowMaxAbs(row, n);
    const __m512 inverse = _mm512_set1_ps(inverseOf(m));
    __m512i sum = _mm512_setzero_si512();
    for (int64_t e = 0; e < n; e += 16) {
      const __m512i q = roundToInt8Lanes(load16Halves(row + e), inverse);
      sum = _mm512_add_epi32(sum, q);
      _mm_storeu_si128(reinterpret_cast<__m128i*>(out + i * n + e), _mm512_cvtepi32_epi8(q));
    }
    scales[i] = m / 127.0f;
    sums[i] = _mm512_reduce_add_epi32(sum);
  }
}

// Four int32 vectors of byte values -> each lane's 4 bytes side by side (a in the low byte).
__m512i packFour(__m512i a, __m512i b, __m512i c, __m512i d) {
  const __m512i byte = _mm512_set1_epi32(0xff);
  __m512i x = _mm512_and_si512(a, byte);
  x = _mm512_or_si512(x, _mm512_slli_epi32(_mm512_and_si512(b, byte), 8));
  x = _mm512_or_si512(x, _mm512_slli_epi32(_mm512_and_si512(c, byte), 16));
  return _mm512_or_si512(x, _mm512_slli_epi32(d, 24));
}

void quantizeValuesAvx512(const uint16_t* const* rows, int64_t count, int64_t n, int8_t* out,
                          float* scales) {
  for (int64_t i = 0; i < count; i += kKeyGroup) {
    __m512 inverse[kKeyGroup];
    for (int r = 0; r < kKeyGroup; ++r) {
      const float m = rowMaxAbs(rows[i + r], n);
      inverse[r] = _mm512_set1_ps(inverseOf(m));
      scales[i + r] = m / 127.0f;
    }
    int8_t* group = out + (i / kKeyGroup) * n * kKeyGroup;
    for (int64_t e = 0; e < n; e += 16) {
      __m512i q[kKeyGroup];
      for (int r = 0; r < kKeyGroup; ++r)
        q[r] = roundToInt8Lanes(load16Halves(rows[i + r] + e), inverse[r]);
      _mm512_storeu_si512(group + e * kKeyGroup, packFour(q[0], q[1], q[2], q[3]));
    }
  }
}

void quantizeQueriesAvx512(const float* const* qs, int lanes, int64_t n, float scale, uint8_t* qt,
                           float* queryScales) {
  alignas(64) uint8_t rows[kQueryLanes * 512];  // (16, n) the lanes' bytes, n <= 512
  for (int lane = 0; lane < kQueryLanes; ++lane) {
    uint8_t* row = rows + lane * n;
    if (lane >= lanes) {
      std::memset(row, 128, size_t(n));
      queryScales[lane] = 0.0f;
      continue;
    }
    __m512 mv = _mm512_setzero_ps();
    for (int64_t e = 0; e < n; e += 16) mv = _mm512_max_ps(mv, _mm512_abs_ps(_mm512_loadu_ps(qs[lane] + e)));
    const float m = _mm512_reduce_max_ps(mv);
    const __m512 inverse = _mm512_set1_ps(inverseOf(m));
    for (int64_t e = 0; e < n; e += 16) {
      const __m512i q = _mm512_max_epi32(roundToInt8Lanes(_mm512_loadu_ps(qs[lane] + e), inverse),
                                         _mm512_set1_epi32(-127));
      _mm_storeu_si128(reinterpret_cast<__m128i*>(row + e),
                       _mm512_cvtepi32_epi8(_mm512_add_epi32(q, _mm512_set1_epi32(128))));
    }
    queryScales[lane] = m / 127.0f * scale;
  }
  // (16, n / 4) dwords -> (n / 4, 16)
  const __m512i index = _mm512_mullo_epi32(_mm512_set_epi32(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0),
                                           _mm512_set1_epi32(int32_t(n / 4)));
  for (int64_t g = 0; g < n / 4; ++g)
    _mm512_storeu_si512(qt + g * 64, _mm512_i32gather_epi32(
                                         _mm512_add_epi32(index, _mm512_set1_epi32(int32_t(g))), rows, 4));
}

int32_t loadInt32(const void* p) {
  int32_t x;
  std::memcpy(&x, p, sizeof x);
  return x;
}

void scoreKeysAvx512(const uint8_t* qt, const float* queryScales, const int8_t* keys,
                     const float* keyScales, const int32_t* sums, int64_t count, int64_t n,
                     float* scores) {
  constexpr int kKeys = 4;
  const __m512 qs = _mm512_loadu_ps(queryScales);
  for (int64_t i = 0; i < count; i += kKeys) {
    __m512i acc[kKeys];
    for (int r = 0; r < kKeys; ++r) acc[r] = _mm512_setzero_si512();
    const int8_t* k = keys + i * n;
    for (int64_t g = 0; g < n / 4; ++g) {
      const __m512i q = _mm512_loadu_si512(qt + g * 64);
      for (int r = 0; r < kKeys; ++r)
        acc[r] = _mm512_dpbusd_epi32(acc[r], q, _mm512_set1_epi32(loadInt32(k + r * n + g * 4)));
    }
    for (int r = 0; r < kKeys; ++r) {
      const __m512i corrected = _mm512_sub_epi32(acc[r], _mm512_set1_epi32(128 * sums[i + r]));
      const __m512 s = _mm512_mul_ps(
          _mm512_mul_ps(_mm512_cvtepi32_ps(corrected), _mm512_set1_ps(keyScales[i + r])), qs);
      _mm512_storeu_ps(scores + (i + r) * kQueryLanes, s);
    }
  }
}

// expNonPositive in every lane, the same operations.
__m512 expLanes(__m512 x) {
  x = _mm512_max_ps(x, _mm512_set1_ps(-87.0f));
  const __m512 n = _mm512_roundscale_ps(_mm512_mul_ps(x, _mm512_set1_ps(1.44269504088896341f)),
                                        _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m512 r = _mm512_fmadd_ps(n, _mm512_set1_ps(-0.693359375f), x);
  r = _mm512_fmadd_ps(n, _mm512_set1_ps(2.12194440e-4f), r);
  __m512 p = _mm512_set1_ps(1.9875691500e-4f);
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.3981999507e-3f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(8.3334519073e-3f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(4.1665795894e-2f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.6666665459e-1f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(5.0000001201e-1f));
  __m512 y = _mm512_fmadd_ps(p, _mm512_mul_ps(r, r), r);
  y = _mm512_add_ps(y, _mm512_set1_ps(1.0f));
  // y * 2^n in one rounding, as the scalar kernel's multiplication by 2^n (normal: n >= -126)
  return _mm512_scalef_ps(y, n);
}

void weighKeysAvx512(float* scores, const int32_t* first, const int32_t* last,
                     const float* valueScales, int64_t count, uint8_t* weights, float* blockScales,
                     float* sums) {
  const __m512i lo = _mm512_loadu_si512(first), hi = _mm512_loadu_si512(last);
  const auto sees = [&](int64_t k) {
    const __m512i kk = _mm512_set1_epi32(int32_t(k));
    return __mmask16(_mm512_cmple_epi32_mask(lo, kk) & _mm512_cmple_epi32_mask(kk, hi));
  };
  __m512 max = _mm512_set1_ps(-__builtin_inff());
  for (int64_t k = 0; k < count; ++k)
    max = _mm512_mask_max_ps(max, sees(k), max, _mm512_loadu_ps(scores + k * kQueryLanes));
  __m512 sum = _mm512_setzero_ps();
  for (int64_t b = 0; b < count / kWeightBlock; ++b) {
    float* s = scores + b * kWeightBlock * kQueryLanes;
    __m512 m = _mm512_setzero_ps();
    for (int64_t k = 0; k < kWeightBlock; ++k) {
      const __mmask16 seen = sees(b * kWeightBlock + k);
      const __m512 x = _mm512_maskz_sub_ps(seen, _mm512_loadu_ps(s + k * kQueryLanes), max);
      const __m512 p = _mm512_maskz_mov_ps(seen, expLanes(x));
      sum = _mm512_add_ps(sum, p);
      const __m512 weighted = _mm512_mul_ps(p, _mm512_set1_ps(valueScales[b * kWeightBlock + k]));
      _mm512_storeu_ps(s + k * kQueryLanes, weighted);
      m = _mm512_max_ps(m, weighted);
    }
    _mm512_storeu_ps(blockScales + b * kQueryLanes, _mm512_div_ps(m, _mm512_set1_ps(255.0f)));
    const __mmask16 weighed = _mm512_cmp_ps_mask(m, _mm512_setzero_ps(), _CMP_GT_OQ);
    const __m512 inverse = _mm512_maskz_div_ps(weighed, _mm512_set1_ps(255.0f), m);
    const __m512i zero = _mm512_setzero_si512(), top = _mm512_set1_epi32(255);
    for (int64_t k = 0; k < kWeightBlock; k += kKeyGroup) {
      __m512i u[kKeyGroup];
      for (int r = 0; r < kKeyGroup; ++r) {
        const __m512 y = _mm512_mul_ps(_mm512_loadu_ps(s + (k + r) * kQueryLanes), inverse);
        const __m512i q = _mm512_min_epi32(_mm512_max_epi32(_mm512_cvtps_epi32(y), zero), top);
        u[r] = _mm512_maskz_mov_epi32(weighed, q);
      }
      _mm512_storeu_si512(weights + (b * kWeightBlock + k) / kKeyGroup * 64,
                          packFour(u[0], u[1], u[2], u[3]));
    }
  }
  _mm512_storeu_ps(sums, sum);
}

void accumulateValuesAvx512(const uint8_t* weights, const float* blockScales,
                            const int8_t* values, int64_t count, int64_t n, float* out) {
  constexpr int kColumns = 8;
  const int64_t groupsPerBlock = kWeightBlock / kKeyGroup;
  for (int64_t d0 = 0; d0 < n; d0 += kColumns) {
    __m512 f[kColumns];
    for (int i = 0; i < kColumns; ++i) f[i] = _mm512_setzero_ps();
    for (int64_t b = 0; b < count / kWeightBlock; ++b) {
      __m512i a[kColumns];
      for (int i = 0; i < kColumns; ++i) a[i] = _mm512_setzero_si512();
      for (int64_t t = b * groupsPerBlock; t < (b + 1) * groupsPerBlock; ++t) {
        const __m512i w = _mm512_loadu_si512(weights + t * 64);
        const int8_t* column = values + (t * n + d0) * kKeyGroup;
        for (int i = 0; i < kColumns; ++i)
          a[i] = _mm512_dpbusd_epi32(a[i], w, _mm512_set1_epi32(loadInt32(column + i * 4)));
      }
      const __m512 c = _mm512_loadu_ps(blockScales + b * kQueryLanes);
      for (int i = 0; i < kColumns; ++i) f[i] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(a[i]), c, f[i]);
    }
    for (int i = 0; i < kColumns; ++i) _mm512_storeu_ps(out + (d0 + i) * kQueryLanes, f[i]);
  }
}

}  // namespace

const QuantizedAttentionKernels& avx512QuantizedAttentionKernels() {
  static const QuantizedAttentionKernels kernels{quantizeKeysAvx512, quantizeValuesAvx512,
                                                 quantizeQueriesAvx512, scoreKeysAvx512, weighKeysAvx512,
                                                 accumulateValuesAvx512};
  return kernels;
}

}  // namespace ember::cpu::ops
