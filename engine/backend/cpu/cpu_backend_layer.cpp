// One transformer layer of the CPU forward pass: the attention block and the feed-forward block,
// each over all T tokens of the step at once (the matrix products run with n = T).
//
//   h    = x + [post_norm](attn_output(attention(rope(qk_norm(q)), rope(qk_norm(k)), v)))
//            where q, k, v = proj(rmsnorm(x, attn_norm)) [+ bias]
//   out  = h + [post_norm](ffn_down(act(ffn_gate(n)) * ffn_up(n)))    n = rmsnorm(h, ffn_norm)
#include <algorithm>

#include "backend/cpu/cpu_backend.h"
#include "backend/cpu/ops/activations.h"
#include "backend/cpu/ops/norm.h"

namespace ember::cpu {
namespace {

void addBias(float* x, const std::vector<float>& bias, int64_t rows) {
  if (bias.empty()) return;
  const int64_t width = int64_t(bias.size());
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t i = 0; i < width; ++i) x[r * width + i] += bias[size_t(i)];
}

}  // namespace

void CpuBackend::addInPlace(float* y, const float* x, int64_t count) {
  pool_.parallelFor(count, 4096, [&](int64_t begin, int64_t end, int) {
    for (int64_t i = begin; i < end; ++i) y[i] += x[i];
  });
}

void CpuBackend::rmsNormRows(const float* x, const std::vector<float>& weight, int64_t rows,
                             int64_t width, float* y) {
  const float eps = config_.rmsNormEps;
  const int64_t grain = std::max<int64_t>(1, 16384 / width);
  pool_.parallelFor(rows, grain, [&](int64_t begin, int64_t end, int) {
    for (int64_t r = begin; r < end; ++r)
      ops::rmsNorm(x + r * width, weight.data(), width, eps, y + r * width);
  });
}

