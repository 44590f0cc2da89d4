// The CUDA forward pass proper, as backend/cpu/cpu_backend_layer.cpp computes it on the CPU:
//
//   x    = embed(tokens) * embedding_scale
//   h    = x + [post_norm](attn_output(attention(rope(qk_norm(q)), rope(qk_norm(k)), v)))
//            where q, k, v = proj(rmsnorm(x, attn_norm)) [+ bias]
//   out  = h + [post_norm](ffn_down(act(ffn_gate(n)) * ffn_up(n)))    n = rmsnorm(h, ffn_norm)
//   logits = [softcap](output(rmsnorm(out, output_norm)))   for the requested rows only
//
// Each residual add is fused with the norm that follows it (addRmsNorm). Everything here only
// enqueues work on stream_, so that a decode step can be captured into a CUDA graph.
#include "backend/cuda/cuda_backend.h"

namespace ember::cuda {

namespace k = ember::kernels;

kernels::AttentionShape CudaBackend::attentionShape(int32_t layer) const {
  k::AttentionShape shape;
  shape.heads = config_.headCount;
  shape.kvHeads = config_.kvHeadCount;
  shape.headDim = config_.headDim;
  shape.valueDim = config_.valueDim;
  shape.blockSize = kvShape_.blockSize;
  // Always on the scores: with scaleQueries (gemma3) the CPU scales q instead, which is the same
  // up to rounding (and exactly the same for Gemma 3's power-of-two scale 1/sqrt(256)).
  shape.scale = config_.attentionScale;
  shape.slidingWindow =
      config_.layers[size_t(layer)].slidingWindow ? config_.slidingWindow : 0;
  return shape;
}

void CudaBackend::project(const DeviceMatrix& w, const float* x, int32_t tokens, float* y) {
  if (tokens <= k::kMaxMatVecBatch) {
    check(k::quantMatVec(w.type, w.data, w.rows, w.cols, x, tokens, y, stream_), "quantMatVec");
    return;
  }
  // Prompt chunks and large batches: fp16 copies of both operands, fp32 accumulation in cuBLAS.
  check(k::floatToHalf(x, int64_t(tokens) * w.cols, ws_.inputHalf, stream_), "floatToHalf");
  check(k::dequantizeToHalf(w.type, w.data, w.rows, w.cols, ws_.weightHalf, stream_),
        "dequantizeToHalf");
  checkCublas(k::halfGemm(cublas_, ws_.weightHalf, w.rows, w.cols, ws_.inputHalf, tokens, y),
              site_, "halfGemm");
}

void CudaBackend::runModel(const StepPlan& plan, const StepInputs& in) {
  const int32_t T = plan.tokens, embd = config_.embeddingDim;
  site_.layer = -1;
  check(k::embedRows(weights_.tokenEmbedding.type, weights_.tokenEmbedding.data, embd,
                     in.tokenIds, T, config_.embeddingScale, ws_.hidden, stream_),
        "embedRows");
  check(k::rmsNorm(ws_.hidden, weights_.layers[0].attnNorm, T, embd, config_.rmsNormEps,
                   ws_.normed, stream_),
        "rmsNorm");
  for (int32_t il = 0; il < config_.layerCount; ++il) {
    site_.layer = il;
    attentionBlock(il, plan, in);
    feedForwardBlock(il, T);
  }
  site_.layer = -1;
  computeLogits(plan, in);
}

// In: normed = rmsnorm(hidden, attn_norm). Out: hidden += attention output, normed = its ffn norm.
void CudaBackend::attentionBlock(int32_t layer, const StepPlan& plan, const StepInputs& in) {
  const DeviceLayerWeights& w = weights_.layers[size_t(layer)];
  const model::ModelConfig& c = config_;
  const int32_t T = plan.tokens, embd = c.embeddingDim;

  project(w.wq, ws_.normed, T, ws_.q);
  project(w.wk, ws_.normed, T, ws_.k);
  project(w.wv, ws_.normed, T, ws_.v);
  if (w.bq) check(k::addBias(ws_.q, w.bq, T, c.qDim(), stream_), "addBias (q)");
  if (w.bk) check(k::addBias(ws_.k, w.bk, T, c.kvDim(), stream_), "addBias (k)");
  if (w.bv) check(k::addBias(ws_.v, w.bv, T, c.vDim(), stream_), "addBias (v)");
  if (c.qkNorm) {
    check(k::rmsNormHeads(ws_.q, w.qNorm, T, c.headCount, c.headDim, c.rmsNormEps, stream_),
          "rmsNormHeads (q)");
    check(k::rmsNormHeads(ws_.k, w.kNorm, T, c.kvHeadCount, c.headDim, c.rmsNormEps, stream_),
          "rmsNormHeads (k)");
  }

  k::RopeSettings rope;
  rope.headDim = c.headDim;
  rope.ropeDims = c.ropeDims;
  rope.freqBase = c.layers[size_t(layer)].ropeFreqBase;
  rope.freqScale = c.layers[size_t(layer)].ropeFreqScale;
  rope.freqFactors = weights_.ropeFreqs;
  rope.neox = c.ropeStyle == model::RopeStyle::Neox;
  check(k::rope(ws_.q, T, c.headCount, in.tokenPosition, rope, stream_), "rope (q)");
  check(k::rope(ws_.k, T, c.kvHeadCount, in.tokenPosition, rope, stream_), "rope (k)");

  check(k::writeKvCache(ws_.k, ws_.v, in.slotMapping, T, c.kvHeadCount, c.headDim, c.valueDim,
                        kvShape_.blockSize, keyCache(layer), valueCache(layer), stream_),
        "writeKvCache");

  k::AttentionBatch batch;
  batch.tokens = T;
  batch.sequences = plan.sequences;
  batch.tokenSequence = in.tokenSequence;
  batch.tokenPosition = in.tokenPosition;
  batch.blockTables = in.blockTables;
  batch.maxBlocksPerSequence = plan.tableWidth;
  batch.maxPosition = plan.maxPosition;
  check(k::pagedAttention(ws_.q, keyCache(layer), valueCache(layer), batch,
                          attentionShape(layer), ws_.attention, ws_.attentionScratch,
                          ws_.attentionScratchBytes, stream_),
        "pagedAttention");

  project(w.wo, ws_.attention, T, ws_.blockOut);
  const float* delta = ws_.blockOut;
  if (c.postNorms) {
    check(k::rmsNorm(ws_.blockOut, w.postAttnNorm, T, embd, c.rmsNormEps, ws_.postNormed,
                     stream_),
          "rmsNorm (post-attention)");
    delta = ws_.postNormed;
  }
  check(k::addRmsNorm(ws_.hidden, delta, w.ffnNorm, T, embd, c.rmsNormEps, ws_.normed, stream_),
        "addRmsNorm (ffn norm)");
}

// In: normed = rmsnorm(hidden, ffn_norm). Out: hidden += feed-forward output and, unless this is
// the last layer, normed = rmsnorm(hidden, next layer's attn_norm).
void CudaBackend::feedForwardBlock(int32_t layer, int32_t tokens) {
  const DeviceLayerWeights& w = weights_.layers[size_t(layer)];
  const model::ModelConfig& c = config_;
  const int32_t embd = c.embeddingDim;

  project(w.ffnGate, ws_.normed, tokens, ws_.gate);
  project(w.ffnUp, ws_.normed, tokens, ws_.up);
  const bool gelu = c.ffnActivation == model::FfnActivation::GeluTanhGlu;
  check(k::gatedActivation(ws_.gate, ws_.up, int64_t(tokens) * c.ffnDim, gelu, ws_.activated,
                           stream_),
        "gatedActivation");
  project(w.ffnDown, ws_.activated, tokens, ws_.blockOut);
  const float* delta = ws_.blockOut;
  if (c.postNorms) {
    check(k::rmsNorm(ws_.blockOut, w.postFfnNorm, tokens, embd, c.rmsNormEps, ws_.postNormed,
                     stream_),
          "rmsNorm (post-ffn)");
    delta = ws_.postNormed;
  }
  if (layer + 1 < c.layerCount) {
    check(k::addRmsNorm(ws_.hidden, delta, weights_.layers[size_t(layer) + 1].attnNorm, tokens,
                        embd, c.rmsNormEps, ws_.normed, stream_),
          "addRmsNorm (next attention norm)");
  } else {
    check(k::addInPlace(ws_.hidden, delta, int64_t(tokens) * embd, stream_), "addInPlace");
  }
}

// Only the requested rows go through the output norm and projection (a 2048-token prompt chunk
// that ends the prompt computes one vocabulary row, not 2048).
void CudaBackend::computeLogits(const StepPlan& plan, const StepInputs& in) {
  const int32_t rows = plan.logitRows, embd = config_.embeddingDim;
  if (rows == 0) return;
  check(k::gatherRows(ws_.hidden, in.outputIndex, rows, embd, ws_.blockOut, stream_),
        "gatherRows");
  check(k::rmsNorm(ws_.blockOut, weights_.outputNorm, rows, embd, config_.rmsNormEps,
                   ws_.normed, stream_),
        "rmsNorm (output norm)");
  project(weights_.output, ws_.normed, rows, ws_.logits);
  if (config_.finalLogitSoftcap > 0.0f)
    check(k::softcap(ws_.logits, int64_t(rows) * config_.vocabSize, config_.finalLogitSoftcap,
                     stream_),
          "softcap");
}

}  // namespace ember::cuda
