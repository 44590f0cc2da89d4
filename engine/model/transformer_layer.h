#pragma once
// The decoder layer of every supported architecture, written once over the operations a backend
// provides (LayerOps). The ModelConfig's switches choose the steps; a backend only says how to
// run each step on its own buffers, so an architecture is its config rules plus, at most, a new
// step here that every backend then implements.
//
//   in   = preNorms ? rmsnorm(x, attn_norm) : x
//   q, k, v = proj(in) [+ bias];  q, k = qk_norm(q, k);  q, k = rope(q, k)  (unless NoPE)
//   h    = x + residual_scale * [post_norm](attn_output(attention(q, k, v)) [+ bias])
//   in   = preNorms ? rmsnorm(h, ffn_norm) : h
//   out  = h + residual_scale * [post_norm](ffn_down(act(ffn_gate(in) [+ bias]) *
//                                                     (ffn_up(in) [+ bias])) [+ bias])
//
// In a mixture-of-experts layer the FFN is the router's choice of experts instead:
//   p    = gating(ffn_gate_inp(in))  over n_expert;  keep the top k (ranked)  [/ their sum]
//   out  = h + sum over the kept e, in rank order, of p_e * down_e(act(gate_e(in)) * up_e(in))
//
// T below is the number of tokens in the step.
#include <cstdint>
#include <span>

#include "model/model_config.h"

namespace ember::model {

// The activation buffers a layer reads and writes; each backend maps them onto its workspace.
enum class Activation : uint8_t {
  Hidden,      // (T, n_embd) the residual stream
  Normed,      // (T, n_embd) the normed input of the current block
  Q,           // (T, n_head, head_dim)
  K,           // (T, n_kv_head, head_dim)
  V,           // (T, n_kv_head, value_dim)
  Attention,   // (T, n_head, value_dim) the attention output, input of attn_output
  BlockOut,    // (T, n_embd) output of attn_output or ffn_down
  PostNormed,  // (T, n_embd) BlockOut after its post-norm (a backend may alias it to BlockOut)
  Gate,        // (T, n_ff)
  Up,          // (T, n_ff)
  Activated,   // (T, n_ff) act(Gate) * Up (a backend may alias it to Gate)
};

// A layer's tensors by role (the fields of model::LayerWeights).
enum class LayerTensor : uint8_t {
  AttnNorm, Wq, Wk, Wv, Bq, Bk, Bv, QNorm, KNorm, Wo, Bo, PostAttnNorm,
  FfnNorm, FfnGate, FfnUp, FfnDown, PostFfnNorm, BGate, BUp, BDown,
};

// How one layer attends (causal, over the sequence's KV cache).
struct AttentionStep {
  float queryScale = 1.0f;  // multiplies q before the scores (gemma, phi3: llama.cpp scales Qcur)
  float scoreScale = 1.0f;  // multiplies q.k
  float softcap = 0.0f;     // scores = cap * tanh(scores / cap) when > 0, before scoreScale
  int32_t window = 0;       // > 0: a query sees only the last `window` positions (itself included)
  bool sinks = false;       // each head's attn_sinks logit joins its softmax (gpt-oss)
};

class LayerOps {
 public:
  virtual ~LayerOps() = default;

  // Whether the layer's tensor is present (optional biases, norms of some architectures).
  virtual bool has(int32_t layer, LayerTensor tensor) const = 0;
  // y (T, rows) = x (T, cols) W^T for the layer's matrix w.
  virtual void project(int32_t layer, LayerTensor w, Activation x, Activation y) = 0;
  // One matrix of projectShared: y = x W^T for the layer's matrix w.
  struct Projection {
    LayerTensor w;
    Activation y;
  };
  // The projections of one input (Q, K and V; gate and up), the outputs distinct buffers other
  // than x: a backend may run them as one product that prepares x once. By default, project
  // each in turn.
  virtual void projectShared(int32_t layer, Activation x, std::span<const Projection> outputs) {
    for (const Projection& p : outputs) project(layer, p.w, x, p.y);
  }
  // y (T, width) += bias (width).
  virtual void addBias(int32_t layer, LayerTensor bias, Activation y) = 0;
  // y = rmsnorm(x) * weight over rows of `width` floats (x holds T * (its width / width) rows);
  // y may be x.
  virtual void rmsNorm(int32_t layer, LayerTensor weight, Activation x, int32_t width,
                       Activation y) = 0;
  // Rotates the heads of x (T, heads, head_dim) by each token's position with the layer's RoPE.
  virtual void rope(int32_t layer, Activation x, int32_t heads) = 0;
  // K and V of each token into the layer's KV cache at the token's position.
  virtual void writeKv(int32_t layer) = 0;
  // Attention = attention(Q, the layer's cached keys and values).
  virtual void attention(int32_t layer, const AttentionStep& step) = 0;
  // Called in the last layer once every token's keys and values are in the cache: from here on
  // only the rows of the tokens whose logits are wanted are read, so a backend may drop the
  // others (and skip the last layer's attention and feed-forward work for them). Optional.
  virtual void keepOutputRowsOnly() {}
  // Activated = act(Gate) * Up.
  virtual void gatedActivation(FfnActivation activation) = 0;
  // y (T, n_embd) = the mixture of experts of the layer over x (T, n_embd), as the header
  // describes: router, gating, top-k (config.expertUsedCount), optional renormalisation, and
  // each token through only the experts chosen for it.
  virtual void expertFeedForward(int32_t layer, Activation x, Activation y) = 0;
  // x *= factor.
  virtual void scale(Activation x, float factor) = 0;
  // Hidden += delta.
  virtual void addResidual(Activation delta) = 0;
  // Hidden += delta, then y = rmsnorm(Hidden) * weight of `layer`: a fused kernel where the
  // backend has one, else the two steps.
  virtual void addResidualThenNorm(Activation delta, int32_t layer, LayerTensor weight,
                                   Activation y, int32_t width) {
    addResidual(delta);
    rmsNorm(layer, weight, Activation::Hidden, width, y);
  }
};

// Runs every layer of the model over Hidden (the scaled token embeddings on entry, the final
// hidden states on return, before the output norm).
void runTransformerLayers(const ModelConfig& config, LayerOps& ops);

// The attention settings of one layer.
AttentionStep attentionStep(const ModelConfig& config, int32_t layer);

}  // namespace ember::model
