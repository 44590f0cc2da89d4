#pragma once
// Several-token attention (a prompt chunk, a chat's next turn over its cached history) on AMX's
// bf16 tile unit. The approx kernels use it with plain bf16 products (AmxPrecision{1, 1, true}).
// Not the fast kernels: even with exact part products (below) its fp32 summation order differs
// from llama.cpp's lanes, and SmolLM2-135M and Gemma-3-270M turn that into greedy continuations
// and top-1 picks that miss fast's bounds against llama.cpp's logits.
//
// With all four part products (the default AmxPrecision) every operand of the reference's two
// products is an fp16 value: the query is rounded to fp16, the keys and values are the fp16
// cache, and the softmax weights are rounded to fp16 before the values (attention.h). An fp16 value x splits exactly into two bf16 values, hi = bf16(x) and
// lo = x - hi (11 significant bits = 8 + at most 3, and bf16 has fp32's exponent range, so no
// fp16 value or part is a bf16 subnormal, which the tile unit would flush). Each product is then
// hi.hi + hi.lo + lo.hi + lo.lo, four bf16 products, each exact in fp32, summed by the tile unit
// in fp32. So q.k and p.v are the exact products summed in another order than the reference's
// lanes: a few fp32 ulps of the sum (bound in test_attention_amx). The softmax in between is the
// reference's own code on those scores (max, polynomial exp, chunk sums in double, weights
// rounded to fp16), so a weight differs only where its score did.
//
// Tile shapes: scores = queries (16 rows) x keys (16 columns) over 32 head dims per step, the
// query heads of a KV head and up to 16 tokens together as the rows; values = queries (16 rows)
// x value dims (16 columns) over 32 positions per step.
#include <cstddef>
#include <cstdint>
#include <span>

#include "backend/cpu/ops/attention.h"

namespace ember::cpu::ops {

// Whether this process can run attendHeadsAmx (amxAvailable() and AVX-512 BF16).
bool amxAttentionAvailable();

// Whether the head sizes fit the tiles: head dim a multiple of 32 (one bf16 pair row per
// 32 dims), value dim a multiple of 32 (two 16-column tiles per pass), both at most 512.
bool amxAttentionFits(int32_t headDim, int32_t valueDim);

// One several-token sequence's keys and values of one kv head for the current layer, positions
// [first, first + count) (both multiples of 32), split into bf16 parts in the tile operands'
// layouts, converted once per layer and step for all the sequence's tiles.
struct AmxKv {
  int32_t first = 0;
  int32_t count = 0;
  // (count / 16 key groups, headDim / 32 steps) tiles of (16 pairs, 16 keys, 2): row r, column
  // col = dims 32 st + 2r and + 1 of key first + 16 g + col.
  uint16_t* keyHi = nullptr;
  uint16_t* keyLo = nullptr;
  // (count / 32 steps, valueDim / 16 blocks) tiles of (16 pairs, 16 dims, 2): row r, column
  // col = dim 16 vb + col of positions first + 32 st + 2r and + 1.
  uint16_t* valueHi = nullptr;
  uint16_t* valueLo = nullptr;
  uint8_t* nonFinite = nullptr;  // (count / 32): 1 where one of the 32 positions holds inf or NaN
};

// Bytes of an AmxKv of `count` positions, and the AmxKv laid out in `bytes` (that many).
int64_t amxKvBytes(int32_t count, int32_t headDim, int32_t valueDim);
AmxKv carveAmxKv(uint8_t* bytes, int32_t first, int32_t count, int32_t headDim, int32_t valueDim);

// Fills positions [from, to) of `rows` (multiples of 32 within it) from kv head kvHead; positions
// outside [seenFirst, seenLast] become zero without being read (their blocks may not exist).
void fillAmxKv(const KvLayerView& kv, std::span<const int32_t> blockTable, int32_t kvHead,
               int32_t seenFirst, int32_t seenLast, const AmxKv& rows, int32_t from, int32_t to);

// How many of the four part products each of the two products takes: 4 = exact products (fp32
// summation the only difference from exact), 3 = without lo.lo (relative 2^-16 per product
// more), 1 = hi.hi only (plain bf16 operands, relative 2^-8 per product).
// lightSoftmax: one float exp polynomial and float sums, weights not rounded to fp16 (the
// reference's softmax otherwise; always with softcap or sinks).
struct AmxPrecision {
  int scoreProducts = 4;
  int valueProducts = 4;
  bool lightSoftmax = false;
};

// attendHeads (SeveralTokens order) on AMX for queries over one kv head whose positions `rows`
// holds; softcap and sinks as attendHeads. Returns false and writes nothing when a key, value or
// query it would read is not finite (an inf's lo part would be NaN, and 0 * inf = NaN where the
// reference skips zero weights): the caller then takes attendHeads. Uses per-thread scratch that
// grows with the span, and loads its own tile configuration on every call (putting back the
// thread's previous one after).
bool attendHeadsAmx(std::span<const AttentionQuery> queries, const AmxKv& rows, int32_t headDim,
                    int32_t valueDim, float scale, float softcap = 0.0f,
                    AmxPrecision precision = {});

// The same for one tile, its keys and values converted for it alone (for tests).
bool attendHeadsAmx(std::span<const AttentionQuery> queries, const KvLayerView& kv,
                    std::span<const int32_t> blockTable, int32_t kvHead, float scale,
                    float softcap = 0.0f, AmxPrecision precision = {});

}  // namespace ember::cpu::ops
