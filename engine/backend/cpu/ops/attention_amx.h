#pragma once
// Several-token attention (a prompt chunk, a chat's next turn over its cached history) on AMX's
// bf16 tile unit, for the fast kernels.
//
// Every operand of the reference's two products is an fp16 value: the query is rounded to fp16,
// the keys and values are the fp16 cache, and the softmax weights are rounded to fp16 before the
// values (attention.h). An fp16 value x splits exactly into two bf16 values, hi = bf16(x) and
// lo = x - hi (11 significant bits = 8 + at most 3, and bf16 has fp32's exponent range, so no
// fp16 value or part is a bf16 subnormal, which the tile unit would flush). Each product is then
// hi.hi + hi.lo + lo.hi + lo.lo, four bf16 products, each exact in fp32, summed by the tile unit
// in fp32. So q.k and p.v are the exact products summed in another order than the reference's
// lanes: a few fp32 ulps of the sum (bound in test_attention_amx). The softmax in between is the
// reference's own code on those scores (max, polynomial exp, chunk sums in double, weights
// rounded to fp16), so a weight differs only where its score did.
//
// Tile shapes: scores = keys (16 rows) x queries (16 columns) over 32 head dims per step, the
// query heads of a KV head and up to 16 tokens together as the columns; values = queries
// (16 rows) x value dims (16 columns) over 32 positions per step.
#include <cstdint>
#include <span>

#include "backend/cpu/ops/attention.h"

namespace ember::cpu::ops {

// Whether this process can run attendHeadsAmx (amxAvailable() and AVX-512 BF16).
bool amxAttentionAvailable();

// Whether the head sizes fit the tiles: head dim a multiple of 32 (one bf16 pair row per
// 32 dims), value dim a multiple of 32 (two 16-column tiles per pass), both at most 512.
bool amxAttentionFits(int32_t headDim, int32_t valueDim);

// attendHeads (SeveralTokens order) on AMX for up to kMaxTileQueries queries over kv head
// `kvHead`; softcap and sinks as attendHeads. Returns false and writes nothing when a key, value
// or query it would read is not finite (an inf's lo part would be NaN, and 0 * inf = NaN where
// the reference skips zero weights): the caller then takes attendHeads. Uses per-thread scratch
// that grows with the span and loads its own tile configuration on every call.
bool attendHeadsAmx(std::span<const AttentionQuery> queries, const KvLayerView& kv,
                    std::span<const int32_t> blockTable, int32_t kvHead, float scale,
                    float softcap = 0.0f);

}  // namespace ember::cpu::ops