void CpuBackend::attentionBlock(const ForwardBatch& batch, int32_t layer, int64_t tokens) {
  const CpuLayerWeights& w = weights_.layers[size_t(layer)];
  const model::ModelConfig& c = config_;
  const int64_t embd = c.embeddingDim, qDim = c.qDim(), kDim = c.kvDim(), vDim = c.vDim();

  rmsNormRows(ws_.hidden.data(), w.attnNorm, tokens, embd, ws_.normed.data());
  matmul(pool_, w.wq, ws_.normed.data(), tokens, ws_.q.data(), ws_.matmul);
  matmul(pool_, w.wk, ws_.normed.data(), tokens, ws_.k.data(), ws_.matmul);
  matmul(pool_, w.wv, ws_.normed.data(), tokens, ws_.v.data(), ws_.matmul);
  addBias(ws_.q.data(), w.bq, tokens);
  addBias(ws_.k.data(), w.bk, tokens);
  addBias(ws_.v.data(), w.bv, tokens);
  if (c.qkNorm) {  // per head: q (T * n_head, head_dim), k (T * n_kv_head, head_dim)
    rmsNormRows(ws_.q.data(), w.qNorm, tokens * c.headCount, c.headDim, ws_.q.data());
    rmsNormRows(ws_.k.data(), w.kNorm, tokens * c.kvHeadCount, c.headDim, ws_.k.data());
  }

  // RoPE by each token's position, then keys and values into the sequence's KV blocks (fp16).
  const int variant = layerRopeVariant_[size_t(layer)];
  const ops::RopeParams& rope = ropeVariants_[size_t(variant)];
  const float* angles = ws_.rope.data() + int64_t(variant) * tokens * c.ropeDims;
  const ops::KvLayerView kv = kvLayer(layer);
  pool_.parallelFor(tokens, 1, [&](int64_t begin, int64_t end, int) {
    for (int64_t t = begin; t < end; ++t) {
      const float* cosSin = angles + t * c.ropeDims;
      ops::applyRope(rope, cosSin, ws_.q.data() + t * qDim, c.headCount, c.headDim);
      ops::applyRope(rope, cosSin, ws_.k.data() + t * kDim, c.kvHeadCount, c.headDim);
      float* q = ws_.q.data() + t * qDim;
      if (c.scaleQueries)  // gemma: llama.cpp scales Qcur before the attention, in float
        for (int64_t i = 0; i < qDim; ++i) q[i] *= c.attentionScale;
      ops::roundToHalfPrecision(q, qDim);  // llama.cpp takes q.k with q converted to fp16
      const BatchSequence& s = batch.sequences[size_t(ws_.tokenSequence[size_t(t)])];
      ops::storeKv(kv, s.blockTable, ws_.tokenPosition[size_t(t)], ws_.k.data() + t * kDim,
                   ws_.v.data() + t * vDim);
    }
  });

  // Causal attention in tiles (cpu_backend_workspace.h): consecutive tokens of one sequence times
  // the query heads of a GQA group, one work item per (tile, kv head, head slice).
  const bool sliding = c.layers[size_t(layer)].slidingWindow;
  const int32_t groupSize = c.headCount / c.kvHeadCount;
  const float scoreScale = c.scaleQueries ? 1.0f : c.attentionScale;
  const AttentionTiling tiling = attentionTiling(c);
  const int32_t headSlices = (groupSize + tiling.heads - 1) / tiling.heads;
  int64_t tiles = 0;
  for (int64_t t = 0; t < tokens;) {
    ws_.attentionTiles[size_t(tiles++)] = int32_t(t);
    const int32_t sequence = ws_.tokenSequence[size_t(t)];
    const int64_t start = t;
    while (++t < tokens && t - start < tiling.tokens && ws_.tokenSequence[size_t(t)] == sequence) {
    }
  }
  ws_.attentionTiles[size_t(tiles)] = int32_t(tokens);
  const int64_t items = tiles * c.kvHeadCount * headSlices;
  pool_.parallelFor(items, 1, [&](int64_t begin, int64_t end, int thread) {
    float* scratch = ws_.attentionScratch.data() + int64_t(thread) * ws_.scratchStride;
    ops::AttentionQuery queries[ops::kMaxTileQueries];
    for (int64_t item = begin; item < end; ++item) {
      const int64_t tile = item / (int64_t(c.kvHeadCount) * headSlices);
      const int32_t kvHead = int32_t(item / headSlices % c.kvHeadCount);
      const int32_t headBegin = kvHead * groupSize + int32_t(item % headSlices) * tiling.heads;
      const int32_t headEnd = std::min(headBegin + tiling.heads, (kvHead + 1) * groupSize);
      const int32_t tokenBegin = ws_.attentionTiles[size_t(tile)];
      const int32_t tokenEnd = ws_.attentionTiles[size_t(tile) + 1];
      const BatchSequence& s = batch.sequences[size_t(ws_.tokenSequence[size_t(tokenBegin)])];
      int count = 0;
      for (int32_t t = tokenBegin; t < tokenEnd; ++t) {
        const int32_t position = ws_.tokenPosition[size_t(t)];
        // A sliding-window layer sees positions p with position - p < window (llama.cpp's
        // LLAMA_SWA_TYPE_STANDARD mask).
        const int32_t first = sliding ? std::max(0, position - c.slidingWindow + 1) : 0;
        for (int32_t head = headBegin; head < headEnd; ++head)
          queries[count++] = {
              ws_.q.data() + t * qDim + int64_t(head) * c.headDim, first, position,
              ws_.attention.data() + t * c.attnOutDim() + int64_t(head) * c.valueDim};
      }
      // llama.cpp's summation order for a one-token step, chosen by the sequence's own token count,
      // so a sequence computes the same whatever else shares the step.
      const ops::StepKind stepKind =
          s.tokenCount == 1 ? ops::StepKind::OneToken : ops::StepKind::SeveralTokens;
      ops::attendHeads({queries, size_t(count)}, kv, s.blockTable, kvHead, scoreScale, stepKind,
                       scratch);
    }
  });

  matmul(pool_, w.wo, ws_.attention.data(), tokens, ws_.blockOut.data(), ws_.matmul);
  if (c.postNorms)
    rmsNormRows(ws_.blockOut.data(), w.postAttnNorm, tokens, embd, ws_.blockOut.data());
  addInPlace(ws_.hidden.data(), ws_.blockOut.data(), tokens * embd);
}

void CpuBackend::feedForwardBlock(int32_t layer, int64_t tokens) {
  const CpuLayerWeights& w = weights_.layers[size_t(layer)];
  const model::ModelConfig& c = config_;
  const int64_t embd = c.embeddingDim, ff = c.ffnDim;

  rmsNormRows(ws_.hidden.data(), w.ffnNorm, tokens, embd, ws_.normed.data());
  matmul(pool_, w.ffnGate, ws_.normed.data(), tokens, ws_.gate.data(), ws_.matmul);
  matmul(pool_, w.ffnUp, ws_.normed.data(), tokens, ws_.up.data(), ws_.matmul);
  const bool gelu = c.ffnActivation == model::FfnActivation::GeluTanhGlu;
  pool_.parallelFor(tokens, 1, [&](int64_t begin, int64_t end, int) {
    for (int64_t t = begin; t < end; ++t) {  // row by row: the activations chunk each row
      float* gate = ws_.gate.data() + t * ff;
      const float* up = ws_.up.data() + t * ff;
      if (gelu)
        ops::geluTanhGluRow(gate, up, gate, ff);
      else
        ops::siluGluRow(gate, up, gate, ff);
    }
  });
  matmul(pool_, w.ffnDown, ws_.gate.data(), tokens, ws_.blockOut.data(), ws_.matmul);
  if (c.postNorms)
    rmsNormRows(ws_.blockOut.data(), w.postFfnNorm, tokens, embd, ws_.blockOut.data());
  addInPlace(ws_.hidden.data(), ws_.blockOut.data(), tokens * embd);
}

}  // namespace ember::cpu
