#include "model/model_weights.h"

#include <string>

namespace ember::model {
namespace {

std::string shapeText(const std::vector<uint64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

class Binder {
 public:
  Binder(const gguf::GgufFile& file) : file_(file) {}

  // The tensor `name` with ggml shape `shape` (trailing 1s in the file are ignored); null when
  // absent and optional.
  const gguf::TensorInfo* bind(const std::string& name, std::vector<uint64_t> shape,
                               bool required = true) const {
    const gguf::TensorInfo* t = file_.findTensor(name);
    if (!t) {
      if (!required) return nullptr;
      throw ModelConfigError(file_.path() + ": missing tensor '" + name + "'");
    }
    std::vector<uint64_t> actual = t->shape;
    while (actual.size() > shape.size() && actual.back() == 1) actual.pop_back();
    if (actual != shape)
      throw ModelConfigError(file_.path() + ": tensor '" + name + "' has shape " +
                             shapeText(t->shape) + ", expected " + shapeText(shape) +
                             " from the model's metadata");
    return t;
  }

 private:
  const gguf::GgufFile& file_;
};

// The q, k and v projections: separate attn_q/attn_k/attn_v, or the row parts of a fused
// attn_qkv ([n_embd, q + k + v], in that order, as llama.cpp splits it).
void bindAttentionProjections(const Binder& b, const gguf::GgufFile& file, const std::string& p,
                              const ModelConfig& c, LayerWeights& l) {
  const uint64_t embd = uint64_t(c.embeddingDim);
  const uint64_t qDim = uint64_t(c.qDim()), kDim = uint64_t(c.kvDim()), vDim = uint64_t(c.vDim());
  if (file.findTensor(p + "attn_qkv.weight")) {
    const gguf::TensorInfo* qkv = b.bind(p + "attn_qkv.weight", {embd, qDim + kDim + vDim});
    l.wq = {qkv, 0, qDim};
    l.wk = {qkv, qDim, kDim};
    l.wv = {qkv, qDim + kDim, vDim};
    if (file.findTensor(p + "attn_qkv.bias"))
      throw ModelConfigError(file.path() + ": tensor '" + p +
                             "attn_qkv.bias' (a fused q/k/v bias) is not supported");
  } else {
    l.wq = {b.bind(p + "attn_q.weight", {embd, qDim}), 0, qDim};
    l.wk = {b.bind(p + "attn_k.weight", {embd, kDim}), 0, kDim};
    l.wv = {b.bind(p + "attn_v.weight", {embd, vDim}), 0, vDim};
  }
  // Biases: required where the architecture has them, bound wherever a file carries them.
  l.bq = b.bind(p + "attn_q.bias", {qDim}, c.attentionBias);
  l.bk = b.bind(p + "attn_k.bias", {kDim}, c.attentionBias);
  l.bv = b.bind(p + "attn_v.bias", {vDim}, c.attentionBias);
  const int biases = int(l.bq != nullptr) + int(l.bk != nullptr) + int(l.bv != nullptr);
  if (biases != 0 && biases != 3)
    throw ModelConfigError(file.path() + ": layer '" + p +
                           "' has some but not all of the attn_q/attn_k/attn_v biases");
}

// The router and the stacked experts of a mixture-of-experts layer.
void bindExperts(const Binder& b, const std::string& p, const ModelConfig& c, LayerWeights& l) {
  const uint64_t embd = uint64_t(c.embeddingDim), ffExp = uint64_t(c.expertFfnDim);
  const uint64_t experts = uint64_t(c.expertCount);
  l.ffnGateInp = b.bind(p + "ffn_gate_inp.weight", {embd, experts});
  l.ffnGateExps = b.bind(p + "ffn_gate_exps.weight", {embd, ffExp, experts});
  l.ffnUpExps = b.bind(p + "ffn_up_exps.weight", {embd, ffExp, experts});
  l.ffnDownExps = b.bind(p + "ffn_down_exps.weight", {ffExp, embd, experts});
  if (c.expertBiases) {
    l.ffnGateInpBias = b.bind(p + "ffn_gate_inp.bias", {experts});
    l.ffnGateExpsBias = b.bind(p + "ffn_gate_exps.bias", {ffExp, experts});
    l.ffnUpExpsBias = b.bind(p + "ffn_up_exps.bias", {ffExp, experts});
    l.ffnDownExpsBias = b.bind(p + "ffn_down_exps.bias", {embd, experts});
  }
}

}  // namespace

ModelWeights bindModelWeights(const gguf::GgufFile& file, const ModelConfig& c) {
  const Binder b(file);
  const uint64_t embd = uint64_t(c.embeddingDim), ff = uint64_t(c.ffnDim);
  const uint64_t qDim = uint64_t(c.qDim()), kDim = uint64_t(c.kvDim());
  const uint64_t vocab = uint64_t(c.vocabSize), headDim = uint64_t(c.headDim);

  ModelWeights w;
  w.tokenEmbedding = b.bind("token_embd.weight", {embd, vocab});
  w.outputNorm = b.bind("output_norm.weight", {embd});
  w.output = b.bind("output.weight", {embd, vocab}, /*required=*/false);
  w.tiedOutput = w.output == nullptr;
  if (w.tiedOutput) w.output = w.tokenEmbedding;
  if (c.ropeFreqFactors) w.ropeFreqs = b.bind(c.ropeFactorsTensor, {uint64_t(c.ropeDims / 2)});
  if (!c.ropeLongFactorsTensor.empty())
    w.ropeFreqsLong = b.bind(c.ropeLongFactorsTensor, {uint64_t(c.ropeDims / 2)});

  w.layers.resize(size_t(c.layerCount));
  for (int32_t il = 0; il < c.layerCount; ++il) {
    const std::string p = "blk." + std::to_string(il) + ".";
    LayerWeights& l = w.layers[size_t(il)];
    if (c.preNorms) l.attnNorm = b.bind(p + "attn_norm.weight", {embd});
    bindAttentionProjections(b, file, p, c, l);
    l.wo = b.bind(p + "attn_output.weight", {uint64_t(c.attnOutDim()), embd});
    l.bo = b.bind(p + "attn_output.bias", {embd}, c.attentionOutputBias);
    if (c.attentionSinks) l.attnSinks = b.bind(p + "attn_sinks.weight", {uint64_t(c.headCount)});
    if (c.qkNormScope == QkNormScope::PerHead) {
      l.qNorm = b.bind(p + "attn_q_norm.weight", {headDim});
      l.kNorm = b.bind(p + "attn_k_norm.weight", {headDim});
    } else if (c.qkNormScope == QkNormScope::Whole) {
      l.qNorm = b.bind(p + "attn_q_norm.weight", {qDim});
      l.kNorm = b.bind(p + "attn_k_norm.weight", {kDim});
    }
    if (c.preNorms) l.ffnNorm = b.bind(p + c.ffnNormName + ".weight", {embd});
    if (c.mixtureOfExperts()) {
      bindExperts(b, p, c, l);
    } else if (c.fusedGateUp) {
      const gguf::TensorInfo* gateUp = b.bind(p + "ffn_up.weight", {embd, 2 * ff});
      l.ffnGate = {gateUp, 0, ff};
      l.ffnUp = {gateUp, ff, ff};
    } else {
      l.ffnGate = {b.bind(p + "ffn_gate.weight", {embd, ff}), 0, ff};
      l.ffnUp = {b.bind(p + "ffn_up.weight", {embd, ff}), 0, ff};
    }
    if (!c.mixtureOfExperts()) l.ffnDown = b.bind(p + "ffn_down.weight", {ff, embd});
    if (c.postNorms) {
      l.postAttnNorm = b.bind(p + "post_attention_norm.weight", {embd});
      l.postFfnNorm = b.bind(p + "post_ffw_norm.weight", {embd});
    }
    if (c.ffnBiases) {
      l.ffnGateBias = b.bind(p + "ffn_gate.bias", {ff}, /*required=*/false);
      l.ffnUpBias = b.bind(p + "ffn_up.bias", {ff}, /*required=*/false);
      l.ffnDownBias = b.bind(p + "ffn_down.bias", {embd}, /*required=*/false);
    } else {
      for (const char* bias : {"ffn_gate.bias", "ffn_up.bias", "ffn_down.bias"})
        if (file.findTensor(p + bias))
          throw ModelConfigError(file.path() + ": tensor '" + p + bias +
                                 "' (a feed-forward bias) is not supported for " +
                                 c.architectureName + " (llama.cpp does not load one either)");
    }
    if (!c.expertBiases)  // the router's and experts' biases (gpt-oss) elsewhere
      for (const char* bias : {"ffn_gate_inp.bias", "ffn_gate_exps.bias", "ffn_up_exps.bias",
                               "ffn_down_exps.bias"})
        if (file.findTensor(p + bias))
          throw ModelConfigError(file.path() + ": tensor '" + p + bias +
                                 "' (an expert bias) is not supported for " + c.architectureName);
  }
  return w;
}

}  // namespace ember::model
