#pragma once
// The hyper-parameters of a decoder-only transformer, read from GGUF metadata once per model and
// described per architecture (architecture_rules.cpp). Everything the forward pass needs to know
// about the model's shape and numerics lives here; the layer itself (transformer_layer.h) reads
// only the switches below (norm placement, activation, QK-norm, scales, soft-caps, windows, NoPE),
// never the architecture's name.
#include <cstdint>
#include <string>
#include <vector>

#include "ember/error.h"

namespace ember::gguf {
class GgufFile;
}

namespace ember::model {

// A model file whose metadata or tensors do not describe a model we can run. The message names
// the file and the key or tensor at fault.
class ModelConfigError : public ember::Error {
 public:
  using ember::Error::Error;
};

enum class Architecture : uint8_t {
  Llama, Mistral3, Qwen2, Qwen3, Qwen3Moe, GptOss, Gemma2, Gemma3, Granite, Olmo2, Phi3, SmolLM3,
};

// What RMSNorm over q and k before RoPE normalizes, if anything.
enum class QkNormScope : uint8_t {
  None,
  PerHead,  // each head of head_dim on its own, weights (head_dim) (qwen3, gemma3)
  Whole,    // the whole q (n_head * head_dim) and k (n_kv_head * head_dim) rows (olmo2)
};

// How RoPE pairs the elements of a head: Normal rotates (x[2i], x[2i+1]) (llama.cpp's
// LLAMA_ROPE_TYPE_NORM, used by `llama`); Neox rotates (x[i], x[i + dims/2]) (LLAMA_ROPE_TYPE_NEOX,
// used by `qwen2` and `gemma3`).
enum class RopeStyle : uint8_t { Normal, Neox };

// The gated feed-forward: down(act(gate(x)) * up(x)).
enum class FfnActivation : uint8_t {
  SiluGlu,      // SwiGLU: silu(gate) * up (llama, qwen2)
  GeluTanhGlu,  // GeGLU with the tanh approximation of GELU (gemma3)
  // gpt-oss's clamped SwiGLU: g = min(gate, 7), u = clamp(up, -7, 7),
  // g * sigmoid(1.702 g) * (u + 1) (llama.cpp's swiglu_oai with its fixed alpha and limit)
  SwigluOai,
};

// How a mixture-of-experts router turns its logits (one per expert) into the weights of the
// experts it selects.
enum class ExpertGating : uint8_t {
  Softmax,  // softmax over all experts, then the top-k of those probabilities (qwen3moe)
  SoftmaxOfChosen,  // the top-k of the logits, then a softmax over those k (gpt-oss)
};

// Per-layer attention settings (they differ between sliding-window and global layers).
struct LayerAttention {
  bool slidingWindow = false;  // attends to the last `window` positions only
  bool rope = true;            // false: no position embedding on this layer (smollm3's NoPE layers)
  float ropeFreqBase = 10000.0f;
  float ropeFreqScale = 1.0f;  // positions are multiplied by this (linear scaling = 1/factor)
};

struct ModelConfig {
  std::string sourceFile;        // the GGUF path, for messages
  std::string architectureName;  // general.architecture, e.g. "llama"
  Architecture architecture = Architecture::Llama;
  std::string modelName;  // general.name when present

  int32_t layerCount = 0;     // <arch>.block_count
  int32_t embeddingDim = 0;   // <arch>.embedding_length (n_embd)
  int32_t ffnDim = 0;         // <arch>.feed_forward_length (n_ff)
  int32_t headCount = 0;      // <arch>.attention.head_count
  int32_t kvHeadCount = 0;    // <arch>.attention.head_count_kv (default: head_count)
  int32_t headDim = 0;        // <arch>.attention.key_length (default: n_embd / n_head)
  int32_t valueDim = 0;       // <arch>.attention.value_length (default: headDim)
  int32_t contextLength = 0;  // <arch>.context_length (trained context)
  int32_t vocabSize = 0;      // rows of token_embd.weight (checked against the tokenizer)
  float rmsNormEps = 1e-5f;   // <arch>.attention.layer_norm_rms_epsilon

  RopeStyle ropeStyle = RopeStyle::Normal;
  // YaRN (rope.scaling.type = yarn): positions interpolated by the layer's ropeFreqScale in the
  // low frequencies and extrapolated in the high ones, blended over the dims between the
  // correction dims of yarnBetaFast and yarnBetaSlow rotations in ropeOriginalContext positions.
  float ropeExtFactor = 0.0f;  // 0: no YaRN blend
  float ropeAttnFactor = 1.0f;  // multiplies cos and sin (rope.scaling.attn_factor, YaRN's mscale)
  float yarnBetaFast = 32.0f, yarnBetaSlow = 1.0f;
  int32_t ropeOriginalContext = 0;  // rope.scaling.original_context_length (default: context)
  // The tensor of per-frequency divisors: rope_freqs.weight (Llama 3.1), or LongRoPE's
  // rope_factors_short.weight (phi3); empty for none.
  std::string ropeFactorsTensor;
  // LongRoPE's rope_factors_long.weight (empty: none): used instead of ropeFactorsTensor when a
  // sequence's context exceeds ropeOriginalContext (llama.cpp's get_rope_factors).
  std::string ropeLongFactorsTensor;
  int32_t ropeDims = 0;  // <arch>.rope.dimension_count (default: headDim); dims past it are kept
  bool ropeFreqFactors = false;  // ropeFactorsTensor divides each frequency
  std::vector<LayerAttention> layers;  // (layerCount)
  int32_t slidingWindow = 0;  // positions a sliding-window layer sees (itself included); 0: none

