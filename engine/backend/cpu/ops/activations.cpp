#include "backend/cpu/ops/activations.h"

#include <algorithm>
#include <array>
#include <cmath>

#include "backend/cpu/ops/half.h"
#include "backend/cpu/ops/reference_order.h"
#include "backend/cpu/ops/vector_math.h"

namespace ember::cpu::ops {
namespace {

// gelu(h) rounded to fp16, for every fp16 bit pattern h (and 2 zero entries of padding).
const std::array<uint16_t, kGeluTableEntries>& geluTable() {
  static const std::array<uint16_t, kGeluTableEntries> table = [] {
    std::array<uint16_t, kGeluTableEntries> t{};
    for (uint32_t bits = 0; bits < 65536; ++bits)
      t[bits] = floatToHalf(geluTanh(halfToFloat(uint16_t(bits))));
    return t;
  }();
  return table;
}

}  // namespace

float geluTanh(float x) {
  constexpr float kSqrt2OverPi = 0.79788456080286535587989211986876f;
  constexpr float kCoefA = 0.044715f;
  return 0.5f * x * (1.0f + std::tanh(kSqrt2OverPi * x * std::fma(kCoefA * x, x, 1.0f)));
}

void siluGluRow(const float* gate, const float* up, float* out, int64_t n) {
  const int64_t chunked = n - n % kLanes;
  vectorKernels().siluGlu(gate, up, out, chunked);
  for (int64_t i = chunked; i < n; ++i) out[i] = gate[i] / (1.0f + std::exp(-gate[i])) * up[i];
}

void geluTanhGluRow(const float* gate, const float* up, float* out, int64_t n) {
  vectorKernels().geluTableGlu(geluTable().data(), gate, up, out, n);
}

void swigluOaiRow(const float* gate, const float* up, float* out, int64_t n) {
  constexpr float kAlpha = 1.702f, kLimit = 7.0f;  // llama.cpp's fixed values for gpt-oss
  for (int64_t i = 0; i < n; ++i) {
    const float g = std::min(gate[i], kLimit);
    const float u = std::clamp(up[i], -kLimit, kLimit);
    out[i] = g / (1.0f + std::exp(kAlpha * -g)) * (u + 1.0f);
  }
}

void softcap(float* x, int64_t n, float cap) {
  for (int64_t i = 0; i < n; ++i) x[i] = cap * std::tanh(x[i] / cap);
}

}  // namespace ember::cpu::ops
