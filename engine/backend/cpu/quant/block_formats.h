#pragma once
// Byte layouts of the GGUF weight blocks the CPU backend reads, and exact scalar conversions
// between float32 and the 16-bit float formats. The layouts are ggml's (ggml-common.h); every
// block starts with 2-byte fields, so a row of blocks only needs 2-byte alignment.
//
//   type  elements bytes  layout
//   Q4_0  32       18     f16 d; u8 qs[16]            x = d * (q - 8)
//   Q4_1  32       20     f16 d, m; u8 qs[16]         x = d * q + m
//   Q5_0  32       22     f16 d; u8 qh[4]; u8 qs[16]  x = d * (q - 16), q = nibble | bit << 4
//   Q5_1  32       24     f16 d, m; u8 qh[4]; qs[16]  x = d * q + m
//   Q8_0  32       34     f16 d; i8 qs[32]            x = d * q
//   Q4_K  256      144    f16 d, dmin; u8 scales[12]; u8 qs[128]
//   Q5_K  256      176    f16 d, dmin; u8 scales[12]; u8 qh[32]; u8 qs[128]
//   Q6_K  256      210    u8 ql[128]; u8 qh[64]; i8 scales[16]; f16 d
//   MXFP4 32       17     u8 e; u8 qs[16]             x = 2^(e - 128) * kFp4Values[q] (gpt-oss)
// In the 32-element 4-bit formats byte j holds element j (low nibble) and j + 16 (high nibble);
// the fifth bit of element j is bit j of qh read as a little-endian uint32.
#include <cstdint>
#include <cstring>

// Helpers here are always inlined: the AVX2/AVX-512 files include this header too, and an
// out-of-line copy compiled for AVX-512 must never be the one a baseline caller links to.
#define EMBER_INLINE inline __attribute__((always_inline))

