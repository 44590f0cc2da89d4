// Rotary position embedding, in place. Reference: engine/backend/cpu/ops/rope.cpp (ropeAngles,
// applyRope), followed operation for operation: theta_i = p * base^(-2i/dims) formed by i
// repeated float multiplications by base^(-2/dims) (as ggml's rope cache does), the angle
// freqScale * (theta_i / freqFactor_i), and the rotation (a, b) -> (fma(a, c, -(b s)),
// fma(a, s, b c)). YaRN and attnFactor as ropeAngles: the blend of the interpolated and the
// extrapolated angle by the ramp over corrDims, and the magnitude multiplying cos and sin. Only
// cosf/sinf/logf may differ from the C library's by an ulp or two.
#include <algorithm>
#include <cmath>

#include "ember/kernels/kernels.h"

namespace ember::kernels {
namespace {

constexpr int kRopeThreads = 128;

// The angle settings of ropeKernel, by value.
struct RopeAngleParams {
  float thetaScale = 1.f;
  float freqScale = 1.f;
  const float* freqFactors = nullptr;
  float extFactor = 0.f;
  float magnitude = 1.f;  // attnFactor, times YaRN's correction when extFactor != 0
  float corrLow = 0.f, corrSpan = 1.f;  // corrDims[0], max(0.001, corrDims[1] - corrDims[0])
};

// One block per token of x (tokens, heads, headDim). Shared: cosSin (ropeDims / 2, 2).
__global__ void ropeKernel(float* __restrict__ x, int32_t heads, int32_t headDim,
                           const int32_t* __restrict__ positions, int32_t ropeDims,
                           RopeAngleParams a, bool neox) {
  extern __shared__ float cosSin[];
  const int32_t half = ropeDims / 2;
  const int32_t token = blockIdx.x;
  const float position = static_cast<float>(positions[token]);
  for (int32_t i = threadIdx.x; i < half; i += blockDim.x) {
    float theta = position;
    for (int32_t j = 0; j < i; ++j) theta = __fmul_rn(theta, a.thetaScale);
    const float factor = a.freqFactors ? a.freqFactors[i] : 1.0f;
    const float extrapolated = __fdiv_rn(theta, factor);
    float angle = __fmul_rn(a.freqScale, extrapolated);
    if (a.extFactor != 0.0f) {  // ggml's rope_yarn ramp
      const float y = __fdiv_rn(__fsub_rn(float(i), a.corrLow), a.corrSpan);
      const float mix = __fmul_rn(1.0f - fminf(1.0f, fmaxf(0.0f, y)), a.extFactor);
      angle = __fadd_rn(__fmul_rn(angle, 1.0f - mix), __fmul_rn(extrapolated, mix));
    }
    cosSin[2 * i] = __fmul_rn(cosf(angle), a.magnitude);
    cosSin[2 * i + 1] = __fmul_rn(sinf(angle), a.magnitude);
  }
  __syncthreads();
  // Normal pairs (x[2i], x[2i+1]); NEOX pairs (x[i], x[i + half]). Frequency i either way.
  const int32_t step = neox ? 1 : 2;
  const int32_t pairStride = neox ? half : 1;
  float* tokenRow = x + int64_t(token) * heads * headDim;
  for (int32_t idx = threadIdx.x; idx < heads * half; idx += blockDim.x) {
    const int32_t head = idx / half;
    const int32_t i = idx % half;
    float* a = tokenRow + int64_t(head) * headDim + i * step;
    float* b = a + pairStride;
    const float c = cosSin[2 * i], s = cosSin[2 * i + 1];
    const float x0 = *a, x1 = *b;
    *a = fmaf(x0, c, -__fmul_rn(x1, s));
    *b = fmaf(x0, s, __fmul_rn(x1, c));
  }
}

}  // namespace

cudaError_t rope(float* x, int32_t tokens, int32_t heads, const int32_t* positions,
                 const RopeSettings& settings, cudaStream_t stream) {
  const int32_t dims = settings.ropeDims;
  if (tokens < 0 || heads <= 0 || settings.headDim <= 0 || dims <= 0 || dims % 2 != 0 ||
      dims > settings.headDim || int64_t(heads) * (dims / 2) > 0x7fffffff)
    return cudaErrorInvalidValue;
  if (tokens == 0) return cudaSuccess;
  if (!x || !positions) return cudaErrorInvalidValue;
  // The same float expression as ops::ropeAngles, so that the products agree bit for bit.
  RopeAngleParams a;
  a.thetaScale = std::pow(settings.freqBase, -2.0f / static_cast<float>(dims));
  a.freqScale = settings.freqScale;
  a.freqFactors = settings.freqFactors;
  a.extFactor = settings.extFactor;
  a.magnitude = settings.attnFactor;
  if (settings.extFactor != 0.0f) {
    if (!(settings.freqScale > 0.0f)) return cudaErrorInvalidValue;
    a.magnitude *= 1.0f + 0.1f * std::log(1.0f / settings.freqScale);
    a.corrLow = settings.corrDims[0];
    a.corrSpan = std::max(0.001f, settings.corrDims[1] - settings.corrDims[0]);
  }
  const size_t shared = size_t(dims) * sizeof(float);
  ropeKernel<<<tokens, kRopeThreads, shared, stream>>>(x, heads, settings.headDim, positions,
                                                       dims, a, settings.neox);
  return cudaGetLastError();
}

}  // namespace ember::kernels
