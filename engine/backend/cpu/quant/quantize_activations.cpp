// Scalar preparation of activation rows (layouts in kernels.h). The SIMD versions in
// quant_x86_impl.h produce the same bytes: the same float operations in the same order, and the
// same round-half-even.
#include <cmath>
#include <cstring>

#include "backend/cpu/quant/block_formats.h"
#include "backend/cpu/quant/kernels.h"
#include "backend/cpu/quant/scalar_kernels.h"

namespace ember::cpu::quant {

namespace {

// Rounds half to even (the default FP environment) and saturates; NaN becomes 0.
inline int roundToInt(float v, int limit) {
  if (!(v == v)) return 0;
  if (v > float(limit)) return limit;
  if (v < float(-limit)) return -limit;
  return int(std::nearbyint(v));
}

}  // namespace

size_t activationRowBytes(ActivationFormat format, int64_t cols) {
  size_t bytes = 0;
  switch (format) {
    case ActivationFormat::Float:
      bytes = size_t(cols) * 4;
      break;
    case ActivationFormat::Q8x32:
      bytes = size_t(cols) + size_t(cols / 32) * 12;
      break;
    case ActivationFormat::Q8xK:
      bytes = size_t(cols) + size_t(cols / 256) * (4 + 32);
      break;
  }
  return (bytes + 63) & ~size_t(63);
}

void prepareF32(const float* x, int64_t cols, uint8_t* out) {
  std::memcpy(out, x, size_t(cols) * 4);
}

void prepareF16Rounded(const float* x, int64_t cols, uint8_t* out) {
  auto* y = reinterpret_cast<float*>(out);
  for (int64_t i = 0; i < cols; ++i) y[i] = roundThroughFp16(x[i]);
}

void prepareBf16Rounded(const float* x, int64_t cols, uint8_t* out) {
  auto* y = reinterpret_cast<float*>(out);
  for (int64_t i = 0; i < cols; ++i) y[i] = roundThroughBf16(x[i]);
}

void prepareQ8x32Scalar(const float* x, int64_t cols, uint8_t* out) {
  const int64_t nb = cols / 32;
  auto* qs = reinterpret_cast<int8_t*>(out);
  auto* d = reinterpret_cast<float*>(out + cols);
  auto* sum = reinterpret_cast<int32_t*>(d + nb);
  float* s = d + 2 * nb;
  for (int64_t b = 0; b < nb; ++b) {
    const float* v = x + 32 * b;
    float amax = 0.0f;
    for (int j = 0; j < 32; ++j) amax = std::fmax(amax, std::fabs(v[j]));
    const float scale = amax / 127.0f;
    const float inverse = amax != 0.0f ? 127.0f / amax : 0.0f;
    int32_t total = 0;
    for (int j = 0; j < 32; ++j) {
      const int q = roundToInt(v[j] * inverse, 127);
      qs[32 * b + j] = int8_t(q);
      total += q;
    }
    d[b] = roundThroughFp16(scale);
    sum[b] = total;
    s[b] = roundThroughFp16(scale * float(total));
  }
}

void prepareQ8xKScalar(const float* x, int64_t cols, uint8_t* out) {
  const int64_t nb = cols / 256;
  auto* qs = reinterpret_cast<int8_t*>(out);
  auto* d = reinterpret_cast<float*>(out + cols);
  auto* bsums = reinterpret_cast<int16_t*>(d + nb);
  for (int64_t b = 0; b < nb; ++b) {
    const float* v = x + 256 * b;
    int8_t* q = qs + 256 * b;
    float amax = 0.0f, max = 0.0f;  // max: the first value of largest magnitude, with its sign
    for (int j = 0; j < 256; ++j) {
      if (std::fabs(v[j]) > amax) {
        amax = std::fabs(v[j]);
        max = v[j];
      }
    }
    if (amax == 0.0f) {
      d[b] = 0.0f;
      std::memset(q, 0, 256);
      std::memset(bsums + 16 * b, 0, 32);
      continue;
    }
    const float inverse = -127.0f / max;
    for (int j = 0; j < 256; ++j) q[j] = int8_t(roundToInt(inverse * v[j], 127));
    for (int g = 0; g < 16; ++g) {
      int total = 0;
      for (int l = 0; l < 16; ++l) total += q[16 * g + l];
      bsums[16 * b + g] = int16_t(total);
    }
    d[b] = 1.0f / inverse;
  }
}

}  // namespace ember::cpu::quant
