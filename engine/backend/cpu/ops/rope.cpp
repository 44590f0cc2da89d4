#include "backend/cpu/ops/rope.h"

#include <algorithm>
#include <cmath>

namespace ember::cpu::ops {

void ropeAngles(const RopeParams& params, int32_t position, float* cosSin) {
  const float thetaScale = std::pow(params.freqBase, -2.0f / static_cast<float>(params.dims));
  float theta = static_cast<float>(position);
  for (int32_t i = 0; i < params.dims / 2; ++i) {
    const float factor = params.freqFactors ? params.freqFactors[i] : 1.0f;
    const float extrapolated = theta / factor;
    float angle = params.freqScale * extrapolated;
    float magnitude = params.attnFactor;
    if (params.extFactor != 0.0f) {  // ggml's rope_yarn
      const float y = (float(i) - params.corrDims[0]) /
                      std::max(0.001f, params.corrDims[1] - params.corrDims[0]);
      const float mix = (1 - std::min(1.0f, std::max(0.0f, y))) * params.extFactor;
      angle = angle * (1 - mix) + extrapolated * mix;
      magnitude *= 1.0f + 0.1f * std::log(1.0f / params.freqScale);
    }
    cosSin[2 * i] = std::cos(angle) * magnitude;
    cosSin[2 * i + 1] = std::sin(angle) * magnitude;
    theta *= thetaScale;
  }
}

// Built twice, picked at load by the CPU: without FMA instructions std::fma is a libm call per
// element (~2% of a batched decode step went there); fma is exact, so both give the same bits.
__attribute__((target_clones("fma", "default")))
void applyRope(const RopeParams& params, const float* cosSin, float* x, int32_t heads,
               int32_t headDim) {
  const int32_t half = params.dims / 2;
  // Normal pairs (x[2i], x[2i+1]); NEOX pairs (x[i], x[i + dims/2]). Frequency i either way.
  const int32_t pairStride = params.style == model::RopeStyle::Neox ? half : 1;
  const int32_t step = params.style == model::RopeStyle::Neox ? 1 : 2;
  for (int32_t h = 0; h < heads; ++h) {
    float* head = x + int64_t(h) * headDim;
    for (int32_t i = 0; i < half; ++i) {
      float* a = head + i * step;
      float* b = a + pairStride;
      const float c = cosSin[2 * i], s = cosSin[2 * i + 1];
      const float x0 = *a, x1 = *b;
      // With one rounding where llama.cpp's compiled rotation has it (GCC contracts its
      // x0*c - x1*s into fma(x0, c, -(x1*s))).
      *a = std::fma(x0, c, -(x1 * s));
      *b = std::fma(x0, s, x1 * c);
    }
  }
}

}  // namespace ember::cpu::ops
