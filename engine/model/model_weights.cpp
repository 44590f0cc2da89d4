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

}  // namespace

ModelWeights bindModelWeights(const gguf::GgufFile& file, const ModelConfig& c) {
  const Binder b(file);
  const uint64_t embd = uint64_t(c.embeddingDim), ff = uint64_t(c.ffnDim);
  const uint64_t qDim = uint64_t(c.qDim()), kDim = uint64_t(c.kvDim()), vDim = uint64_t(c.vDim());
  const uint64_t vocab = uint64_t(c.vocabSize), headDim = uint64_t(c.headDim);

  ModelWeights w;
  w.tokenEmbedding = b.bind("token_embd.weight", {embd, vocab});
  w.outputNorm = b.bind("output_norm.weight", {embd});
  w.output = b.bind("output.weight", {embd, vocab}, /*required=*/false);
  w.tiedOutput = w.output == nullptr;
  if (w.tiedOutput) w.output = w.tokenEmbedding;
  if (c.ropeFreqFactors) w.ropeFreqs = b.bind("rope_freqs.weight", {uint64_t(c.ropeDims / 2)});

  w.layers.resize(size_t(c.layerCount));
  for (int32_t il = 0; il < c.layerCount; ++il) {
    const std::string p = "blk." + std::to_string(il) + ".";
    LayerWeights& l = w.layers[size_t(il)];
    l.attnNorm = b.bind(p + "attn_norm.weight", {embd});
    l.wq = b.bind(p + "attn_q.weight", {embd, qDim});
    l.wk = b.bind(p + "attn_k.weight", {embd, kDim});
    l.wv = b.bind(p + "attn_v.weight", {embd, vDim});
    l.wo = b.bind(p + "attn_output.weight", {uint64_t(c.attnOutDim()), embd});
    if (c.attentionBias) {
      l.bq = b.bind(p + "attn_q.bias", {qDim});
      l.bk = b.bind(p + "attn_k.bias", {kDim});
      l.bv = b.bind(p + "attn_v.bias", {vDim});
    }
    if (c.qkNorm) {
      l.qNorm = b.bind(p + "attn_q_norm.weight", {headDim});
      l.kNorm = b.bind(p + "attn_k_norm.weight", {headDim});
    }
    l.ffnNorm = b.bind(p + "ffn_norm.weight", {embd});
    l.ffnGate = b.bind(p + "ffn_gate.weight", {embd, ff});
    l.ffnUp = b.bind(p + "ffn_up.weight", {embd, ff});
    l.ffnDown = b.bind(p + "ffn_down.weight", {ff, embd});
    if (c.postNorms) {
      l.postAttnNorm = b.bind(p + "post_attention_norm.weight", {embd});
      l.postFfnNorm = b.bind(p + "post_ffw_norm.weight", {embd});
    }
  }
  return w;
}

}  // namespace ember::model
