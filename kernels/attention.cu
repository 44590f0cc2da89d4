// Paged attention's entry point: validates the shapes, plans the tiles and the context split,
// launches the decode and prefill kernels (attention_decode.cu, attention_prefill.cu) over the
// mixed batch, and combines split partial results. See attention_internal.cuh for the scheme.
#include <algorithm>
#include <cmath>

#include "attention_internal.cuh"
#include "ember/kernels/kernels.h"

namespace ember::kernels {
namespace {

using detail::AttentionParams;

constexpr int32_t kMinSplitPositions = 64;  // a split shorter than this is not worth its reduce
constexpr int64_t kTargetCtas = 1024;       // enough (token, kv head, split) CTAs to fill a GPU
constexpr int32_t kMaxSplits = 256;
constexpr int kReduceThreads = 128;

struct SplitPlan {
  int32_t splits = 1;
  int32_t length = 0;
};

// Positions one query sees at most (the split is planned over that span).
int32_t visibleSpan(int32_t maxPosition, const AttentionShape& shape) {
  int32_t span = std::max(1, maxPosition);
  if (shape.slidingWindow > 0) span = std::min(span, shape.slidingWindow);
  return span;
}

int32_t splitLengthFor(int32_t span, int32_t splits) {
  const int32_t length = (span + splits - 1) / splits;
  return (length + kMinSplitPositions - 1) / kMinSplitPositions * kMinSplitPositions;
}

// Splits the context only while the batch alone gives too few CTAs, and never below
// kMinSplitPositions positions per split.
SplitPlan planSplits(int32_t tokens, int32_t maxPosition, const AttentionShape& shape) {
  const int32_t span = visibleSpan(maxPosition, shape);
  const int64_t byLength = (span + kMinSplitPositions - 1) / kMinSplitPositions;
  const int64_t ctas = std::max<int64_t>(1, int64_t(tokens) * std::max(1, shape.kvHeads));
  const int64_t byOccupancy = (kTargetCtas + ctas - 1) / ctas;
  SplitPlan plan;
  plan.splits = int32_t(std::clamp<int64_t>(std::min(byLength, byOccupancy), 1, kMaxSplits));
  plan.length = splitLengthFor(span, plan.splits);
  return plan;
}

// Bytes of partial results per split: acc (valueDim), max and sum per (token, head).
size_t bytesPerSplit(int32_t tokens, const AttentionShape& shape) {
  return size_t(tokens) * size_t(shape.heads) * (size_t(shape.valueDim) + 2) * sizeof(float);
}

bool validShape(const AttentionShape& s) {
  return s.heads > 0 && s.kvHeads > 0 && s.heads % s.kvHeads == 0 && s.headDim > 0 &&
         s.headDim % 2 == 0 && s.headDim <= detail::kMaxHeadDim && s.valueDim > 0 &&
         s.valueDim <= detail::kMaxHeadDim && s.blockSize > 0 && s.slidingWindow >= 0 &&
         s.softcap >= 0.f;
}

// out (token, head) = sum over splits of acc_s e^(max_s - M) / sum over splits of
// sum_s e^(max_s - M), M the largest max_s; splits that saw nothing (sum 0) count for nothing.
// One block per (token, head).
__global__ void reduceSplitsKernel(const float* __restrict__ partialAcc,
                                   const float* __restrict__ partialMax,
                                   const float* __restrict__ partialSum, int32_t splits,
                                   int32_t valueDim, const float* __restrict__ sinks,
                                   int32_t heads, float* __restrict__ out) {
  __shared__ float splitWeight[kMaxSplits];
  __shared__ float total;
  const int64_t row = blockIdx.x;
  const float* maxima = partialMax + row * splits;
  const float* sums = partialSum + row * splits;
  float globalMax = -INFINITY;
  for (int32_t s = 0; s < splits; ++s)
    if (sums[s] > 0.f) globalMax = fmaxf(globalMax, maxima[s]);
  for (int32_t s = threadIdx.x; s < splits; s += blockDim.x)
    splitWeight[s] = sums[s] > 0.f ? expf(maxima[s] - globalMax) : 0.f;
  __syncthreads();
  if (threadIdx.x == 0) {
    float sum = 0.f;
    for (int32_t s = 0; s < splits; ++s) sum += sums[s] * splitWeight[s];
    total = sum;
  }
  __syncthreads();
  const float* acc = partialAcc + row * splits * valueDim;
  for (int32_t d = threadIdx.x; d < valueDim; d += blockDim.x) {
    float value = 0.f;
    for (int32_t s = 0; s < splits; ++s)
      if (splitWeight[s] != 0.f) value += acc[int64_t(s) * valueDim + d] * splitWeight[s];
    // The combined row's exponentials are against globalMax; the sink joins there.
    out[row * valueDim + d] =
        detail::normalisedValue(sinks, int32_t(row % heads), value, globalMax, total);
  }
}

}  // namespace

size_t pagedAttentionWorkspaceBytes(int32_t tokens, int32_t maxPosition,
                                    const AttentionShape& shape) {
  if (tokens <= 0 || !validShape(shape)) return 0;
  const SplitPlan plan = planSplits(tokens, maxPosition, shape);
  return plan.splits > 1 ? size_t(plan.splits) * bytesPerSplit(tokens, shape) : 0;
}

cudaError_t pagedAttention(const float* q, const __half* keyCache, const __half* valueCache,
                           const AttentionBatch& batch, const AttentionShape& shape, float* out,
                           void* workspace, size_t workspaceBytes, cudaStream_t stream) {
  if (batch.tokens < 0 || !validShape(shape)) return cudaErrorInvalidValue;
  if (batch.tokens == 0) return cudaSuccess;
  if (batch.sequences <= 0 || batch.maxBlocksPerSequence <= 0 || !q || !keyCache ||
      !valueCache || !out || !batch.tokenSequence || !batch.tokenPosition || !batch.blockTables)
    return cudaErrorInvalidValue;
  if (int64_t(batch.tokens) * shape.heads > 0x7fffffff) return cudaErrorInvalidValue;

  AttentionParams p;
  p.q = q;
  p.keys = keyCache;
  p.values = valueCache;
  p.tokenSequence = batch.tokenSequence;
  p.tokenPosition = batch.tokenPosition;
  p.blockTables = batch.blockTables;
  p.tokens = batch.tokens;
  p.maxBlocksPerSequence = batch.maxBlocksPerSequence;
  p.heads = shape.heads;
  p.kvHeads = shape.kvHeads;
  p.group = shape.heads / shape.kvHeads;
  p.headDim = shape.headDim;
  p.valueDim = shape.valueDim;
  p.blockSize = shape.blockSize;
  p.slidingWindow = shape.slidingWindow;
  p.scale = shape.scale;
  p.softcap = shape.softcap;
  p.capScale = shape.capScale;
  p.sinks = shape.sinks;
  p.out = out;
  // Prompt tiles only when a CTA can hold two tokens' rows and some sequence has several
  // tokens in the step; otherwise every token is its own tile (decode kernel).
  const int32_t tileTokens = detail::kMaxPrefillRows / p.group;
  const bool prefill = tileTokens >= 2 && batch.tokens > batch.sequences;
  p.tileTokens = prefill ? tileTokens : 1;

  // The split as planned, or as many splits as the given workspace holds.
  SplitPlan plan = planSplits(batch.tokens, batch.maxPosition, shape);
  const size_t perSplit = bytesPerSplit(batch.tokens, shape);
  const size_t available = workspace ? workspaceBytes : 0;
  if (plan.splits > 1 && size_t(plan.splits) * perSplit > available) {
    plan.splits = int32_t(std::min<size_t>(size_t(plan.splits), available / perSplit));
    if (plan.splits < 2) plan.splits = 1;
    plan.length = splitLengthFor(visibleSpan(batch.maxPosition, shape), plan.splits);
  }
  p.splits = plan.splits;
  p.splitLength = plan.length;
  if (p.splits > 1) {
    const size_t rowsSplits = size_t(batch.tokens) * shape.heads * p.splits;
    p.partialAcc = static_cast<float*>(workspace);
    p.partialMax = p.partialAcc + rowsSplits * shape.valueDim;
    p.partialSum = p.partialMax + rowsSplits;
  }

  cudaError_t err = detail::launchDecodeAttention(p, stream);
  if (err != cudaSuccess) return err;
  if (prefill) {
    err = detail::launchPrefillAttention(p, stream);
    if (err != cudaSuccess) return err;
  }
  if (p.splits > 1) {
    reduceSplitsKernel<<<unsigned(batch.tokens) * unsigned(shape.heads), kReduceThreads, 0,
                         stream>>>(p.partialAcc, p.partialMax, p.partialSum, p.splits,
                                   p.valueDim, shape.sinks, shape.heads, out);
    err = cudaGetLastError();
  }
  return err;
}

}  // namespace ember::kernels
