#pragma once
// attendHeads for a several-token step (a prompt, a chat's next turn) on AVX-512 with the tile's
// queries in the vector lanes: 16 queries per register, each lane doing exactly what
// attendHead does for its query, so the bits are the reference's (reference_order.h).
//
// Why lanes over queries: in llama.cpp's several-token order every score is a 16-lane sum
// (lane l takes the elements l, l + 16, ... of q.k) reduced pairwise, and every output column
// is a 16-lane sum over positions (lane = position % 16). With one query per register those
// pairwise reductions run across the lanes of a register, which takes shuffles, and the value
// sums keep 16 lane rows per query that the caches must stream for every query. With 16
// queries per register each reduction is an add of two registers, the softmax runs on 16
// queries at once, and every key or value element is one broadcast shared by 16 queries:
// about 5 vector operations per query and position for q.k and 4 for the values, against
// about 7 and 8 (and an L2-bound stream of value rows) for one query per register.
#include <cstdint>
#include <span>

#include "backend/cpu/ops/attention.h"

namespace ember::cpu::ops {

// Whether this CPU runs attendHeadsQueryLanes (AVX-512 F, BW, VL and DQ).
bool queryLanesAvailable();

// attendHeads(queries, kv, blockTable, kvHead, scale, StepKind::SeveralTokens, ...) without
// softcap or sinks, for head and value sizes that are multiples of 16: the same output bits.
// Reads only the keys and values of positions some query sees. Returns false and writes no
// output when a value row among them is not finite (NaN or infinity: the reference skips the
// rows whose weight is 0, which this kernel multiplies by 0) or the sizes do not fit; the caller
// then takes the reference path. Uses per-thread scratch that grows with the tile's span.
bool attendHeadsQueryLanes(std::span<const AttentionQuery> queries, const KvLayerView& kv,
                           std::span<const int32_t> blockTable, int32_t kvHead, float scale);

}  // namespace ember::cpu::ops
