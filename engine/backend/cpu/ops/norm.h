#pragma once
// RMSNorm, as llama.cpp computes it: y = x / sqrt(mean(x^2) + eps) * weight, the sum of squares
// accumulated in double and the scale taken in float.
#include <cstdint>

namespace ember::cpu::ops {

// y (n) = rmsnorm(x (n)) * weight (n); y may alias x.
void rmsNorm(const float* x, const float* weight, int64_t n, float eps, float* y);

// Applies rmsNorm to each of `rows` rows of width n, laid out `stride` floats apart (in place
// allowed).
void rmsNormRows(const float* x, const float* weight, int64_t rows, int64_t n, int64_t stride,
                 float eps, float* y);

}  // namespace ember::cpu::ops
