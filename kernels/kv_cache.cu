// Writes a step's keys and values into the paged fp16 KV cache. Reference:
// engine/backend/cpu/ops/attention.cpp (ops::storeKv): the same round-to-nearest-even fp16
// conversion, so the caches agree bit for bit.
#include "ember/kernels/kernels.h"

namespace ember::kernels {
namespace {

constexpr int kKvThreads = 128;

// One block per (token, kv head): k (tokens, kvHeads, headDim), v (tokens, kvHeads, valueDim)
// into keyCache (blocks, kvHeads, blockSize, headDim), valueCache (.., valueDim). A negative
// slot (padding) is skipped.
__global__ void writeKvCacheKernel(const float* __restrict__ k, const float* __restrict__ v,
                                   const int32_t* __restrict__ slotMapping, int32_t kvHeads,
                                   int32_t headDim, int32_t valueDim, int32_t blockSize,
                                   __half* __restrict__ keyCache,
                                   __half* __restrict__ valueCache) {
  const int32_t token = blockIdx.x / kvHeads;
  const int32_t head = blockIdx.x % kvHeads;
  const int32_t slotIndex = slotMapping[token];
  if (slotIndex < 0) return;
  const int64_t block = slotIndex / blockSize;
  const int32_t slot = slotIndex % blockSize;
  const int64_t cacheRow = (block * kvHeads + head) * blockSize + slot;
  const int64_t inputRow = int64_t(token) * kvHeads + head;
  for (int32_t d = threadIdx.x; d < headDim; d += blockDim.x)
    keyCache[cacheRow * headDim + d] = __float2half_rn(k[inputRow * headDim + d]);
  for (int32_t d = threadIdx.x; d < valueDim; d += blockDim.x)
    valueCache[cacheRow * valueDim + d] = __float2half_rn(v[inputRow * valueDim + d]);
}

}  // namespace

cudaError_t writeKvCache(const float* k, const float* v, const int32_t* slotMapping,
                         int32_t tokens, int32_t kvHeads, int32_t headDim, int32_t valueDim,
                         int32_t blockSize, __half* keyCache, __half* valueCache,
                         cudaStream_t stream) {
  if (tokens < 0 || kvHeads <= 0 || headDim <= 0 || valueDim <= 0 || blockSize <= 0 ||
      int64_t(tokens) * kvHeads > 0x7fffffff)
    return cudaErrorInvalidValue;
  if (tokens == 0) return cudaSuccess;
  if (!k || !v || !slotMapping || !keyCache || !valueCache) return cudaErrorInvalidValue;
  writeKvCacheKernel<<<tokens * kvHeads, kKvThreads, 0, stream>>>(
      k, v, slotMapping, kvHeads, headDim, valueDim, blockSize, keyCache, valueCache);
  return cudaGetLastError();
}

}  // namespace ember::kernels
