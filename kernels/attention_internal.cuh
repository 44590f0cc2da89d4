#pragma once
// Shared by the paged-attention kernels (attention.cu, attention_decode.cu,
// attention_prefill.cu); internal, not part of the launcher API.
//
// Work split. The batch's query tokens are cut into tiles: runs of consecutive tokens of one
// sequence at consecutive positions, a new tile starting wherever the position is a multiple of
// `tileTokens` (so each tile is decided locally, from a token and its left neighbour). A tile of
// one token (a decode token, or the odd end of a prompt chunk) goes to the decode kernel: one CTA
// per (token, kv head, split) handling the kv head's whole group of query heads. A longer tile
// goes to the prefill kernel: one CTA per (tile, kv head, split), the tile's tokens times the
// group's heads as query rows against K/V chunks staged in shared memory. Both kernels get a grid
// over all tokens; a CTA whose token does not start a tile of its kind returns at once.
//
// Context split (flash decoding): each tile's visible positions [lo, hi] are cut into `splits`
// ranges of `splitLength` positions (the last one running to hi). With one split the kernels
// write the normalised output; with several they write each range's running max, sum of
// exponentials and unnormalised accumulator, and a reduce kernel combines them.
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>

namespace ember::kernels::detail {

struct AttentionParams {
  const float* q = nullptr;         // (T, heads, headDim)
  const __half* keys = nullptr;     // (blocks, kvHeads, blockSize, headDim)
  const __half* values = nullptr;   // (blocks, kvHeads, blockSize, valueDim)
  const int32_t* tokenSequence = nullptr;  // (T)
  const int32_t* tokenPosition = nullptr;  // (T)
  const int32_t* blockTables = nullptr;    // (S, maxBlocksPerSequence)
  int32_t tokens = 0;
  int32_t maxBlocksPerSequence = 0;
  int32_t heads = 0, kvHeads = 0, group = 0, headDim = 0, valueDim = 0, blockSize = 0;
  int32_t slidingWindow = 0;
  float scale = 1.f;
  float softcap = 0.f;   // > 0: the score is softcap * tanh(scale q.k / softcap) * capScale
  float capScale = 1.f;
  const float* sinks = nullptr;  // (heads) or null: see AttentionShape::sinks
  int32_t tileTokens = 1;   // longest tile; 1: every token is its own tile (decode kernel only)
  int32_t splits = 1;
  int32_t splitLength = 0;  // positions per split (the last split runs to the end)
  float* out = nullptr;          // (T, heads, valueDim), written when splits == 1
  float* partialAcc = nullptr;   // (T, heads, splits, valueDim), when splits > 1
  float* partialMax = nullptr;   // (T, heads, splits)
  float* partialSum = nullptr;   // (T, heads, splits)
};

constexpr int32_t kMaxHeadDim = 256;  // the decode kernel's key registers, the prefill's values
constexpr int32_t kMaxPrefillRows = 32;  // query rows (tile tokens x group) of a prefill CTA

__device__ __forceinline__ bool startsTile(const AttentionParams& p, int32_t t) {
  if (t == 0 || p.tileTokens <= 1) return true;
  const int32_t position = p.tokenPosition[t];
  return p.tokenSequence[t] != p.tokenSequence[t - 1] ||
         position != p.tokenPosition[t - 1] + 1 || position % p.tileTokens == 0;
}

// Tokens in the tile that starts at token t (startsTile(p, t) must hold).
__device__ __forceinline__ int32_t tileLength(const AttentionParams& p, int32_t t) {
  int32_t n = 1;
  while (t + n < p.tokens && n < p.tileTokens && !startsTile(p, t + n)) ++n;
  return n;
}

__device__ __forceinline__ int32_t firstVisible(const AttentionParams& p, int32_t position) {
  return p.slidingWindow > 0 ? max(0, position - p.slidingWindow + 1) : 0;
}

// This CTA's inclusive range [begin, end] of [lo, hi] (empty when begin > end).
__device__ __forceinline__ void splitRange(const AttentionParams& p, int32_t lo, int32_t hi,
                                           int32_t split, int32_t& begin, int32_t& end) {
  begin = lo + split * p.splitLength;
  end = split == p.splits - 1 ? hi : min(hi, begin + p.splitLength - 1);
}

// Row index (block, kvHead, slot) of `position` in the cache, or -1 outside the block table.
__device__ __forceinline__ int64_t cacheRow(const AttentionParams& p, const int32_t* table,
                                            int32_t kvHead, int32_t position) {
  const int32_t entry = position / p.blockSize;
  if (entry >= p.maxBlocksPerSequence) return -1;
  const int32_t block = table[entry];
  if (block < 0) return -1;
  return (int64_t(block) * p.kvHeads + kvHead) * p.blockSize + position % p.blockSize;
}

// The query rounded to fp16 precision, as the CPU backend (and llama.cpp) take q.k.
__device__ __forceinline__ float roundToHalf(float x) {
  return __half2float(__float2half_rn(x));
}

// The score of one q.k product: scaled, and soft-capped where the model caps (as the CPU's
// attendHeads: tanh of the score times 1/cap, times cap, times the score scale, each in float).
__device__ __forceinline__ float attentionScore(const AttentionParams& p, float dot) {
  const float s = dot * p.scale;
  if (p.softcap <= 0.f) return s;
  return __fmul_rn(__fmul_rn(tanhf(__fmul_rn(s, 1.f / p.softcap)), p.softcap), p.capScale);
}

// acc / sum for a row whose exponentials are taken against runMax, with the head's sink logit
// (if any) joining the softmax: both are rescaled to max(runMax, sink), and e^(sink - that max)
// is added to the sum. A row that saw nothing gives 0.
__device__ __forceinline__ float normalisedValue(const float* sinks, int32_t head, float acc,
                                                 float runMax, float runSum) {
  if (!(runSum > 0.f)) return 0.f;
  if (!sinks) return acc / runSum;
  const float sink = sinks[head];
  const float top = fmaxf(runMax, sink);
  const float rescale = expf(runMax - top);
  return __fmul_rn(acc, rescale) / (__fmul_rn(runSum, rescale) + expf(sink - top));
}

// Writes one query row's result: normalised into out (one split) or as a partial.
__device__ __forceinline__ void storeResult(const AttentionParams& p, int32_t token,
                                            int32_t head, int32_t split, int32_t d, float acc,
                                            float runMax, float runSum) {
  const int64_t row = int64_t(token) * p.heads + head;
  if (p.splits == 1) {
    p.out[row * p.valueDim + d] = normalisedValue(p.sinks, head, acc, runMax, runSum);
    return;
  }
  const int64_t partial = row * p.splits + split;
  p.partialAcc[partial * p.valueDim + d] = acc;
  if (d == 0) {
    p.partialMax[partial] = runMax;
    p.partialSum[partial] = runSum;
  }
}

// Launchers of the two kernels (grid over all tokens; see above).
cudaError_t launchDecodeAttention(const AttentionParams& params, cudaStream_t stream);
cudaError_t launchPrefillAttention(const AttentionParams& params, cudaStream_t stream);

}  // namespace ember::kernels::detail
