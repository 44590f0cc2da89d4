// Paged attention for one-token tiles (decode tokens): one CTA per (token, kv head, split)
// computes the kv head's whole group of query heads over its range of positions, in chunks of
// kChunk positions with an online softmax. Keys: one warp per position, lanes across the head
// dimension (coalesced), the group's dot products reduced by shuffles. Values: threads across
// (head, value dim), the accumulators in shared memory. fp32 arithmetic throughout.
// Reference for the tests: engine/backend/cpu/ops/attention.cpp (ops::attendHead).
#include <cmath>

#include "attention_internal.cuh"
#include "warp_reduce.cuh"

namespace ember::kernels::detail {
namespace {

constexpr int kThreads = 128;
constexpr int kWarps = kThreads / kWarpSize;
constexpr int kChunk = 64;  // positions per chunk: two per lane in the softmax
constexpr int kKeyPairsPerLane = kMaxHeadDim / (2 * kWarpSize);
static_assert(kChunk == 2 * kWarpSize, "the softmax gives each lane two positions");

// Shared memory: rowBase (kChunk int64) then floats query (group, headDim), scores (group,
// kChunk), acc (group, valueDim), runMax, runSum, alpha (group each).
size_t decodeSharedBytes(const AttentionParams& p) {
  const size_t floats = size_t(p.group) * (p.headDim + kChunk + p.valueDim + 3);
  return kChunk * sizeof(int64_t) + floats * sizeof(float);
}

__global__ void __launch_bounds__(kThreads) decodeAttentionKernel(AttentionParams p) {
  const int32_t token = blockIdx.x;
  const int32_t kvHead = blockIdx.y;
  const int32_t split = blockIdx.z;
  if (!startsTile(p, token) || tileLength(p, token) != 1) return;

  extern __shared__ int64_t sharedBase[];
  int64_t* rowBase = sharedBase;                                  // (kChunk)
  float* query = reinterpret_cast<float*>(rowBase + kChunk);      // (group, headDim)
  float* scores = query + p.group * p.headDim;                    // (group, kChunk)
  float* acc = scores + p.group * kChunk;                         // (group, valueDim)
  float* runMax = acc + p.group * p.valueDim;                     // (group)
  float* runSum = runMax + p.group;
  float* alpha = runSum + p.group;

  const int lane = threadIdx.x % kWarpSize;
  const int warp = threadIdx.x / kWarpSize;
  const int32_t position = p.tokenPosition[token];
  const int32_t* table =
      p.blockTables + int64_t(p.tokenSequence[token]) * p.maxBlocksPerSequence;
  int32_t begin = 0, end = -1;
  splitRange(p, firstVisible(p, position), position, split, begin, end);

  // The group's query rows are contiguous in q: heads kvHead*group .. +group of this token.
  const float* q = p.q + (int64_t(token) * p.heads + int64_t(kvHead) * p.group) * p.headDim;
  for (int32_t i = threadIdx.x; i < p.group * p.headDim; i += kThreads) query[i] = roundToHalf(q[i]);
  for (int32_t i = threadIdx.x; i < p.group * p.valueDim; i += kThreads) acc[i] = 0.f;
  for (int32_t h = threadIdx.x; h < p.group; h += kThreads) {
    runMax[h] = -INFINITY;
    runSum[h] = 0.f;
  }
  __syncthreads();

  for (int32_t chunkStart = begin; chunkStart <= end; chunkStart += kChunk) {
    for (int c = threadIdx.x; c < kChunk; c += kThreads)
      rowBase[c] = chunkStart + c <= end ? cacheRow(p, table, kvHead, chunkStart + c) : -1;
    __syncthreads();

    // scores (group, kChunk) = attentionScore(q . k), -inf where masked.
    for (int c = warp; c < kChunk; c += kWarps) {
      const int64_t row = rowBase[c];
      if (row < 0) {
        for (int h = lane; h < p.group; h += kWarpSize) scores[h * kChunk + c] = -INFINITY;
        continue;
      }
      const __half2* key = reinterpret_cast<const __half2*>(p.keys + row * p.headDim);
      float2 k[kKeyPairsPerLane];
#pragma unroll
      for (int j = 0; j < kKeyPairsPerLane; ++j) {
        const int d = 2 * (lane + j * kWarpSize);
        k[j] = d < p.headDim ? __half22float2(key[d / 2]) : make_float2(0.f, 0.f);
      }
      for (int h = 0; h < p.group; ++h) {
        const float* qh = query + h * p.headDim;
        float dot = 0.f;
#pragma unroll
        for (int j = 0; j < kKeyPairsPerLane; ++j) {
          const int d = 2 * (lane + j * kWarpSize);
          if (d < p.headDim) dot += qh[d] * k[j].x + qh[d + 1] * k[j].y;
        }
        dot = warpSum(dot);
        if (lane == 0) scores[h * kChunk + c] = attentionScore(p, dot);
      }
    }
    __syncthreads();

    // Online softmax, one warp per head: scores become the chunk's weights exp(s - max).
    for (int h = warp; h < p.group; h += kWarps) {
      float* s = scores + h * kChunk;
      const float s0 = s[lane], s1 = s[lane + kWarpSize];
      const float oldMax = runMax[h];
      const float newMax = fmaxf(oldMax, warpMax(fmaxf(s0, s1)));
      float w0 = 0.f, w1 = 0.f, rescale = 1.f;
      if (newMax != -INFINITY) {
        rescale = expf(oldMax - newMax);  // 0 while nothing was seen yet
        w0 = expf(s0 - newMax);
        w1 = expf(s1 - newMax);
      }
      const float chunkSum = warpSum(w0 + w1);
      s[lane] = w0;
      s[lane + kWarpSize] = w1;
      if (lane == 0) {
        runSum[h] = runSum[h] * rescale + chunkSum;
        runMax[h] = newMax;
        alpha[h] = rescale;
      }
    }
    __syncthreads();

    // acc (group, valueDim) = acc * alpha + weights . V
    for (int32_t i = threadIdx.x; i < p.group * p.valueDim; i += kThreads) {
      const int32_t h = i / p.valueDim;
      const int32_t d = i - h * p.valueDim;
      const float* w = scores + h * kChunk;
      float a = acc[i] * alpha[h];
      for (int c = 0; c < kChunk; ++c) {
        // Masked positions have weight exactly 0 (and no cache row): skipped.
        if (w[c] != 0.f) a += w[c] * __half2float(p.values[rowBase[c] * p.valueDim + d]);
      }
      acc[i] = a;
    }
    __syncthreads();
  }

  for (int32_t i = threadIdx.x; i < p.group * p.valueDim; i += kThreads) {
    const int32_t h = i / p.valueDim;
    const int32_t d = i - h * p.valueDim;
    storeResult(p, token, kvHead * p.group + h, split, d, acc[i], runMax[h], runSum[h]);
  }
}

}  // namespace

cudaError_t launchDecodeAttention(const AttentionParams& p, cudaStream_t stream) {
  const size_t shared = decodeSharedBytes(p);
  if (shared > 48 * 1024) {
    const cudaError_t err = cudaFuncSetAttribute(
        decodeAttentionKernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(shared));
    if (err != cudaSuccess) return err;
  }
  const dim3 grid(unsigned(p.tokens), unsigned(p.kvHeads), unsigned(p.splits));
  decodeAttentionKernel<<<grid, kThreads, shared, stream>>>(p);
  return cudaGetLastError();
}

}  // namespace ember::kernels::detail
