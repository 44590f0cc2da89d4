// The CUDA forward pass proper: the model's layers (model/transformer_layer.h) over the CUDA
// implementation of the layer operations, each a straight call of one kernel of
// kernels/include/ember/kernels/kernels.h, then the logits:
//
//   x      = embed(tokens) * embedding_scale
//   x      = layers(x)                                        (model/transformer_layer.h)
//   logits = [softcap]([* logit_scale] output(rmsnorm(x, output_norm)))  for the requested rows
//
// Each residual add is fused with the norm that follows it (addRmsNorm). Everything here only
// enqueues work on stream_, so that a decode step can be captured into a CUDA graph.
#include "backend/cuda/cuda_backend.h"

#include "model/transformer_layer.h"

namespace ember::cuda {

namespace k = ember::kernels;
using model::Activation;
using model::LayerTensor;

class CudaLayerOps final : public model::LayerOps {
 public:
  CudaLayerOps(CudaBackend& backend, const StepPlan& plan, const CudaBackend::StepInputs& in)
      : b_(backend), ws_(backend.ws_), c_(backend.config_), plan_(plan), in_(in) {}

  bool has(int32_t layer, LayerTensor tensor) const override {
    if (tensor == LayerTensor::Bq || tensor == LayerTensor::Bk || tensor == LayerTensor::Bv ||
        tensor == LayerTensor::Bo || tensor == LayerTensor::AttnNorm ||
        tensor == LayerTensor::FfnNorm || tensor == LayerTensor::QNorm ||
        tensor == LayerTensor::KNorm || tensor == LayerTensor::PostAttnNorm ||
        tensor == LayerTensor::PostFfnNorm || tensor == LayerTensor::BGate ||
        tensor == LayerTensor::BUp || tensor == LayerTensor::BDown)
      return vector(layer, tensor) != nullptr;
    return true;
  }

  void project(int32_t layer, LayerTensor w, Activation x, Activation y) override {
    b_.site_.layer = layer;
    b_.project(matrix(layer, w), buffer(x), plan_.tokens, buffer(y));
  }

  void addBias(int32_t layer, LayerTensor bias, Activation y) override {
    b_.check(k::addBias(buffer(y), vector(layer, bias), plan_.tokens, width(y), b_.stream_),
             "addBias");
  }

  void rmsNorm(int32_t layer, LayerTensor weight, Activation x, int32_t width,
               Activation y) override {
    if (x == y) {  // QK-norm, in place: per head, or the whole row as one "head" (olmo2)
      b_.check(k::rmsNormHeads(buffer(x), vector(layer, weight), plan_.tokens,
                               this->width(x) / width, width, c_.rmsNormEps, b_.stream_),
               "rmsNormHeads");
      return;
    }
    b_.check(k::rmsNorm(buffer(x), vector(layer, weight), plan_.tokens, width, c_.rmsNormEps,
                        buffer(y), b_.stream_),
             "rmsNorm");
  }

  void rope(int32_t layer, Activation x, int32_t heads) override {
    k::RopeSettings rope;
    rope.headDim = c_.headDim;
    rope.ropeDims = c_.ropeDims;
    rope.freqBase = c_.layers[size_t(layer)].ropeFreqBase;
    rope.freqScale = c_.layers[size_t(layer)].ropeFreqScale;
    // LongRoPE: the long factors when a sequence may run past the original context (as the CPU).
    const bool longFactors = b_.weights_.ropeFreqsLong &&
                             b_.kvShape_.contextLength > c_.ropeOriginalContext;
    rope.freqFactors = longFactors ? b_.weights_.ropeFreqsLong : b_.weights_.ropeFreqs;
    rope.neox = c_.ropeStyle == model::RopeStyle::Neox;
    rope.extFactor = c_.ropeExtFactor;
    rope.attnFactor = c_.ropeAttnFactor;
    if (rope.extFactor != 0.0f)  // as the CPU backend's rope variants: from the layer's base
      model::yarnCorrectionDims(rope.ropeDims, c_.ropeOriginalContext, rope.freqBase,
                                c_.yarnBetaFast, c_.yarnBetaSlow, rope.corrDims);
    b_.check(k::rope(buffer(x), plan_.tokens, heads, in_.tokenPosition, rope, b_.stream_), "rope");
  }

