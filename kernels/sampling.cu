// sampleTokens: one token id per logits row, on the device, so only ids come back to the host.
// The CPU reference is engine/runtime/sampling (Sampler: pickGreedy, applyTemperature, keepTopK,
// softmax, keepTopP, drawToken); the rules here follow it:
//   temperature <= 0 (or no finite maximum): argmax, lowest id on ties.
//   else p_i = exp((logit_i - max) / T), and
//   - no top-k and no top-p: the draw walks the whole vocabulary in id order (as drawToken does
//     on the untruncated, unsorted candidates);
//   - top-k and/or top-p: the candidates are the k best (or, top-k off, the kCandidateCap best)
//     sorted by descending logit, ties by lower id; top-p keeps the shortest prefix whose mass
//     reaches topP of the softmax total (over the k kept with top-k, else over the vocabulary);
//     the draw walks that prefix.
//   The draw: the first token whose running sum exceeds uniform * (the walked total); if rounding
//   leaves none, the last one with a positive probability.
// Limit (stated): at most kCandidateCap = 1024 tokens survive a truncation; top-k above 1024 acts
// as 1024, and a nucleus that would need more than 1024 tokens keeps the best 1024.
//
// One thread block of 1024 threads per row. The k best are found by a 4-pass radix select on the
// logits' order-preserving 32-bit keys (8 bits a pass, warp-aggregated shared histograms), then
// gathered and bitonic-sorted in shared memory. No global workspace is needed.
#include <cub/block/block_reduce.cuh>
#include <cub/block/block_scan.cuh>

#include <climits>
#include <cstdint>

#include "ember/kernels/kernels.h"