  float attentionScale = 0.0f;  // multiplies q·k before the softmax
  // Apply attentionScale to the queries before the attention instead of to the scores (gemma3,
  // as llama.cpp does; it rounds differently once q is converted to fp16).
  bool scaleQueries = false;
  float embeddingScale = 1.0f;     // multiplies the token embeddings (gemma: sqrt(n_embd))
  float finalLogitSoftcap = 0.0f;  // logits = cap * tanh(logits / cap) when > 0
  float attentionSoftcap = 0.0f;   // scores = cap * tanh(scores / cap) before the softmax (gemma2)
  float residualScale = 1.0f;      // multiplies each block's output before the residual (granite)
  float logitScale = 1.0f;         // multiplies the logits (granite: 1 / logit_scale)
  bool attentionBias = false;      // q/k/v projections must have biases (qwen2; optional elsewhere)
  // ffn_gate/ffn_up/ffn_down biases are bound when the file has them (llama, mistral3, granite, as
  // llama.cpp loads them); elsewhere a file that has one is refused, as llama.cpp refuses it.
  bool ffnBiases = false;
  bool qkNorm = false;             // RMSNorm over q and k before RoPE (qwen3, gemma3, olmo2)
  QkNormScope qkNormScope = QkNormScope::None;
  bool preNorms = true;    // RMSNorm before the attention and the FFN (all but olmo2)
  bool postNorms = false;  // RMSNorm on the attention and FFN outputs before the residual
  // ffn_up holds gate and up stacked ([n_embd, 2 * n_ff], gate first) and there is no ffn_gate
  // (phi3).
  bool fusedGateUp = false;
  FfnActivation ffnActivation = FfnActivation::SiluGlu;

  // Mixture of experts (expertCount > 0): the FFN is a router (ffn_gate_inp) choosing
  // expertUsedCount of expertCount experts per token, each a gated FFN of width expertFfnDim
  // (ffn_gate_exps / ffn_up_exps / ffn_down_exps); the block's output is the sum of the chosen
  // experts' outputs times their weights, in the order of the router's ranking.
  int32_t expertCount = 0;      // <arch>.expert_count
  int32_t expertUsedCount = 0;  // <arch>.expert_used_count (the k of top-k)
  int32_t expertFfnDim = 0;     // <arch>.expert_feed_forward_length (default n_ff / k)
  ExpertGating expertGating = ExpertGating::Softmax;
  bool expertWeightsNorm = false;   // the k selected weights are divided by their sum
  float expertWeightsScale = 1.0f;  // then multiplied by this
  // The router and every expert matrix have biases (gpt-oss): ffn_gate_inp.bias and
  // ffn_{gate,up,down}_exps.bias, added to each product before what follows it.
  bool expertBiases = false;
  bool mixtureOfExperts() const { return expertCount > 0; }

  // Attention sinks (gpt-oss): a learned logit per head (attn_sinks) that joins each query's
  // softmax as one more score with no value, taking its share of the attention weight.
  bool attentionSinks = false;
  bool attentionOutputBias = false;  // attn_output.bias is required (gpt-oss; optional elsewhere)
  // The name of the norm before the FFN: "ffn_norm", or gpt-oss's "post_attention_norm".
  std::string ffnNormName = "ffn_norm";

  int32_t qDim() const { return headCount * headDim; }         // width of the q projection
  int32_t kvDim() const { return kvHeadCount * headDim; }      // width of the k projection
  int32_t vDim() const { return kvHeadCount * valueDim; }      // width of the v projection
  int32_t attnOutDim() const { return headCount * valueDim; }  // input width of attn_output
  // One line: architecture, layers, dims, heads, context length.
  std::string describe() const;
};

// YaRN's correction dims for `dims` rotated dims (ggml_rope_yarn_corr_dims): the dims whose
// wavelengths turn betaFast and betaSlow times within originalContext positions. Every backend's
// YaRN ramp runs between them.
void yarnCorrectionDims(int32_t dims, int32_t originalContext, float freqBase, float betaFast,
                        float betaSlow, float out[2]);

// Reads and validates the configuration; throws ModelConfigError naming the file and the
// missing or bad key (or tensor, for the vocabulary size).
ModelConfig readModelConfig(const gguf::GgufFile& file);

}  // namespace ember::model
