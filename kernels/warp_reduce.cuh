#pragma once
// Warp- and block-wide reductions by shuffles (internal to the kernels; not part of the API).
#include <cuda_runtime.h>

namespace ember::kernels::detail {

constexpr int kWarpSize = 32;

template <typename T>
__device__ __forceinline__ T warpSum(T value) {
  for (int offset = kWarpSize / 2; offset > 0; offset /= 2)
    value += __shfl_xor_sync(0xffffffffu, value, offset);
  return value;
}

__device__ __forceinline__ float warpMax(float value) {
  for (int offset = kWarpSize / 2; offset > 0; offset /= 2)
    value = fmaxf(value, __shfl_xor_sync(0xffffffffu, value, offset));
  return value;
}

// The sum of `value` over the whole block (blockDim.x a multiple of 32, at most 1024), returned
// to every thread. `scratch` holds 32 values of shared memory; the call synchronises the block.
template <typename T>
__device__ __forceinline__ T blockSum(T value, T* scratch) {
  const int lane = threadIdx.x % kWarpSize;
  const int warp = threadIdx.x / kWarpSize;
  const int warps = blockDim.x / kWarpSize;
  value = warpSum(value);
  __syncthreads();  // scratch may still be read from an earlier call
  if (lane == 0) scratch[warp] = value;
  __syncthreads();
  T total = lane < warps ? scratch[lane] : T(0);
  return warpSum(total);
}

}  // namespace ember::kernels::detail
