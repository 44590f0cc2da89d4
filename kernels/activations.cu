// Element-wise kernels of the forward pass. References: engine/backend/cpu/ops/activations.cpp
// (siluGluRow, geluTanh, softcap) and the CPU layer's scale (x *= factor, in float). SiLU is g / (1 + e^-g) with CUDA's expf (the CPU uses a
// polynomial exp: an ulp or two apart). GELU is the tanh approximation computed directly in
// fp32 with ops::geluTanh's formula; the CPU backend instead looks gelu(fp16(g)) up in an fp16
// table (as llama.cpp does), so the two differ by up to about 1e-3 * |g| (fp16 rounding of the
// input and of the result).
#include "ember/kernels/kernels.h"
#include "launch_grid.cuh"

namespace ember::kernels {
namespace {

__device__ __forceinline__ float siluOf(float g) { return g / (1.0f + expf(-g)); }

__device__ __forceinline__ float geluTanhOf(float g) {
  constexpr float kSqrt2OverPi = 0.79788456080286535587989211986876f;
  constexpr float kCoefA = 0.044715f;
  const float inner = __fmul_rn(__fmul_rn(kSqrt2OverPi, g), fmaf(__fmul_rn(kCoefA, g), g, 1.0f));
  return __fmul_rn(__fmul_rn(0.5f, g), 1.0f + tanhf(inner));
}

// out (count) = act(gate) * up; out may alias gate or up (element-wise).
__global__ void gatedActivationKernel(const float* gate, const float* up, int64_t count,
                                      bool gelu, float* out) {
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < count;
       i += int64_t(gridDim.x) * blockDim.x) {
    const float g = gate[i];
    out[i] = __fmul_rn(gelu ? geluTanhOf(g) : siluOf(g), up[i]);
  }
}

// y (rows, width) += bias (width).
__global__ void addBiasKernel(float* __restrict__ y, const float* __restrict__ bias,
                              int64_t count, int32_t width) {
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < count;
       i += int64_t(gridDim.x) * blockDim.x)
    y[i] += bias[i % width];
}

__global__ void addInPlaceKernel(float* y, const float* x, int64_t count) {
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < count;
       i += int64_t(gridDim.x) * blockDim.x)
    y[i] += x[i];
}

__global__ void scaleKernel(float* __restrict__ x, int64_t count, float factor) {
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < count;
       i += int64_t(gridDim.x) * blockDim.x)
    x[i] = __fmul_rn(x[i], factor);
}

__global__ void softcapKernel(float* __restrict__ x, int64_t count, float cap) {
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < count;
       i += int64_t(gridDim.x) * blockDim.x)
    x[i] = __fmul_rn(cap, tanhf(x[i] / cap));
}

// One block per output row: out[r] = x[rowIndex[r]].
__global__ void gatherRowsKernel(const float* __restrict__ x, const int32_t* __restrict__ rowIndex,
                                 int32_t width, float* __restrict__ out) {
  const int64_t src = int64_t(rowIndex[blockIdx.x]) * width;
  const int64_t dst = int64_t(blockIdx.x) * width;
  for (int32_t i = threadIdx.x; i < width; i += blockDim.x) out[dst + i] = x[src + i];
}

}  // namespace

cudaError_t gatedActivation(const float* gate, const float* up, int64_t count, bool gelu,
                            float* out, cudaStream_t stream) {
  if (count < 0) return cudaErrorInvalidValue;
  if (count == 0) return cudaSuccess;
  if (!gate || !up || !out) return cudaErrorInvalidValue;
  gatedActivationKernel<<<blocksFor(count), kThreads, 0, stream>>>(gate, up, count, gelu, out);
  return cudaGetLastError();
}

cudaError_t addBias(float* y, const float* bias, int32_t rows, int32_t width,
                    cudaStream_t stream) {
  if (rows < 0 || width <= 0) return cudaErrorInvalidValue;
  if (rows == 0) return cudaSuccess;
  if (!y || !bias) return cudaErrorInvalidValue;
  const int64_t count = int64_t(rows) * width;
  addBiasKernel<<<blocksFor(count), kThreads, 0, stream>>>(y, bias, count, width);
  return cudaGetLastError();
}

cudaError_t addInPlace(float* y, const float* x, int64_t count, cudaStream_t stream) {
  if (count < 0) return cudaErrorInvalidValue;
  if (count == 0) return cudaSuccess;
  if (!y || !x) return cudaErrorInvalidValue;
  addInPlaceKernel<<<blocksFor(count), kThreads, 0, stream>>>(y, x, count);
  return cudaGetLastError();
}

cudaError_t scaleInPlace(float* x, int64_t count, float factor, cudaStream_t stream) {
  if (count < 0) return cudaErrorInvalidValue;
  if (count == 0) return cudaSuccess;
  if (!x) return cudaErrorInvalidValue;
  scaleKernel<<<blocksFor(count), kThreads, 0, stream>>>(x, count, factor);
  return cudaGetLastError();
}

cudaError_t softcap(float* x, int64_t count, float cap, cudaStream_t stream) {
  if (count < 0 || !(cap > 0.0f)) return cudaErrorInvalidValue;
  if (count == 0) return cudaSuccess;
  if (!x) return cudaErrorInvalidValue;
  softcapKernel<<<blocksFor(count), kThreads, 0, stream>>>(x, count, cap);
  return cudaGetLastError();
}

cudaError_t gatherRows(const float* x, const int32_t* rowIndex, int32_t count, int32_t width,
                       float* out, cudaStream_t stream) {
  if (count < 0 || width <= 0) return cudaErrorInvalidValue;
  if (count == 0) return cudaSuccess;
  if (!x || !rowIndex || !out) return cudaErrorInvalidValue;
  const int threads = width < kThreads ? (width + 31) / 32 * 32 : kThreads;
  gatherRowsKernel<<<count, threads, 0, stream>>>(x, rowIndex, width, out);
  return cudaGetLastError();
}

}  // namespace ember::kernels