namespace ember::cpu::quant {

constexpr int kBlock32 = 32;      // elements per block of Q4_0 .. Q8_0
constexpr int kSuperBlock = 256;  // elements per K-quant super-block

struct BlockQ4_0 {
  uint16_t d;
  uint8_t qs[16];
};
struct BlockQ4_1 {
  uint16_t d, m;
  uint8_t qs[16];
};
struct BlockQ5_0 {
  uint16_t d;
  uint8_t qh[4];
  uint8_t qs[16];
};
struct BlockQ5_1 {
  uint16_t d, m;
  uint8_t qh[4];
  uint8_t qs[16];
};
struct BlockQ8_0 {
  uint16_t d;
  int8_t qs[32];
};
// K-quants: 8 sub-blocks of 32 with 6-bit scales and mins packed into 12 bytes (see
// unpackScalesMins). Element 64*j + l is the low nibble of qs[32*j + l], element 64*j + 32 + l
// the high nibble; Q5_K's fifth bits: element 64*j + l is bit 2j of qh[l], + 32 is bit 2j + 1.
struct BlockQ4_K {
  uint16_t d, dmin;
  uint8_t scales[12];
  uint8_t qs[128];
};
struct BlockQ5_K {
  uint16_t d, dmin;
  uint8_t scales[12];
  uint8_t qh[32];
  uint8_t qs[128];
};
// Q6_K: 16 sub-blocks of 16 with signed 8-bit scales; q = 6 bits - 32. For half h (elements
// 128h ..) with L = ql + 64h, H = qh + 32h and l < 32: element 128h + l is L[l] low | H[l] bits
// 0-1, + 32 is L[l + 32] low | bits 2-3, + 64 is L[l] high | bits 4-5, + 96 is L[l + 32] high |
// bits 6-7 (the two high bits shifted up by 4).
struct BlockQ6_K {
  uint8_t ql[128];
  uint8_t qh[64];
  int8_t scales[16];
  uint16_t d;
};

// MXFP4 (OCP microscaling FP4): a shared power-of-two scale (E8M0) and 16 bytes of 4-bit E2M1
// codes, nibbles placed as in Q4_0. ggml stores the E2M1 values doubled, as integers, and halves
// the scale instead, so the dot products stay integer sums.
struct BlockMxfp4 {
  uint8_t e;
  uint8_t qs[16];
};
// The E2M1 code points, doubled (ggml's kvalues_mxfp4).
inline constexpr int8_t kFp4Values[16] = {0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12};
// 2^(e - 128): half of the block's E8M0 scale 2^(e - 127), as ggml_e8m0_to_fp32_half computes it
// (e < 2 gives the subnormals 2^-128 and 2^-127).
EMBER_INLINE float e8m0Half(uint8_t e) {
  const uint32_t bits = e < 2 ? uint32_t(0x00200000) << e : uint32_t(e - 1) << 23;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

static_assert(sizeof(BlockMxfp4) == 17);
static_assert(sizeof(BlockQ4_0) == 18 && sizeof(BlockQ4_1) == 20 && sizeof(BlockQ5_0) == 22 &&
              sizeof(BlockQ5_1) == 24 && sizeof(BlockQ8_0) == 34);
static_assert(sizeof(BlockQ4_K) == 144 && sizeof(BlockQ5_K) == 176 && sizeof(BlockQ6_K) == 210);

// The 8 six-bit scales and mins of a Q4_K/Q5_K super-block. Bytes 0-3 hold scales 0-3 (low six
// bits) and the top two bits of scales 4-7; bytes 4-7 the same for mins; bytes 8-11 the low
// four bits of scale 4+i (low nibble) and min 4+i (high nibble).
struct ScalesMins {
  uint8_t scale[8];
  uint8_t min[8];
};
EMBER_INLINE ScalesMins unpackScalesMins(const uint8_t* packed) {
  uint32_t a, b, c;
  std::memcpy(&a, packed, 4);
  std::memcpy(&b, packed + 4, 4);
  std::memcpy(&c, packed + 8, 4);
  const uint32_t scaleLow = a & 0x3f3f3f3fu;
  const uint32_t minLow = b & 0x3f3f3f3fu;
  const uint32_t scaleHigh = (c & 0x0f0f0f0fu) | ((a >> 2) & 0x30303030u);
  const uint32_t minHigh = ((c >> 4) & 0x0f0f0f0fu) | ((b >> 2) & 0x30303030u);
  ScalesMins out;
  std::memcpy(out.scale, &scaleLow, 4);
  std::memcpy(out.scale + 4, &scaleHigh, 4);
  std::memcpy(out.min, &minLow, 4);
  std::memcpy(out.min + 4, &minHigh, 4);
  return out;
}

EMBER_INLINE uint16_t loadU16(const void* p) {
  uint16_t v;
  std::memcpy(&v, p, 2);
  return v;
}
EMBER_INLINE uint32_t loadU32(const void* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}

// IEEE half -> float, exact for every input (subnormals, infinities, NaNs).
EMBER_INLINE float fp16ToFloat(uint16_t h) {
  const uint32_t sign = uint32_t(h & 0x8000u) << 16;
  const uint32_t exponent = (h >> 10) & 0x1fu;
  const uint32_t mantissa = h & 0x3ffu;
  if (exponent == 0x1f) return __builtin_bit_cast(float, sign | 0x7f800000u | (mantissa << 13));
  if (exponent != 0)
    return __builtin_bit_cast(float, sign | ((exponent + 112) << 23) | (mantissa << 13));
  // Zero or subnormal: mantissa * 2^-24 is exact in float.
  const float magnitude = float(mantissa) * 0x1p-24f;
  return __builtin_bit_cast(float, __builtin_bit_cast(uint32_t, magnitude) | sign);
}

// float -> IEEE half, rounding to nearest even like F16C's vcvtps2ph (and numpy's astype).
EMBER_INLINE uint16_t floatToFp16(float f) {
  const uint32_t bits = __builtin_bit_cast(uint32_t, f);
  const uint16_t sign = uint16_t((bits >> 16) & 0x8000u);
  const uint32_t magnitude = bits & 0x7fffffffu;
  if (magnitude > 0x7f800000u) return uint16_t(sign | 0x7e00u | ((magnitude >> 13) & 0x3ffu));
  if (magnitude >= 0x477ff000u) return uint16_t(sign | 0x7c00u);  // >= 65520 rounds to infinity
  uint32_t mantissa, shift;
  if (magnitude >= 0x38800000u) {  // a normal half: rebias the exponent, keep 10 mantissa bits
    const uint32_t half = ((magnitude >> 23) - 112) << 10 | ((magnitude >> 13) & 0x3ffu);
    const uint32_t rest = magnitude & 0x1fffu;
    const uint32_t roundUp = rest > 0x1000u || (rest == 0x1000u && (half & 1u));
    return uint16_t(sign | (half + roundUp));  // a carry moves into the exponent, as it should
  }
  // Subnormal half (or zero): the value in units of 2^-24, rounded to nearest even.
  const uint32_t exponent = magnitude >> 23;
  if (exponent < 102) return sign;  // below 2^-25: rounds to zero
  mantissa = (magnitude & 0x7fffffu) | 0x800000u;
  shift = 126 - exponent;  // 14 .. 24
  const uint32_t units = mantissa >> shift;
  const uint32_t rest = mantissa & ((1u << shift) - 1);
  const uint32_t halfway = 1u << (shift - 1);
  const uint32_t roundUp = rest > halfway || (rest == halfway && (units & 1u));
  return uint16_t(sign | (units + roundUp));
}

EMBER_INLINE float bf16ToFloat(uint16_t h) { return __builtin_bit_cast(float, uint32_t(h) << 16); }

// float -> bfloat16 rounding to nearest even; NaNs stay NaNs (quiet), as ggml does.
EMBER_INLINE uint16_t floatToBf16(float f) {
  const uint32_t bits = __builtin_bit_cast(uint32_t, f);
  if ((bits & 0x7fffffffu) > 0x7f800000u) return uint16_t((bits >> 16) | 0x40u);
  return uint16_t((uint64_t(bits) + 0x7fffu + ((bits >> 16) & 1u)) >> 16);
}

EMBER_INLINE float roundThroughFp16(float f) { return fp16ToFloat(floatToFp16(f)); }
EMBER_INLINE float roundThroughBf16(float f) { return bf16ToFloat(floatToBf16(f)); }

}  // namespace ember::cpu::quant
