// Kernels of the mixture-of-experts feed-forward. References: engine/backend/cpu/ops/
// activations.cpp (swigluOaiRow: gpt-oss's clamped SwiGLU, llama.cpp's swiglu_oai with alpha
// 1.702 and limit 7) and engine/backend/cpu/cpu_expert_ffn.cpp (the weighted sum: each
// expert's output times its weight, rounded to float, added in rank order, as llama.cpp adds
// its views). The sigmoid uses CUDA's expf (the CPU uses std::exp: an ulp or two apart).
#include "ember/kernels/kernels.h"
#include "launch_grid.cuh"

namespace ember::kernels {
namespace {

// out (count) = min(g, limit) * sigmoid(alpha * min(g, limit)) * (clamp(u, -limit, limit) + 1);
// out may alias gate or up.
__global__ void swigluOaiKernel(const float* gate, const float* up, int64_t count, float alpha,
                                float limit, float* out) {
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < count;
       i += int64_t(gridDim.x) * blockDim.x) {
    const float g = fminf(gate[i], limit);
    const float u = fminf(fmaxf(up[i], -limit), limit);
    out[i] = __fmul_rn(__fdiv_rn(g, 1.0f + expf(__fmul_rn(alpha, -g))), u + 1.0f);
  }
}

// y (tokens, width): y[t] = sum over r of weights[t, r] * outputs[groupedRow[t, r]].
__global__ void combineExpertsKernel(const float* __restrict__ outputs,
                                     const int32_t* __restrict__ groupedRow,
                                     const float* __restrict__ weights, int32_t tokens, int32_t k,
                                     int32_t width, float* __restrict__ y) {
  const int64_t count = int64_t(tokens) * width;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < count;
       i += int64_t(gridDim.x) * blockDim.x) {
    const int64_t t = i / width, col = i % width;
    float sum = 0.0f;
    for (int32_t r = 0; r < k; ++r) {
      const float product =
          __fmul_rn(outputs[int64_t(groupedRow[t * k + r]) * width + col], weights[t * k + r]);
      sum = r == 0 ? product : __fadd_rn(sum, product);
    }
    y[i] = sum;
  }
}

}  // namespace

cudaError_t swigluOai(const float* gate, const float* up, int64_t count, float alpha, float limit,
                      float* out, cudaStream_t stream) {
  if (count < 0) return cudaErrorInvalidValue;
  if (count == 0) return cudaSuccess;
  if (!gate || !up || !out) return cudaErrorInvalidValue;
  swigluOaiKernel<<<blocksFor(count), kThreads, 0, stream>>>(gate, up, count, alpha, limit, out);
  return cudaGetLastError();
}

cudaError_t combineExperts(const float* outputs, const int32_t* groupedRow, const float* weights,
                           int32_t tokens, int32_t k, int32_t width, float* y,
                           cudaStream_t stream) {
  if (tokens < 0 || k <= 0 || width <= 0) return cudaErrorInvalidValue;
  if (tokens == 0) return cudaSuccess;
  if (!outputs || !groupedRow || !weights || !y) return cudaErrorInvalidValue;
  combineExpertsKernel<<<blocksFor(int64_t(tokens) * width), kThreads, 0, stream>>>(
      outputs, groupedRow, weights, tokens, k, width, y);
  return cudaGetLastError();
}

}  // namespace ember::kernels
