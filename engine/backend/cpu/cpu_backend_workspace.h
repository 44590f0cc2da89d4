#pragma once
// The CPU forward pass's scratch buffers. They grow when a batch larger than any before arrives
// and are reused otherwise, so a decode step allocates nothing. T = tokens in the step,
// R = logit rows requested, S = longest attention span (positions one query sees).
#include <algorithm>
#include <cstdint>
#include <vector>

#include "backend/cpu/cpu_expert_ffn.h"
#include "backend/cpu/matmul.h"
#include "backend/cpu/ops/attention.h"
#include "backend/cpu/ops/attention_amx.h"
#include "backend/cpu/ops/attention_int8.h"
#include "model/model_config.h"

namespace ember::cpu {

// Attention runs in tiles of up to `tokens` consecutive tokens of one sequence times `heads` query
// heads sharing one kv head, so each key and value row is read once per tile.
struct AttentionTiling {
  int32_t tokens = 1;
  int32_t heads = 1;  // a GQA group, or a slice of one when groups exceed the tile
  int32_t queries() const { return tokens * heads; }
};

inline AttentionTiling attentionTiling(const model::ModelConfig& c) {
  constexpr int32_t kMostTokens = 8;  // enough to amortise the reads; scratch grows with it
  const int32_t group = std::max(1, c.headCount / std::max(1, c.kvHeadCount));
  const int32_t heads = std::min(group, ops::kMaxTileQueries);
  return {std::clamp(ops::kMaxTileQueries / heads, 1, kMostTokens), heads};
}

struct CpuWorkspace {
  std::vector<float> hidden;           // (T, n_embd) the residual stream
  std::vector<float> normed;           // (T, n_embd) the normed input of the current block
  std::vector<float> q;                // (T, n_head, head_dim)
  std::vector<float> k;                // (T, n_kv_head, head_dim)
  std::vector<float> v;                // (T, n_kv_head, value_dim)
  std::vector<float> attention;        // (T, n_head, value_dim) attention output before attn_output
  std::vector<float> blockOut;         // (T, n_embd) output of attn_output or ffn_down
  std::vector<float> gate;             // (T, n_ff) gate projection, then the activation's output
  std::vector<float> up;               // (T, n_ff)
  std::vector<float> rope;             // (ropeVariants, T, rope_dims / 2, 2) cos, sin per frequency
  std::vector<int32_t> tokenSequence;  // (T) index in ForwardBatch::sequences of each token
  std::vector<int32_t> tokenPosition;  // (T) position of each token in its sequence
  std::vector<int32_t> outputTokens;   // (R) tokens whose logits are returned, in order
  std::vector<int32_t> attentionTiles;  // (tiles + 1) first token of each attention tile, then T
  std::vector<float> outputRows;        // (R, n_embd) their final hidden states, normed
  std::vector<float> attentionScratch;  // (threads, scratchStride) scores and value lanes
  // (threads, quantizedStride) bytes: the int8 attention's tile (ops/attention_int8.h), only
  // where the backend runs it
  std::vector<uint8_t> quantizedScratch;
  int64_t quantizedStride = 0;
  // The int8 keys and values of the step's several-token sequences for the current layer
  // (sequences, kv heads) and their bytes; grown as needed.
  std::vector<ops::QuantizedKv> quantizedRows;
  std::vector<uint8_t> quantizedKv;
  // The AMX attention's split keys and values of the step's several-token sequences for the
  // current layer (sequences, kv heads) and their storage (2-byte units); grown as needed.
  std::vector<ops::AmxKv> amxRows;
  std::vector<uint16_t> amxKv;
  int64_t scratchSpan = 0;              // S the scratch rows hold
  int64_t scratchStride = 0;            // ops::attentionTileScratchFloats(tile queries, S, ...)
  MatmulScratch matmul;
  ExpertScratch experts;  // mixture-of-experts layers

  // Grows the buffers to hold T tokens, R output rows and spans of S positions.
  void reserve(const model::ModelConfig& c, int ropeVariants, int threads, int64_t tokens,
               int64_t outputs, int64_t span) {
    const auto grow = [](auto& buffer, int64_t size) {
      if (int64_t(buffer.size()) < size) buffer.resize(size_t(size));
    };
    grow(hidden, tokens * c.embeddingDim);
    grow(normed, tokens * c.embeddingDim);
    grow(q, tokens * c.qDim());
    grow(k, tokens * c.kvDim());
    grow(v, tokens * c.vDim());
    grow(attention, tokens * c.attnOutDim());
    grow(blockOut, tokens * c.embeddingDim);
    if (!c.mixtureOfExperts()) {  // the experts keep their own buffers (ExpertScratch)
      grow(gate, tokens * c.ffnDim);
      grow(up, tokens * c.ffnDim);
    }
    grow(rope, int64_t(ropeVariants) * tokens * c.ropeDims);
    grow(tokenSequence, tokens);
    grow(tokenPosition, tokens);
    grow(outputTokens, outputs);
    grow(attentionTiles, tokens + 1);
    grow(outputRows, outputs * c.embeddingDim);
    if (span > scratchSpan) {  // doubles, so that a growing sequence reallocates rarely
      scratchSpan = std::max(
          span, std::min<int64_t>(std::max<int64_t>(256, 2 * scratchSpan), c.contextLength));
      scratchStride =
          ops::attentionTileScratchFloats(attentionTiling(c).queries(), scratchSpan, c.valueDim);
      attentionScratch.assign(size_t(threads * scratchStride), 0.0f);
    }
  }

  // Grows quantizedScratch to `stride` bytes per thread.
  void reserveQuantizedAttention(int threads, int64_t stride) {
    if (stride <= quantizedStride) return;
    quantizedStride = stride;
    quantizedScratch.assign(size_t(threads * stride), 0);
  }

  size_t bytes() const {
    return sizeof(float) * (hidden.size() + normed.size() + q.size() + k.size() + v.size() +
                            attention.size() + blockOut.size() + gate.size() + up.size() +
                            rope.size() + outputRows.size() + attentionScratch.size()) +
           sizeof(int32_t) * (tokenSequence.size() + tokenPosition.size() + outputTokens.size() +
                              attentionTiles.size()) +
           matmul.quantizedX.size() + quantizedScratch.size() + quantizedKv.size() +
           sizeof(uint16_t) * amxKv.size() +
           experts.bytes();
  }
};

}  // namespace ember::cpu
