#pragma once
// Rotary position embedding. The angles follow llama.cpp's rope cache: theta_i = p * s *
// base^(-2i/dims) / ff_i, the powers formed by repeated multiplication in float (as ggml does),
// where s is the linear frequency scale and ff the optional per-frequency factors (rope_freqs).
#include <cstdint>

#include "model/model_config.h"

namespace ember::cpu::ops {

struct RopeParams {
  int32_t dims = 0;  // rotated dimensions of each head (even); the rest pass through
  float freqBase = 10000.0f;
  float freqScale = 1.0f;
  const float* freqFactors = nullptr;  // (dims / 2) or null
  model::RopeStyle style = model::RopeStyle::Normal;
  // YaRN: the blend of interpolated and extrapolated angles over the dims between corrDims, with
  // its magnitude correction; attnFactor multiplies cos and sin (1: none).
  float extFactor = 0.0f;
  float attnFactor = 1.0f;
  float corrDims[2] = {0.0f, 0.0f};
};

// cosSin (dims / 2, 2): the cos and sin of each frequency's angle at `position`.
void ropeAngles(const RopeParams& params, int32_t position, float* cosSin);

// Rotates each of `heads` head vectors of x (heads, headDim) by the angles in cosSin:
// (a, b) -> (a cos - b sin, a sin + b cos), each with a single rounding of the first product.
void applyRope(const RopeParams& params, const float* cosSin, float* x, int32_t heads,
               int32_t headDim);

}  // namespace ember::cpu::ops
