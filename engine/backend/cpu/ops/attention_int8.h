#pragma once
// Attention of a several-token step with 8-bit integer arithmetic (the "fast" kernels on CPUs
// with AVX-512 VNNI): the fp16 cache stays as it is, and each tile converts the keys and values
// it reads once, for all of its queries:
// - keys and queries to int8 with one scale per row (max |x| / 127), q.k as an exact integer
//   dot product (vpdpbusd takes the query as unsigned: q + 128, corrected by 128 * sum(k));
// - the softmax in float, each query in its own SIMD lane (queries of a tile side by side, 16
//   to a group), so every lane runs the scalar kernel's operations in the scalar kernel's order;
// - values to int8 with one scale per row, the weights p * vScale to uint8 with one scale per
//   query and 64-position block (max / 255), p.v as exact integer sums per block, added in float
//   block by block, divided by the float sum of p at the end.
// Blocks are aligned to absolute positions and each query's numbers depend only on its own q,
// range and the cache rows, so a query gets the same bits whatever else shares its tile (batched
// = alone, cached = cold). Not llama.cpp's operation order: checked against llama.cpp by tolerance
// (test_fidelity_llamacpp) and against exact attention by the bound test_attention_int8 derives.
#include <cstdint>
#include <span>
#include <vector>

#include "backend/cpu/ops/attention.h"

namespace ember::cpu::ops {

constexpr int kQueryLanes = 16;     // queries per group (one 512-bit register of floats)
constexpr int kWeightBlock = 64;    // positions per weight scale
constexpr int kKeyGroup = 4;        // positions per int32 lane of the value products

// The integer kernels, in a scalar and an AVX-512 VNNI version that give the same bits.
// Shapes: S = positions of the tile (a multiple of kWeightBlock), D = head dim, V = value dim.
struct QuantizedAttentionKernels {
  // Per row i < count of n fp16 values (n % 16 == 0; rows[i] may repeat): out (count, n) int8 =
  // saturate(round(x * (127 / max|x|))), scales[i] = max|x| / 127, sums[i] = sum of the int8s.
  void (*quantizeKeys)(const uint16_t* const* rows, int64_t count, int64_t n, int8_t* out,
                       float* scales, int32_t* sums);
  // The same rounding for values, stored (count / 4, n, 4): the 4 positions of a group side by
  // side for each column. count % 4 == 0; no sums.
  void (*quantizeValues)(const uint16_t* const* rows, int64_t count, int64_t n, int8_t* out,
                         float* scales);
  // scores (count, 16) = float(sum_g qt[g][lane] . keys[i][g] - 128 * sums[i]) * keyScales[i]
  // * queryScales[lane]; qt (n / 4, 16, 4) uint8 = int8 query + 128, n % 4 == 0.
  void (*scoreKeys)(const uint8_t* qt, const float* queryScales, const int8_t* keys,
                    const float* keyScales, const int32_t* sums, int64_t count, int64_t n,
                    float* scores);
  // For each lane, positions [first[lane], last[lane]] of scores (count, 16) are its own (empty
  // when first > last): p = exp(score - max) there (0 elsewhere), sums[lane] = sum of p in
  // position order, and per block b of 64 positions weights (count / 4, 16, 4) uint8 =
  // round(p * valueScales / blockScales[b][lane]) with blockScales = max of p * valueScales
  // in the block / 255 (0 for a block without weight). scores is overwritten.
  void (*weighKeys)(float* scores, const int32_t* first, const int32_t* last,
                    const float* valueScales, int64_t count, uint8_t* weights, float* blockScales,
                    float* sums);
  // out (n, 16) = sum over blocks b, in order, of blockScales[b][lane] * float(sum over the
  // block's positions of weights . values) (each block's sum exact in int32), n % 8 == 0.
  void (*accumulateValues)(const uint8_t* weights, const float* blockScales, const int8_t* values,
                           int64_t count, int64_t n, float* out);
};

const QuantizedAttentionKernels& scalarQuantizedAttentionKernels();
const QuantizedAttentionKernels& avx512QuantizedAttentionKernels();  // AVX-512 VNNI CPUs only
// The table the fast kernels use on this CPU, or nullptr where the float kernels are faster (no
// AVX-512 VNNI: the scalar table is only the reference the tests compare with).
const QuantizedAttentionKernels* quantizedAttentionKernels();
// Every table this CPU runs, scalar first.
std::vector<const QuantizedAttentionKernels*> supportedQuantizedAttentionKernels();

// The exp both tables use for x <= 0 (Cephes' single-precision polynomial, fused multiply-adds
// in a fixed order; inputs below -87 are taken as -87); relative error about 2 ulp.
float expNonPositive(float x);

// Whether the quantized path takes this shape (head dim and value dim multiples of 16).
inline bool quantizedAttentionFits(int32_t headDim, int32_t valueDim) {
  return headDim % 16 == 0 && valueDim % 16 == 0 && headDim > 0 && valueDim > 0;
}

// Bytes of scratch attendHeadsQuantized needs for up to `queries` queries whose positions span
// `span` positions (max last - min first + 1).
int64_t quantizedAttentionScratchBytes(int queries, int64_t span, int32_t headDim,
                                       int32_t valueDim);

// attendHeads' work for a several-token step without softcap or sinks, on `kernels`: each
// query's out (valueDim) = softmax(scale * q . K[p]) @ V[p] over its [first, last] in the
// arithmetic above. q need not be rounded to fp16. scratch: quantizedAttentionScratchBytes.
void attendHeadsQuantized(const QuantizedAttentionKernels& kernels,
                          std::span<const AttentionQuery> queries, const KvLayerView& kv,
                          std::span<const int32_t> blockTable, int32_t kvHead, float scale,
                          uint8_t* scratch);

}  // namespace ember::cpu::ops
