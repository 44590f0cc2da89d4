#pragma once
// IEEE 754 binary16 ("half", fp16) conversions in portable C++, rounding to nearest even as the
// F16C instructions do. The KV cache stores keys and values in fp16, as llama.cpp's default
// cache does, and attention rounds its operands the way llama.cpp's does.
#include <bit>
#include <cmath>
#include <cstdint>

namespace ember::cpu::ops {

inline uint16_t floatToHalf(float f) {
  const uint32_t bits = std::bit_cast<uint32_t>(f);
  const uint16_t sign = uint16_t((bits >> 16) & 0x8000u);
  const uint32_t magnitude = bits & 0x7fffffffu;
  if (magnitude >= 0x7f800000u)  // infinity or NaN (NaN stays quiet NaN)
    return uint16_t(sign | (magnitude > 0x7f800000u ? 0x7e00u : 0x7c00u));
  if (magnitude >= 0x477ff000u) return uint16_t(sign | 0x7c00u);  // rounds past 65504: infinity
  if (magnitude < 0x38800000u) {  // below 2^-14: a subnormal half (or zero)
    // |f| * 2^24 is exact; the default rounding mode rounds it to nearest even.
    const float scaled = std::bit_cast<float>(magnitude) * 16777216.0f;
    return uint16_t(sign | uint16_t(std::nearbyint(scaled)));
  }
  // Normal: drop 13 mantissa bits rounding to nearest even (a carry may bump the exponent),
  // then rebias the exponent from 127 to 15.
  const uint32_t rounded = magnitude + 0x0fffu + ((magnitude >> 13) & 1u);
  return uint16_t(sign | ((rounded >> 13) - (112u << 10)));
}

inline float halfToFloat(uint16_t h) {
  const uint32_t sign = uint32_t(h & 0x8000u) << 16;
  const uint32_t exponent = (h >> 10) & 0x1fu;
  const uint32_t mantissa = h & 0x3ffu;
  if (exponent == 0) {  // zero or subnormal: mantissa * 2^-24, exact in float
    const float value = float(mantissa) * (1.0f / 16777216.0f);
    return sign ? -value : value;
  }
  if (exponent == 31) return std::bit_cast<float>(sign | 0x7f800000u | (mantissa << 13));
  return std::bit_cast<float>(sign | ((exponent + 112u) << 23) | (mantissa << 13));
}

// x rounded to the nearest fp16 value, as a float.
inline float roundToHalf(float x) { return halfToFloat(floatToHalf(x)); }

}  // namespace ember::cpu::ops
