// Paged attention for prompt tiles (several consecutive tokens of one sequence): one CTA per
// (tile, kv head, split). Its query rows are the tile's tokens times the kv head's group of
// query heads (at most kMaxRows); it walks the tile's visible positions in chunks of kChunk,
// staging each chunk's keys and values (fp16 -> fp32) in shared memory, with a causal mask per
// row (and the sliding window) and an online softmax. Warp w owns rows w, w + 8, w + 16, w + 24:
// lane c scores position c of the chunk for its rows, and lane l accumulates value dims l,
// l + 32, ... of its rows in registers. fp32 arithmetic throughout.
// Reference for the tests: engine/backend/cpu/ops/attention.cpp (ops::attendHead).
#include <cmath>

#include "attention_internal.cuh"
#include "warp_reduce.cuh"

namespace ember::kernels::detail {
namespace {

constexpr int kThreads = 256;
constexpr int kWarps = kThreads / kWarpSize;
constexpr int kChunk = kWarpSize;  // one position per lane in the scores
constexpr int kRowsPerWarp = kMaxPrefillRows / kWarps;
constexpr int kValueSlices = kMaxHeadDim / kWarpSize;  // value dims per lane, at most
static_assert(kRowsPerWarp * kWarps == kMaxPrefillRows);

// Shared memory: rowBase (kChunk int64), then floats query (rows, headDim), keys (kChunk,
// headDim + 1: the odd stride keeps lanes reading different positions on different banks),
// values (kChunk, valueDim), weights (kWarps, kRowsPerWarp, kChunk).
size_t prefillSharedBytes(const AttentionParams& p) {
  const size_t rows = size_t(p.tileTokens) * p.group;
  const size_t floats = rows * p.headDim + size_t(kChunk) * (p.headDim + 1) +
                        size_t(kChunk) * p.valueDim + size_t(kWarps) * kRowsPerWarp * kChunk;
  return kChunk * sizeof(int64_t) + floats * sizeof(float);
}

__global__ void __launch_bounds__(kThreads) prefillAttentionKernel(AttentionParams p) {
  const int32_t firstToken = blockIdx.x;
  const int32_t kvHead = blockIdx.y;
  const int32_t split = blockIdx.z;
  if (!startsTile(p, firstToken)) return;
  const int32_t tokens = tileLength(p, firstToken);
  if (tokens < 2) return;  // the decode kernel's

  extern __shared__ int64_t sharedBase[];
  int64_t* rowBase = sharedBase;                                          // (kChunk)
  float* query = reinterpret_cast<float*>(rowBase + kChunk);              // (rows, headDim)
  float* keys = query + p.tileTokens * p.group * p.headDim;               // (kChunk, headDim+1)
  float* values = keys + kChunk * (p.headDim + 1);                        // (kChunk, valueDim)
  float* weights = values + kChunk * p.valueDim;  // (kWarps, kRowsPerWarp, kChunk)

  const int lane = threadIdx.x % kWarpSize;
  const int warp = threadIdx.x / kWarpSize;
  const int32_t rows = tokens * p.group;  // row r: token firstToken + r / group, head r % group
  const int32_t firstPosition = p.tokenPosition[firstToken];
  const int32_t* table =
      p.blockTables + int64_t(p.tokenSequence[firstToken]) * p.maxBlocksPerSequence;
  const int32_t keyStride = p.headDim + 1;
  int32_t begin = 0, end = -1;
  splitRange(p, firstVisible(p, firstPosition), firstPosition + tokens - 1, split, begin, end);

  // Each token's group of query rows is contiguous in q.
  const int32_t tokenFloats = p.group * p.headDim;
  for (int32_t i = threadIdx.x; i < rows * p.headDim; i += kThreads) {
    const int32_t t = i / tokenFloats;
    const int64_t src = (int64_t(firstToken + t) * p.heads + int64_t(kvHead) * p.group) *
                        p.headDim + (i - t * tokenFloats);
    query[i] = roundToHalf(p.q[src]);
  }

  // This warp's rows: their positions bound what they see.
  bool rowValid[kRowsPerWarp];
  int32_t rowLast[kRowsPerWarp], rowFirst[kRowsPerWarp];
  float runMax[kRowsPerWarp], runSum[kRowsPerWarp], acc[kRowsPerWarp][kValueSlices];
#pragma unroll
  for (int i = 0; i < kRowsPerWarp; ++i) {
    const int32_t r = warp + i * kWarps;
    rowValid[i] = r < rows;
    rowLast[i] = firstPosition + r / p.group;
    rowFirst[i] = firstVisible(p, rowLast[i]);
    runMax[i] = -INFINITY;
    runSum[i] = 0.f;
#pragma unroll
    for (int j = 0; j < kValueSlices; ++j) acc[i][j] = 0.f;
  }

  for (int32_t chunkStart = begin; chunkStart <= end; chunkStart += kChunk) {
    if (threadIdx.x < kChunk) {
      const int32_t position = chunkStart + threadIdx.x;
      rowBase[threadIdx.x] = position <= end ? cacheRow(p, table, kvHead, position) : -1;
    }
    __syncthreads();  // also: the query is staged (first pass)
    for (int c = warp; c < kChunk; c += kWarps) {
      const int64_t row = rowBase[c];
      for (int32_t d = lane; d < p.headDim; d += kWarpSize)
        keys[c * keyStride + d] = row >= 0 ? __half2float(p.keys[row * p.headDim + d]) : 0.f;
      for (int32_t d = lane; d < p.valueDim; d += kWarpSize)
        values[c * p.valueDim + d] =
            row >= 0 ? __half2float(p.values[row * p.valueDim + d]) : 0.f;
    }
    __syncthreads();

    // Lane = chunk position: the scores of this warp's rows at it.
    const int32_t position = chunkStart + lane;
    const bool inCache = rowBase[lane] >= 0;
    float dot[kRowsPerWarp];
#pragma unroll
    for (int i = 0; i < kRowsPerWarp; ++i) dot[i] = 0.f;
    const float* key = keys + lane * keyStride;
    for (int32_t d = 0; d < p.headDim; ++d) {
      const float k = key[d];
#pragma unroll
      for (int i = 0; i < kRowsPerWarp; ++i) {
        const int32_t r = rowValid[i] ? warp + i * kWarps : 0;  // invalid rows read row 0
        dot[i] += query[r * p.headDim + d] * k;
      }
    }

    float rescale[kRowsPerWarp];
#pragma unroll
    for (int i = 0; i < kRowsPerWarp; ++i) {
      rescale[i] = 1.f;
      if (!rowValid[i]) continue;  // warp-uniform
      const bool visible = inCache && position <= rowLast[i] && position >= rowFirst[i];
      const float score = visible ? attentionScore(p, dot[i]) : -INFINITY;
      const float newMax = fmaxf(runMax[i], warpMax(score));
      float w = 0.f;
      if (newMax != -INFINITY) {
        rescale[i] = expf(runMax[i] - newMax);  // 0 while nothing was seen yet
        w = expf(score - newMax);
      }
      runSum[i] = runSum[i] * rescale[i] + warpSum(w);
      runMax[i] = newMax;
      weights[(warp * kRowsPerWarp + i) * kChunk + lane] = w;
    }
    __syncwarp();

    // acc (rows, valueDim) = acc * rescale + weights . V, lane l holding dims l + 32 j.
#pragma unroll
    for (int i = 0; i < kRowsPerWarp; ++i) {
      if (!rowValid[i]) continue;
      const float* w = weights + (warp * kRowsPerWarp + i) * kChunk;
#pragma unroll
      for (int j = 0; j < kValueSlices; ++j) {
        const int32_t d = lane + j * kWarpSize;
        if (d >= p.valueDim) continue;
        float a = acc[i][j] * rescale[i];
        for (int c = 0; c < kChunk; ++c) a += w[c] * values[c * p.valueDim + d];
        acc[i][j] = a;
      }
    }
    __syncthreads();  // before the next chunk overwrites rowBase, keys, values
  }

#pragma unroll
  for (int i = 0; i < kRowsPerWarp; ++i) {
    if (!rowValid[i]) continue;
    const int32_t r = warp + i * kWarps;
#pragma unroll
    for (int j = 0; j < kValueSlices; ++j) {
      const int32_t d = lane + j * kWarpSize;
      if (d < p.valueDim)
        storeResult(p, firstToken + r / p.group, kvHead * p.group + r % p.group, split, d,
                    acc[i][j], runMax[i], runSum[i]);
    }
  }
}

}  // namespace

cudaError_t launchPrefillAttention(const AttentionParams& p, cudaStream_t stream) {
  const size_t shared = prefillSharedBytes(p);
  if (shared > 48 * 1024) {
    const cudaError_t err = cudaFuncSetAttribute(
        prefillAttentionKernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(shared));
    if (err != cudaSuccess) return err;
  }
  const dim3 grid(unsigned(p.tokens), unsigned(p.kvHeads), unsigned(p.splits));
  prefillAttentionKernel<<<grid, kThreads, shared, stream>>>(p);
  return cudaGetLastError();
}

}  // namespace ember::kernels::detail
