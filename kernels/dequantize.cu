// dequantizeToHalf (weights to fp16 for the cuBLAS path: prompt chunks and large batches) and
// floatToHalf (activations). The CPU reference is dequantize.cpp's dequantizeScalar followed by
// round-to-nearest-even fp16 conversion; the test requires identical bits.
#include "dequantize_rows.cuh"

namespace ember::kernels {

cudaError_t dequantizeToHalf(WeightType type, const void* weight, int64_t rows, int64_t cols,
                             __half* dst, cudaStream_t stream) {
  return quant::launchDequantizeRows(type, weight, nullptr, rows, cols, 1.f, dst, stream);
}

namespace {

__global__ void floatToHalfKernel(const float* __restrict__ x, int64_t count,
                                  __half* __restrict__ dst) {
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += stride)
    dst[i] = __float2half_rn(x[i]);
}

}  // namespace

cudaError_t floatToHalf(const float* x, int64_t count, __half* dst, cudaStream_t stream) {
  if (count < 0) return cudaErrorInvalidValue;
  if (count == 0) return cudaSuccess;
  if (!x || !dst) return cudaErrorInvalidValue;
  constexpr int kThreads = 256;
  const int64_t blocks = std::min<int64_t>((count + kThreads - 1) / kThreads, 65536);
  floatToHalfKernel<<<unsigned(blocks), kThreads, 0, stream>>>(x, count, dst);
  return cudaGetLastError();
}

}  // namespace ember::kernels