  void writeKv(int32_t layer) override {
    b_.check(k::writeKvCache(ws_.k, ws_.v, in_.slotMapping, plan_.tokens, c_.kvHeadCount,
                             c_.headDim, c_.valueDim, b_.kvShape_.blockSize, b_.keyCache(layer),
                             b_.valueCache(layer), b_.stream_),
             "writeKvCache");
  }

  void attention(int32_t layer, const model::AttentionStep& step) override {
    b_.site_.layer = layer;
    k::AttentionBatch batch;
    batch.tokens = plan_.tokens;
    batch.sequences = plan_.sequences;
    batch.tokenSequence = in_.tokenSequence;
    batch.tokenPosition = in_.tokenPosition;
    batch.blockTables = in_.blockTables;
    batch.maxBlocksPerSequence = plan_.tableWidth;
    batch.maxPosition = plan_.maxPosition;
    k::AttentionShape shape = b_.attentionShape(step);
    if (step.sinks) shape.sinks = b_.weights_.layers[size_t(layer)].attnSinks;
    b_.check(k::pagedAttention(ws_.q, b_.keyCache(layer), b_.valueCache(layer), batch, shape,
                               ws_.attention, ws_.attentionScratch, ws_.attentionScratchBytes,
                               b_.stream_),
             "pagedAttention");
  }

  void gatedActivation(model::FfnActivation activation) override {
    if (activation == model::FfnActivation::SwigluOai) {  // llama.cpp's alpha and limit
      b_.check(k::swigluOai(ws_.gate, ws_.up, int64_t(plan_.tokens) * c_.ffnDim, 1.702f, 7.0f,
                            ws_.activated, b_.stream_),
               "swigluOai");
      return;
    }
    const bool gelu = activation == model::FfnActivation::GeluTanhGlu;
    b_.check(k::gatedActivation(ws_.gate, ws_.up, int64_t(plan_.tokens) * c_.ffnDim, gelu,
                                ws_.activated, b_.stream_),
             "gatedActivation");
  }

  void expertFeedForward(int32_t layer, Activation x, Activation y) override {
    b_.site_.layer = layer;
    b_.expertFeedForward(layer, buffer(x), plan_.tokens, buffer(y));
  }

  void scale(Activation x, float factor) override {
    b_.check(k::scaleInPlace(buffer(x), int64_t(plan_.tokens) * width(x), factor, b_.stream_),
             "scaleInPlace");
  }

  void addResidual(Activation delta) override {
    b_.check(k::addInPlace(ws_.hidden, buffer(delta), int64_t(plan_.tokens) * c_.embeddingDim,
                           b_.stream_),
             "addInPlace");
  }

  void addResidualThenNorm(Activation delta, int32_t layer, LayerTensor weight, Activation y,
                           int32_t width) override {
    b_.check(k::addRmsNorm(ws_.hidden, buffer(delta), vector(layer, weight), plan_.tokens, width,
                           c_.rmsNormEps, buffer(y), b_.stream_),
             "addRmsNorm");
  }

 private:
  float* buffer(Activation a) const {
    switch (a) {
      case Activation::Hidden: return ws_.hidden;
      case Activation::Normed: return ws_.normed;
      case Activation::Q: return ws_.q;
      case Activation::K: return ws_.k;
      case Activation::V: return ws_.v;
      case Activation::Attention: return ws_.attention;
      case Activation::BlockOut: return ws_.blockOut;
      case Activation::PostNormed: return ws_.postNormed;
      case Activation::Gate: return ws_.gate;
      case Activation::Up: return ws_.up;
      case Activation::Activated: return ws_.activated;
    }
    return nullptr;
  }

