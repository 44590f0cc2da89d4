#pragma once
// Causal attention of one query head over keys and values held in fixed-size KV blocks, read
// through a sequence's block table (entry i of the table holds positions [i*B, (i+1)*B)).
//
// Keys and values are stored in fp16 and the arithmetic follows llama.cpp's CPU attention (F16
// cache, no flash attention) operation for operation, so that logits agree with it to the last
// bit where the weights allow: the query is rounded to fp16 (ggml converts it to the cache's
// type), q.k is summed in lanes (reference_order.h), scaled, soft-maxed with the polynomial
// exp and 16-lane chunk sums in double over chunks aligned to positions 0, 16, 32, ..., the
// weights are normalised in float and rounded to fp16, and the values are summed in lanes
// (lane = position % 16, or % 64 for one-token steps) reduced pairwise.
#include <cstdint>
#include <limits>
#include <span>

namespace ember::cpu::ops {

// One layer's slice of the KV block pool (fp16 bit patterns).
struct KvLayerView {
  uint16_t* keys = nullptr;    // (blockCount, kvHeads, blockSize, headDim)
  uint16_t* values = nullptr;  // (blockCount, kvHeads, blockSize, valueDim)
  int32_t blockCount = 0;
  int32_t blockSize = 0;
  int32_t kvHeads = 0;
  int32_t headDim = 0;
  int32_t valueDim = 0;

  uint16_t* keyAt(int32_t block, int32_t head, int32_t slot) const {
    return keys + ((int64_t(block) * kvHeads + head) * blockSize + slot) * headDim;
  }
  uint16_t* valueAt(int32_t block, int32_t head, int32_t slot) const {
    return values + ((int64_t(block) * kvHeads + head) * blockSize + slot) * valueDim;
  }
};

// Writes one token's keys k (kvHeads, headDim) and values v (kvHeads, valueDim) at `position`,
// rounded to fp16.
void storeKv(const KvLayerView& kv, std::span<const int32_t> blockTable, int32_t position,
             const float* k, const float* v);

// Rounds each of the n values to the nearest fp16 value (in place): the query before attention.
void roundToHalfPrecision(float* x, int64_t n);

// llama.cpp sums its products with the KV cache in a different order when a step has one token
// (ggml_vec_dot_f16: 64 lanes) than when it has several (tinyBLAS: 16 lanes, used only when the
// head sizes allow: head_dim % 16 == 0 for q.k, value_dim % 4 == 0 for the values).
enum class StepKind : uint8_t { OneToken, SeveralTokens };

// Floats of scratch attendHead needs for up to `span` positions and values of valueDim.
inline int64_t attentionScratchFloats(int64_t span, int32_t valueDim) {
  return span + 32 + 64 * int64_t(valueDim);
}

// out (valueDim) = softmax(scale * q . K[p]) @ V[p] over positions p in [first, last] of kv head
// `kvHead`; q (headDim) must already be rounded to fp16 precision. scratch: at least
// attentionScratchFloats(last - first + 1, valueDim) floats.
void attendHead(const float* q, const KvLayerView& kv, std::span<const int32_t> blockTable,
                int32_t kvHead, int32_t first, int32_t last, float scale, StepKind step,
                float* scratch, float* out);

// One query of a tile: its head's query vector q (headDim, rounded to fp16 precision), the
// positions it attends [first, last], and where its output (valueDim) goes.
// sink: the head's attention-sink logit (gpt-oss), one more softmax score with no value, or
// kNoSink.
constexpr float kNoSink = -std::numeric_limits<float>::infinity();
struct AttentionQuery {
  const float* q = nullptr;
  int32_t first = 0;
  int32_t last = 0;
  float* out = nullptr;
  float sink = kNoSink;
};

// Most queries one attendHeads call takes.
constexpr int kMaxTileQueries = 64;

// Floats of scratch attendHeads needs for `queries` queries whose positions together span `span`
// positions (max last - min first + 1) and values of valueDim.
inline int64_t attentionTileScratchFloats(int queries, int64_t span, int32_t valueDim) {
  return int64_t(queries) * attentionScratchFloats(span, valueDim);
}

// attendHead for up to kMaxTileQueries queries over the same kv head (the query heads of a GQA
// group, several tokens of one sequence), reading each key and value row once for all the queries
// that see it. Each query's output is bit for bit what attendHead gives it: the same operations in
// the same order, only interleaved with the other queries'. scratch: at least
// attentionTileScratchFloats(queries.size(), span, valueDim) floats.
// softcap > 0 (gemma2): each score q.k becomes softcap * tanh(q.k / softcap) before the softmax, as
// llama.cpp's attention computes it (then `scale` multiplies it; gemma2 passes 1).
void attendHeads(std::span<const AttentionQuery> queries, const KvLayerView& kv,
                 std::span<const int32_t> blockTable, int32_t kvHead, float scale, StepKind step,
                 float* scratch, float softcap = 0.0f);

}  // namespace ember::cpu::ops
