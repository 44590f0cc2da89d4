#pragma once
// IEEE 754 binary16 (fp16) and bfloat16 <-> float32, exact and portable, written once for every
// backend's host code (GGUF F16/BF16 tensors, the quant blocks' f16 scales, the fp16 KV cache).
// float -> fp16 rounds to nearest even exactly as F16C's vcvtps2ph does (numpy's astype too),
// NaNs stay quiet NaNs with their top payload bits. Device code converts with its own intrinsics.
//
// Always inlined: the AVX2/AVX-512 translation units include this header too, and an out-of-line
// copy compiled for AVX-512 must never be the one a baseline caller links to.
#include <bit>
#include <cstdint>

#define EMBER_FP16_INLINE inline __attribute__((always_inline))

namespace ember::gguf {

// fp16 -> float, exact for every input (subnormals, infinities, NaNs).
EMBER_FP16_INLINE float fp16ToFloat(uint16_t h) {
  const uint32_t sign = uint32_t(h & 0x8000u) << 16;
  const uint32_t exponent = (h >> 10) & 0x1fu;
  const uint32_t mantissa = h & 0x3ffu;
  if (exponent == 0x1f) return std::bit_cast<float>(sign | 0x7f800000u | (mantissa << 13));
  if (exponent != 0) return std::bit_cast<float>(sign | ((exponent + 112) << 23) | (mantissa << 13));
  // Zero or subnormal: mantissa * 2^-24 is exact in float.
  const float magnitude = float(mantissa) * 0x1p-24f;
  return std::bit_cast<float>(std::bit_cast<uint32_t>(magnitude) | sign);
}

// float -> fp16, rounding to nearest even.
EMBER_FP16_INLINE uint16_t floatToFp16(float f) {
  const uint32_t bits = std::bit_cast<uint32_t>(f);
  const uint16_t sign = uint16_t((bits >> 16) & 0x8000u);
  const uint32_t magnitude = bits & 0x7fffffffu;
  if (magnitude > 0x7f800000u) return uint16_t(sign | 0x7e00u | ((magnitude >> 13) & 0x3ffu));
  if (magnitude >= 0x477ff000u) return uint16_t(sign | 0x7c00u);  // >= 65520 rounds to infinity
  if (magnitude >= 0x38800000u) {  // a normal half: rebias the exponent, keep 10 mantissa bits
    const uint32_t half = ((magnitude >> 23) - 112) << 10 | ((magnitude >> 13) & 0x3ffu);
    const uint32_t rest = magnitude & 0x1fffu;
    const uint32_t roundUp = rest > 0x1000u || (rest == 0x1000u && (half & 1u));
    return uint16_t(sign | (half + roundUp));  // a carry moves into the exponent, as it should
  }
  // Subnormal half (or zero): the value in units of 2^-24, rounded to nearest even.
  const uint32_t exponent = magnitude >> 23;
  if (exponent < 102) return sign;  // below 2^-25: rounds to zero
  const uint32_t mantissa = (magnitude & 0x7fffffu) | 0x800000u;
  const uint32_t shift = 126 - exponent;  // 14 .. 24
  const uint32_t units = mantissa >> shift;
  const uint32_t rest = mantissa & ((1u << shift) - 1);
  const uint32_t halfway = 1u << (shift - 1);
  const uint32_t roundUp = rest > halfway || (rest == halfway && (units & 1u));
  return uint16_t(sign | (units + roundUp));
}

EMBER_FP16_INLINE float bf16ToFloat(uint16_t h) { return std::bit_cast<float>(uint32_t(h) << 16); }

// float -> bfloat16 rounding to nearest even; NaNs stay NaNs (quiet), as ggml does.
EMBER_FP16_INLINE uint16_t floatToBf16(float f) {
  const uint32_t bits = std::bit_cast<uint32_t>(f);
  if ((bits & 0x7fffffffu) > 0x7f800000u) return uint16_t((bits >> 16) | 0x40u);
  return uint16_t((uint64_t(bits) + 0x7fffu + ((bits >> 16) & 1u)) >> 16);
}

// f rounded to the nearest fp16 / bfloat16 value, as a float.
EMBER_FP16_INLINE float roundThroughFp16(float f) { return fp16ToFloat(floatToFp16(f)); }
EMBER_FP16_INLINE float roundThroughBf16(float f) { return bf16ToFloat(floatToBf16(f)); }

}  // namespace ember::gguf