  int32_t width(Activation a) const {
    switch (a) {
      case Activation::Q: return c_.qDim();
      case Activation::K: return c_.kvDim();
      case Activation::V: return c_.vDim();
      case Activation::Attention: return c_.attnOutDim();
      case Activation::Gate:
      case Activation::Up:
      case Activation::Activated: return c_.ffnDim;
      default: return c_.embeddingDim;
    }
  }

  const DeviceMatrix& matrix(int32_t layer, LayerTensor t) const {
    const DeviceLayerWeights& w = b_.weights_.layers[size_t(layer)];
    switch (t) {
      case LayerTensor::Wq: return w.wq;
      case LayerTensor::Wk: return w.wk;
      case LayerTensor::Wv: return w.wv;
      case LayerTensor::Wo: return w.wo;
      case LayerTensor::FfnGate: return w.ffnGate;
      case LayerTensor::FfnUp: return w.ffnUp;
      default: return w.ffnDown;
    }
  }

  const float* vector(int32_t layer, LayerTensor t) const {
    const DeviceLayerWeights& w = b_.weights_.layers[size_t(layer)];
    switch (t) {
      case LayerTensor::AttnNorm: return w.attnNorm;
      case LayerTensor::Bq: return w.bq;
      case LayerTensor::Bk: return w.bk;
      case LayerTensor::Bv: return w.bv;
      case LayerTensor::Bo: return w.bo;
      case LayerTensor::QNorm: return w.qNorm;
      case LayerTensor::KNorm: return w.kNorm;
      case LayerTensor::PostAttnNorm: return w.postAttnNorm;
      case LayerTensor::FfnNorm: return w.ffnNorm;
      case LayerTensor::BGate: return w.bGate;
      case LayerTensor::BUp: return w.bUp;
      case LayerTensor::BDown: return w.bDown;
      default: return w.postFfnNorm;
    }
  }

  CudaBackend& b_;
  CudaWorkspace& ws_;
  const model::ModelConfig& c_;
  const StepPlan& plan_;
  const CudaBackend::StepInputs& in_;
};

kernels::AttentionShape CudaBackend::attentionShape(const model::AttentionStep& step) const {
  k::AttentionShape shape;
  shape.heads = config_.headCount;
  shape.kvHeads = config_.kvHeadCount;
  shape.headDim = config_.headDim;
  shape.valueDim = config_.valueDim;
  shape.blockSize = kvShape_.blockSize;
  // Always on the scores: where the CPU scales q first (gemma, phi3), this is the same up to
  // rounding (and exactly the same for a power-of-two scale such as Gemma 3's 1/sqrt(256)).
  // With a soft-cap, the query scale comes before the cap and the score scale after it.
  shape.softcap = step.softcap;
  if (step.softcap > 0.0f) {
    shape.scale = step.queryScale;
    shape.capScale = step.scoreScale;
  } else {
    shape.scale = step.queryScale * step.scoreScale;
  }
  shape.slidingWindow = step.window;
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
  site_.layer = -1;
  check(k::embedRows(weights_.tokenEmbedding.type, weights_.tokenEmbedding.data,
                     config_.embeddingDim, in.tokenIds, plan.tokens, config_.embeddingScale,
                     ws_.hidden, stream_),
        "embedRows");
  CudaLayerOps ops(*this, plan, in);
  model::runTransformerLayers(config_, ops);
  site_.layer = -1;
  computeLogits(plan, in);
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
  if (config_.logitScale != 1.0f)  // granite
    check(k::scaleInPlace(ws_.logits, int64_t(rows) * config_.vocabSize, config_.logitScale,
                          stream_),
          "scaleInPlace (logit scale)");
  if (config_.finalLogitSoftcap > 0.0f)
    check(k::softcap(ws_.logits, int64_t(rows) * config_.vocabSize, config_.finalLogitSoftcap,
                     stream_),
          "softcap");
}

}  // namespace ember::cuda
