#pragma once
// Vector helpers for the x86 kernels. Included only by files compiled for AVX2 (dot_avx2.cpp)
// or AVX-512 (dot_avx512.cpp); everything here has internal linkage so that the two builds never
// share a symbol (the linker could otherwise pick the AVX-512 copy for AVX2 callers). For the
// same reason these files avoid out-of-line standard templates.
//
// EMBER_X86_VNNI selects the AVX-512 VNNI instructions (vpdpbusd, vpdpwssd, on 256-bit vectors
// through AVX-512VL); without it the same sums come from vpmaddubsw + vpmaddwd.
// GCC 12's AVX-512 intrinsics pass _mm512_undefined_*() values through, which its own
// (maybe-)uninitialized analysis then reports at the header's lines once inlined here.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>
#pragma GCC diagnostic pop

#include <cstdint>
#include <cstring>

#if defined(__AVX512VNNI__) && defined(__AVX512VL__)
#define EMBER_X86_VNNI 1
#else
#define EMBER_X86_VNNI 0
#endif

namespace ember::cpu::quant {
namespace {

inline __m256i load256(const void* p) { return _mm256_loadu_si256(static_cast<const __m256i*>(p)); }
inline __m128i load128(const void* p) { return _mm_loadu_si128(static_cast<const __m128i*>(p)); }

// Weight bytes streamed from memory are prefetched this far ahead (see the tile kernels).
constexpr int64_t kPrefetchBytes = 12 * 1024;
inline void prefetchAhead(const uint8_t* position, int64_t bytes) {
  for (int64_t offset = 0; offset < bytes; offset += 64)
    _mm_prefetch(reinterpret_cast<const char*>(position + kPrefetchBytes + offset), _MM_HINT_T0);
}

inline int64_t minOf(int64_t a, int64_t b) { return a < b ? a : b; }

inline float hsum(__m256 v) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}

inline int32_t hsumInt(__m128i v) {
  v = _mm_add_epi32(v, _mm_shuffle_epi32(v, _MM_SHUFFLE(1, 0, 3, 2)));
  v = _mm_add_epi32(v, _mm_shuffle_epi32(v, _MM_SHUFFLE(2, 3, 0, 1)));
  return _mm_cvtsi128_si32(v);
}
inline int32_t hsumInt(__m256i v) {
  return hsumInt(_mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1)));
}
// The horizontal sums of four vectors, in lanes 0-3 (integer sums are exact in any order).
inline __m128i hsumInt4(__m256i a, __m256i b, __m256i c, __m256i d) {
  const __m256i abcd = _mm256_hadd_epi32(_mm256_hadd_epi32(a, b), _mm256_hadd_epi32(c, d));
  return _mm_add_epi32(_mm256_castsi256_si128(abcd), _mm256_extracti128_si256(abcd, 1));
}

// acc + sums of 4 adjacent u8 * s8 products, per 32-bit lane. Without VNNI the pairwise 16-bit
// sums saturate beyond 32767: callers keep u * |s| * 2 below that.
inline __m256i dotU8S8(__m256i acc, __m256i u, __m256i s) {
#if EMBER_X86_VNNI
  return _mm256_dpbusd_epi32(acc, u, s);
#else
  const __m256i pairs = _mm256_maddubs_epi16(u, s);
  return _mm256_add_epi32(acc, _mm256_madd_epi16(pairs, _mm256_set1_epi16(1)));
#endif
}

// acc + sums of 2 adjacent i16 * i16 products, per 32-bit lane.
inline __m256i dotI16(__m256i acc, __m256i a, __m256i b) {
#if EMBER_X86_VNNI
  return _mm256_dpwssd_epi32(acc, a, b);
#else
  return _mm256_add_epi32(acc, _mm256_madd_epi16(a, b));
#endif
}

// 16 bytes of packed nibbles -> 32 bytes: the low nibbles, then the high nibbles.
inline __m256i nibbles32(const uint8_t* qs) {
  const __m256i both = _mm256_broadcastsi128_si256(load128(qs));
  const __m256i shifted = _mm256_srlv_epi64(both, _mm256_setr_epi64x(0, 0, 4, 4));
  return _mm256_and_si256(shifted, _mm256_set1_epi8(0x0f));
}

// 32 bits (little-endian) -> 32 bytes: 0x10 where the bit is set.
inline __m256i fifthBits32(const uint8_t* qh) {
  uint32_t bits;
  std::memcpy(&bits, qh, 4);
#if defined(__AVX512BW__) && defined(__AVX512VL__)
  return _mm256_maskz_mov_epi8(__mmask32(bits), _mm256_set1_epi8(0x10));
#else
  const __m256i spread = _mm256_shuffle_epi8(
      _mm256_set1_epi32(int32_t(bits)), _mm256_setr_epi64x(0x0000000000000000, 0x0101010101010101,
                                                           0x0202020202020202, 0x0303030303030303));
  const __m256i select = _mm256_set1_epi64x(int64_t(0x8040201008040201ull));
  const __m256i set = _mm256_cmpeq_epi8(_mm256_and_si256(spread, select), select);
  return _mm256_and_si256(set, _mm256_set1_epi8(0x10));
#endif
}

// An int32 vector holding `v` in lane 0 and zeros elsewhere (an exact correction term that the
// lanes' horizontal sum picks up).
inline __m256i lane0(int32_t v) { return _mm256_zextsi128_si256(_mm_cvtsi32_si128(v)); }

// Two F16 values at p (d, then m) as floats in lanes 0 and 1.
inline __m128 halfPair(const uint8_t* p) {
  uint32_t bits;
  std::memcpy(&bits, p, 4);
  return _mm_cvtph_ps(_mm_cvtsi32_si128(int32_t(bits)));
}
inline float halfToFloat(const uint8_t* p) {
  uint16_t bits;
  std::memcpy(&bits, p, 2);
  return _cvtsh_ss(bits);
}

// Packs 32 int32 (four vectors, in order) into 32 int8 with signed saturation.
inline __m256i packInt8(__m256i a, __m256i b, __m256i c, __m256i d) {
  const __m256i ab = _mm256_packs_epi32(a, b);
  const __m256i cd = _mm256_packs_epi32(c, d);
  const __m256i packed = _mm256_packs_epi16(ab, cd);  // 4-byte groups: a0 b0 c0 d0 | a1 b1 c1 d1
  return _mm256_permutevar8x32_epi32(packed, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
}

}  // namespace
}  // namespace ember::cpu::quant
