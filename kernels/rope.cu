// Rotary position embedding, in place. Reference: engine/backend/cpu/ops/rope.cpp (ropeAngles,
// applyRope), followed operation for operation: theta_i = p * base^(-2i/dims) formed by i
// repeated float multiplications by base^(-2/dims) (as ggml's rope cache does), the angle
// freqScale * (theta_i / freqFactor_i), and the rotation (a, b) -> (fma(a, c, -(b s)),
// fma(a, s, b c)). Only cosf/sinf may differ from the C library's by an ulp or two.
#include <cmath>

#include "ember/kernels/kernels.h"

namespace ember::kernels {
namespace {

constexpr int kRopeThreads = 128;

// One block per token of x (tokens, heads, headDim). Shared: cosSin (ropeDims / 2, 2).
__global__ void ropeKernel(float* __restrict__ x, int32_t heads, int32_t headDim,
                           const int32_t* __restrict__ positions, int32_t ropeDims,
                           float thetaScale, float freqScale,
                           const float* __restrict__ freqFactors, bool neox) {
  extern __shared__ float cosSin[];
  const int32_t half = ropeDims / 2;
  const int32_t token = blockIdx.x;
  const float position = static_cast<float>(positions[token]);
  for (int32_t i = threadIdx.x; i < half; i += blockDim.x) {
    float theta = position;
    for (int32_t j = 0; j < i; ++j) theta = __fmul_rn(theta, thetaScale);
    const float factor = freqFactors ? freqFactors[i] : 1.0f;
    const float angle = __fmul_rn(freqScale, __fdiv_rn(theta, factor));
    cosSin[2 * i] = cosf(angle);
    cosSin[2 * i + 1] = sinf(angle);
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
  const float thetaScale = std::pow(settings.freqBase, -2.0f / static_cast<float>(dims));
  const size_t shared = size_t(dims) * sizeof(float);
  ropeKernel<<<tokens, kRopeThreads, shared, stream>>>(x, heads, settings.headDim, positions,
                                                       dims, thetaScale, settings.freqScale,
                                                       settings.freqFactors, settings.neox);
  return cudaGetLastError();
}

}  // namespace ember::kernels