namespace ember::kernels {
namespace {

constexpr int kSampleThreads = 1024;
constexpr int kCandidateCap = kSampleThreads;  // one candidate per thread in the sort

// Order-preserving key: a > b as floats <=> key(a) > key(b). NaN maps to 0 (never preferred).
__device__ __forceinline__ uint32_t orderedKey(float f) {
  if (isnan(f)) return 0u;
  if (f == 0.f) f = 0.f;  // -0 and +0 compare equal, so they must share a key
  const uint32_t u = __float_as_uint(f);
  return (u & 0x80000000u) ? ~u : (u | 0x80000000u);
}

// "a ranks before b": larger key, then lower id (the CPU's ranksBefore).
__device__ __forceinline__ bool ranksBefore(uint32_t keyA, int32_t idA, uint32_t keyB,
                                            int32_t idB) {
  return keyA > keyB || (keyA == keyB && idA < idB);
}

using FloatScan = cub::BlockScan<float, kSampleThreads>;
using IntScan = cub::BlockScan<int32_t, kSampleThreads>;
using FloatReduce = cub::BlockReduce<float, kSampleThreads>;

struct SampleShared {
  union {
    typename FloatScan::TempStorage floatScan;
    typename IntScan::TempStorage intScan;
    typename FloatReduce::TempStorage floatReduce;
  } cub;
  uint32_t candidateKey[kCandidateCap];
  int32_t candidateId[kCandidateCap];
  float cumulative[kCandidateCap];
  int32_t histogram[256];
  uint32_t warpKey[kSampleThreads / 32];
  int32_t warpId[kSampleThreads / 32];
  uint32_t bestKey;
  int32_t bestId;
  int32_t counter;      // candidates above the threshold gathered so far
  int32_t chosenBin;
  int32_t remaining;    // radix select: how many of the current prefix are still wanted
  int32_t firstIndex;   // atomicMin target
  int32_t lastPositive; // atomicMax target
  float total;
};

// Block-wide argmax over the row: the best (key, id) ends in shared.bestKey / bestId.
__device__ void blockArgMax(const float* row, int32_t vocab, SampleShared& shared) {
  uint32_t bestKey = 0;
  int32_t bestId = INT_MAX;
  for (int32_t i = int32_t(threadIdx.x); i < vocab; i += kSampleThreads) {
    const uint32_t key = orderedKey(row[i]);
    if (ranksBefore(key, i, bestKey, bestId)) bestKey = key, bestId = i;
  }
  for (int delta = 16; delta > 0; delta >>= 1) {
    const uint32_t otherKey = __shfl_xor_sync(0xffffffffu, bestKey, delta);
    const int32_t otherId = __shfl_xor_sync(0xffffffffu, bestId, delta);
    if (ranksBefore(otherKey, otherId, bestKey, bestId)) bestKey = otherKey, bestId = otherId;
  }
  const int lane = int(threadIdx.x) & 31, warp = int(threadIdx.x) >> 5;
  if (lane == 0) shared.warpKey[warp] = bestKey, shared.warpId[warp] = bestId;
  __syncthreads();
  if (warp == 0) {
    bestKey = shared.warpKey[lane];  // kSampleThreads / 32 == 32 warps: one per lane
    bestId = shared.warpId[lane];
    for (int delta = 16; delta > 0; delta >>= 1) {
      const uint32_t otherKey = __shfl_xor_sync(0xffffffffu, bestKey, delta);
      const int32_t otherId = __shfl_xor_sync(0xffffffffu, bestId, delta);
      if (ranksBefore(otherKey, otherId, bestKey, bestId)) bestKey = otherKey, bestId = otherId;
    }
    if (lane == 0) shared.bestKey = bestKey, shared.bestId = bestId;
  }
  __syncthreads();
}

// exp((logit - max) / T) as the CPU computes it (difference in float, scaled in double).
__device__ __forceinline__ float unnormalized(float logit, float maxLogit, double inverseT) {
  return expf(float(double(logit - maxLogit) * inverseT));
}

// Untruncated draw: walks the vocabulary in id order. Two passes of the same tiled scan (so the
// running sums are bit-identical): the first finds the total, the second the crossing.
__device__ int32_t drawInIdOrder(const float* row, int32_t vocab, float maxLogit, double inverseT,
                                 float uniform, SampleShared& shared) {
  if (threadIdx.x == 0) shared.lastPositive = 0, shared.firstIndex = INT_MAX;
  float target = 0.f;
  for (int pass = 0; pass < 2; ++pass) {
    float carry = 0.f;
    for (int32_t base = 0; base < vocab; base += kSampleThreads) {
      const int32_t i = base + int32_t(threadIdx.x);
      const float p = i < vocab ? unnormalized(row[i], maxLogit, inverseT) : 0.f;
      float inclusive, tileTotal;
      __syncthreads();  // the scan storage is reused tile after tile
      FloatScan(shared.cub.floatScan).InclusiveSum(p, inclusive, tileTotal);
      const float running = carry + inclusive;
      if (pass == 0 && p > 0.f) atomicMax(&shared.lastPositive, i);
      if (pass == 1 && i < vocab && running > target) atomicMin(&shared.firstIndex, i);
      carry += tileTotal;
      if (pass == 1 && __syncthreads_or(shared.firstIndex != INT_MAX)) break;
    }
    target = uniform * carry;
    __syncthreads();
  }
  return shared.firstIndex != INT_MAX ? shared.firstIndex : shared.lastPositive;
}

// Radix select: the key of the n-th best element (n >= 1) and, in shared.remaining, how many
// elements equal to it belong to the n best (the lowest ids among them).
__device__ uint32_t selectThreshold(const float* row, int32_t vocab, int32_t n,
                                    SampleShared& shared) {
  uint32_t prefix = 0, mask = 0;
  if (threadIdx.x == 0) shared.remaining = n;
  const int lane = int(threadIdx.x) & 31;
  for (int shift = 24; shift >= 0; shift -= 8) {
    for (int b = int(threadIdx.x); b < 256; b += kSampleThreads) shared.histogram[b] = 0;
    __syncthreads();
    for (int32_t base = 0; base < vocab; base += kSampleThreads) {  // uniform: whole warps
      const int32_t i = base + int32_t(threadIdx.x);
      const uint32_t key = i < vocab ? orderedKey(row[i]) : 0u;
      const int bin = (i < vocab && (key & mask) == prefix) ? int((key >> shift) & 255u) : 256;
      // Lanes with the same bin add once: the logits crowd into few bins in the first pass.
      const unsigned peers = __match_any_sync(0xffffffffu, bin);
      if (bin < 256 && lane == __ffs(peers) - 1) atomicAdd(&shared.histogram[bin], __popc(peers));
    }
    __syncthreads();
    if (threadIdx.x == 0) {
      int32_t above = 0, chosen = 0;
      for (int b = 255; b >= 0; --b) {
        if (above + shared.histogram[b] >= shared.remaining) {
          chosen = b;
          break;
        }
        above += shared.histogram[b];
      }
      shared.remaining -= above;
      shared.chosenBin = chosen;
    }
    __syncthreads();
    prefix |= uint32_t(shared.chosenBin) << shift;
    mask |= 255u << shift;
  }
  return prefix;
}

// Gathers the n best (unsorted) into candidateKey/Id[0, n) and pads the rest of the cap.
__device__ void gatherCandidates(const float* row, int32_t vocab, int32_t n, uint32_t threshold,
                                 SampleShared& shared) {
  const int32_t equalWanted = shared.remaining;  // read by all before anyone changes it
  const int32_t aboveCount = n - equalWanted;
  if (threadIdx.x == 0) shared.counter = 0;
  int32_t equalTaken = 0;  // uniform across the block
  __syncthreads();
  for (int32_t base = 0; base < vocab; base += kSampleThreads) {
    const int32_t i = base + int32_t(threadIdx.x);
    const uint32_t key = i < vocab ? orderedKey(row[i]) : 0u;
    if (i < vocab && key > threshold) {
      const int32_t slot = atomicAdd(&shared.counter, 1);
      shared.candidateKey[slot] = key, shared.candidateId[slot] = i;
    }
    const int equal = i < vocab && key == threshold && equalTaken < equalWanted;
    const int32_t equalInTile = __syncthreads_count(equal);
    if (equalInTile > 0) {  // rank the ties in id order; only the lowest ids are kept
      int32_t rank;
      IntScan(shared.cub.intScan).ExclusiveSum(equal, rank);
      if (equal && equalTaken + rank < equalWanted) {
        const int32_t slot = aboveCount + equalTaken + rank;
        shared.candidateKey[slot] = key, shared.candidateId[slot] = i;
      }
      equalTaken += equalInTile;
      __syncthreads();
    }
  }
  for (int32_t slot = n + int32_t(threadIdx.x); slot < kCandidateCap; slot += kSampleThreads)
    shared.candidateKey[slot] = 0u, shared.candidateId[slot] = INT_MAX;
  __syncthreads();
}

// Sorts the kCandidateCap slots so that slot i ranks before slot i + 1 (bitonic network).
__device__ void sortCandidates(SampleShared& shared) {
  const int i = int(threadIdx.x);
  for (int size = 2; size <= kCandidateCap; size <<= 1) {
    for (int stride = size >> 1; stride > 0; stride >>= 1) {
      const int j = i ^ stride;
      if (j > i) {
        const uint32_t keyI = shared.candidateKey[i], keyJ = shared.candidateKey[j];
        const int32_t idI = shared.candidateId[i], idJ = shared.candidateId[j];
        const bool forward = (i & size) == 0;  // this run ends up in rank order
        if (forward == ranksBefore(keyJ, idJ, keyI, idI)) {
          shared.candidateKey[i] = keyJ, shared.candidateId[i] = idJ;
          shared.candidateKey[j] = keyI, shared.candidateId[j] = idI;
        }
      }
      __syncthreads();
    }
  }
}

__device__ int32_t drawTruncated(const float* row, int32_t vocab, int32_t topK, float topP,
                                 float maxLogit, double inverseT, float uniform,
                                 SampleShared& shared) {
  const int32_t wanted = topK > 0 ? topK : vocab;
  const int32_t n = wanted < kCandidateCap ? wanted : kCandidateCap;
  const uint32_t threshold = selectThreshold(row, vocab, n, shared);
  gatherCandidates(row, vocab, n, threshold, shared);
  sortCandidates(shared);

  const int i = int(threadIdx.x);
  const float p = i < n ? unnormalized(row[shared.candidateId[i]], maxLogit, inverseT) : 0.f;
  float inclusive, keptSum;
  FloatScan(shared.cub.floatScan).InclusiveSum(p, inclusive, keptSum);
  shared.cumulative[i] = inclusive;
  // The softmax total the nucleus is measured against: the k kept, or the whole vocabulary.
  float partial = 0.f;
  if (topK == 0 && topP < 1.f)
    for (int32_t v = i; v < vocab; v += kSampleThreads)
      partial += unnormalized(row[v], maxLogit, inverseT);
  __syncthreads();
  const float vocabSum = FloatReduce(shared.cub.floatReduce).Sum(partial);  // valid in thread 0
  if (i == 0) {
    shared.total = topK == 0 && topP < 1.f ? vocabSum : keptSum;
    shared.firstIndex = n - 1;  // keep everything unless the nucleus ends earlier
    shared.lastPositive = 0;
  }
  __syncthreads();
  if (topP < 1.f && i < n && inclusive >= topP * shared.total) atomicMin(&shared.firstIndex, i);
  __syncthreads();
  const int32_t keep = shared.firstIndex + 1;
  const float target = uniform * shared.cumulative[keep - 1];
  __syncthreads();
  if (i == 0) shared.firstIndex = INT_MAX;
  __syncthreads();
  if (i < keep && inclusive > target) atomicMin(&shared.firstIndex, i);
  if (i < keep && p > 0.f) atomicMax(&shared.lastPositive, i);
  __syncthreads();
  const int32_t pick = shared.firstIndex != INT_MAX ? shared.firstIndex : shared.lastPositive;
  return shared.candidateId[pick];
}

__global__ void __launch_bounds__(kSampleThreads)
    sampleTokensKernel(const float* __restrict__ logits, int32_t vocab,
                       const DeviceSampling* __restrict__ settings, int32_t* __restrict__ ids) {
  __shared__ SampleShared shared;
  const float* row = logits + size_t(blockIdx.x) * size_t(vocab);
  const DeviceSampling s = settings[blockIdx.x];
  blockArgMax(row, vocab, shared);
  const int32_t best = shared.bestId;
  const float maxLogit = best < vocab ? row[best] : 0.f;
  int32_t token = best;
  if (s.temperature > 0.f && best < vocab && isfinite(maxLogit)) {
    const double inverseT = 1.0 / double(s.temperature);
    const float uniform = fminf(fmaxf(s.uniform, 0.f), 0x1.fffffep-1f);  // [0, 1)
    const int32_t topK = s.topK > 0 && s.topK < vocab ? s.topK : 0;  // >= vocab: no cut
    if (topK == 0 && !(s.topP < 1.f))
      token = drawInIdOrder(row, vocab, maxLogit, inverseT, uniform, shared);
    else
      token = drawTruncated(row, vocab, topK, s.topP, maxLogit, inverseT, uniform, shared);
  }
  if (threadIdx.x == 0) ids[blockIdx.x] = best < vocab ? token : 0;
}

}  // namespace

size_t sampleWorkspaceBytes(int32_t, int32_t) { return 0; }  // all in shared memory

cudaError_t sampleTokens(const float* logits, int32_t rows, int32_t vocab,
                         const DeviceSampling* settings, int32_t* ids, void* /*workspace*/,
                         size_t /*workspaceBytes*/, cudaStream_t stream) {
  if (rows < 0 || vocab < 1) return cudaErrorInvalidValue;
  if (rows == 0) return cudaSuccess;
  if (!logits || !settings || !ids) return cudaErrorInvalidValue;
  sampleTokensKernel<<<unsigned(rows), kSampleThreads, 0, stream>>>(logits, vocab, settings, ids);
  return cudaGetLastError();
}

}  // namespace ember::kernels
