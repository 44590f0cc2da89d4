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
  // Queries qs[lane] (n floats each, lane < lanes; the other lanes are q = 0) to qt (n / 4, 16, 4)
  // uint8 = saturate(round(q * (127 / max|q|)), +-127) + 128 and queryScales[lane] =
  // max|q| / 127 * scale (0 for the empty lanes). n % 16 == 0.
  void (*quantizeQueries)(const float* const* qs, int lanes, int64_t n, float scale, uint8_t* qt,
                          float* queryScales);
  // scores (count, 16) = float(sum_g qt[g][lane] . keys[i][g] - 128 * sums[i]) * keyScales[i]
  // * queryScales[lane]; qt (n / 4, 16, 4) uint8 = int8 query + 128, n % 4 == 0.
  void (*scoreKeys)(const uint8_t* qt, const float* queryScales, const int8_t* keys,
                    const float* keyScales, const int32_t* sums, int64_t count, int64_t n,
                    float* scores);
  // For each lane, positions [first[lane], last[lane]] of scores (count, 16) are its own (empty
  // when first > last): p = exp(score - max) there (0 elsewhere), sums[lane] = sum of p in
  // position order, and per block b of 64 positions with m = the largest p * valueScales in it:
  // blockScales[b][lane] = m / 255 and weights (count / 4, 16, 4) uint8 =
  // round(p * valueScales * (255 / m)) (0 for a block without weight). scores is overwritten.
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

// Whether the quantized path takes this shape (head dim and value dim multiples of 16, head dim
// at most 512).
inline bool quantizedAttentionFits(int32_t headDim, int32_t valueDim) {
  return headDim % 16 == 0 && valueDim % 16 == 0 && headDim > 0 && valueDim > 0 && headDim <= 512;
}

// One sequence's keys and values of one kv head and layer in int8, positions [first, first +
// count) (both multiples of kWeightBlock): quantized once per step and layer, read by every tile
// of the sequence. Positions past the sequence's end hold zeros.
struct QuantizedKv {
  int8_t* keys = nullptr;         // (count, headDim)
  float* keyScales = nullptr;     // (count)
  int32_t* keySums = nullptr;     // (count)
  int8_t* values = nullptr;       // (count / 4, valueDim, 4)
  float* valueScales = nullptr;   // (count)
  int32_t first = 0;
  int32_t count = 0;
};

// Bytes of a QuantizedKv of `count` positions, and one carved from `buffer` (that many bytes).
int64_t quantizedKvBytes(int32_t count, int32_t headDim, int32_t valueDim);
QuantizedKv carveQuantizedKv(uint8_t* buffer, int32_t first, int32_t count, int32_t headDim,
                             int32_t valueDim);

// Quantizes positions [from, to) of `rows` (multiples of 4 inside [first, first + count)) from the
// fp16 cache; positions past `lastValid` become zeros.
void fillQuantizedKv(const QuantizedAttentionKernels& kernels, const KvLayerView& kv,
                     std::span<const int32_t> blockTable, int32_t kvHead, int32_t lastValid,
                     const QuantizedKv& rows, int32_t from, int32_t to);

// Bytes of scratch attendHeadsQuantized needs for a tile whose queries span `span` positions
// (max last - min first + 1).
int64_t quantizedAttentionScratchBytes(int64_t span, int32_t headDim, int32_t valueDim);

// attendHeads' work for a several-token step without softcap or sinks, on `kernels`: each
// query's out (valueDim) = softmax(scale * q . K[p]) @ V[p] over its [first, last] in the
// arithmetic above, reading K and V from `rows` (which must cover every query's positions, from
// the block of 64 holding the smallest first on). q need not be rounded to fp16.
// scratch: quantizedAttentionScratchBytes.
void attendHeadsQuantized(const QuantizedAttentionKernels& kernels,
                          std::span<const AttentionQuery> queries, const QuantizedKv& rows,
                          int32_t headDim, int32_t valueDim, float scale, uint8_t* scratch);

}  // namespace ember::cpu::ops
