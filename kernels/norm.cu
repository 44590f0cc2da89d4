// RMSNorm kernels. Reference: engine/backend/cpu/ops/norm.cpp (ops::rmsNorm), which these
// follow operation for operation: the squares rounded to float and summed in double, the mean
// and 1/sqrt(mean + eps) taken in float, y = (x * scale) * weight. Only the order of the double
// sum differs, so results agree to the last bit almost always.
#include "ember/kernels/kernels.h"
#include "warp_reduce.cuh"

namespace ember::kernels {
namespace {

using detail::blockSum;
using detail::kWarpSize;
using detail::warpSum;

constexpr int kRowThreads = 256;
constexpr int kHeadWarpsPerBlock = 8;

int rowThreads(int32_t width) {
  const int rounded = (width + kWarpSize - 1) / kWarpSize * kWarpSize;
  return rounded < kRowThreads ? rounded : kRowThreads;
}

__device__ __forceinline__ float rmsScale(double sumOfSquares, int32_t width, float eps) {
  const float mean = static_cast<float>(sumOfSquares / static_cast<double>(width));
  return 1.0f / sqrtf(mean + eps);  // IEEE sqrt and division (no fast math)
}

// One block per row of x (rows, width).
// y may alias x: each thread writes only the elements it read.
__global__ void rmsNormKernel(const float* x, const float* __restrict__ weight, int32_t width,
                              float eps, float* y) {
  __shared__ double scratch[kWarpSize];
  const int64_t base = int64_t(blockIdx.x) * width;
  double sum = 0.0;
  for (int32_t i = threadIdx.x; i < width; i += blockDim.x) {
    const float v = x[base + i];
    sum += static_cast<double>(__fmul_rn(v, v));
  }
  const float scale = rmsScale(blockSum(sum, scratch), width, eps);
  for (int32_t i = threadIdx.x; i < width; i += blockDim.x)
    y[base + i] = __fmul_rn(__fmul_rn(x[base + i], scale), weight[i]);
}

// One block per row: residual += delta, then normed = rmsnorm(residual) * weight. Each thread
// re-reads only the residual values it wrote itself (so normed may alias residual or delta).
__global__ void addRmsNormKernel(float* residual, const float* delta,
                                 const float* __restrict__ weight, int32_t width, float eps,
                                 float* normed) {
  __shared__ double scratch[kWarpSize];
  const int64_t base = int64_t(blockIdx.x) * width;
  double sum = 0.0;
  for (int32_t i = threadIdx.x; i < width; i += blockDim.x) {
    const float v = __fadd_rn(residual[base + i], delta[base + i]);
    residual[base + i] = v;
    sum += static_cast<double>(__fmul_rn(v, v));
  }
  const float scale = rmsScale(blockSum(sum, scratch), width, eps);
  for (int32_t i = threadIdx.x; i < width; i += blockDim.x)
    normed[base + i] = __fmul_rn(__fmul_rn(residual[base + i], scale), weight[i]);
}

// One warp per head vector of x (vectors, headDim), in place.
__global__ void rmsNormHeadsKernel(float* __restrict__ x, const float* __restrict__ weight,
                                   int64_t vectors, int32_t headDim, float eps) {
  const int64_t vector = int64_t(blockIdx.x) * kHeadWarpsPerBlock + threadIdx.x / kWarpSize;
  if (vector >= vectors) return;  // whole warps leave together
  const int lane = threadIdx.x % kWarpSize;
  float* head = x + vector * headDim;
  double sum = 0.0;
  for (int32_t i = lane; i < headDim; i += kWarpSize) sum += double(__fmul_rn(head[i], head[i]));
  const float scale = rmsScale(warpSum(sum), headDim, eps);
  for (int32_t i = lane; i < headDim; i += kWarpSize)
    head[i] = __fmul_rn(__fmul_rn(head[i], scale), weight[i]);
}

}  // namespace

cudaError_t rmsNorm(const float* x, const float* weight, int32_t rows, int32_t width, float eps,
                    float* y, cudaStream_t stream) {
  if (rows < 0 || width <= 0) return cudaErrorInvalidValue;
  if (rows == 0) return cudaSuccess;
  if (!x || !weight || !y) return cudaErrorInvalidValue;
  rmsNormKernel<<<rows, rowThreads(width), 0, stream>>>(x, weight, width, eps, y);
  return cudaGetLastError();
}

cudaError_t addRmsNorm(float* residual, const float* delta, const float* weight, int32_t rows,
                       int32_t width, float eps, float* normed, cudaStream_t stream) {
  if (rows < 0 || width <= 0) return cudaErrorInvalidValue;
  if (rows == 0) return cudaSuccess;
  if (!residual || !delta || !weight || !normed) return cudaErrorInvalidValue;
  addRmsNormKernel<<<rows, rowThreads(width), 0, stream>>>(residual, delta, weight, width, eps,
                                                           normed);
  return cudaGetLastError();
}

cudaError_t rmsNormHeads(float* x, const float* weight, int32_t rows, int32_t heads,
                         int32_t headDim, float eps, cudaStream_t stream) {
  if (rows < 0 || heads <= 0 || headDim <= 0) return cudaErrorInvalidValue;
  if (rows == 0) return cudaSuccess;
  if (!x || !weight) return cudaErrorInvalidValue;
  const int64_t vectors = int64_t(rows) * heads;
  const int64_t blocks = (vectors + kHeadWarpsPerBlock - 1) / kHeadWarpsPerBlock;
  if (blocks > 0x7fffffff) return cudaErrorInvalidValue;
  rmsNormHeadsKernel<<<unsigned(blocks), kHeadWarpsPerBlock * kWarpSize, 0, stream>>>(
      x, weight, vectors, headDim, eps);
  return cudaGetLastError();
}

}  // namespace ember::kernels
