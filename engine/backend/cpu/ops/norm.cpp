#include "backend/cpu/ops/norm.h"

#include <cmath>

namespace ember::cpu::ops {

void rmsNorm(const float* x, const float* weight, int64_t n, float eps, float* y) {
  double sum = 0.0;
  for (int64_t i = 0; i < n; ++i) sum += static_cast<double>(x[i] * x[i]);
  const float mean = static_cast<float>(sum / static_cast<double>(n));
  const float scale = 1.0f / std::sqrt(mean + eps);
  for (int64_t i = 0; i < n; ++i) y[i] = (x[i] * scale) * weight[i];
}

void rmsNormRows(const float* x, const float* weight, int64_t rows, int64_t n, int64_t stride,
                 float eps, float* y) {
  for (int64_t r = 0; r < rows; ++r) rmsNorm(x + r * stride, weight, n, eps, y + r * stride);
}

}  // namespace ember::cpu::ops
