#include "model/architecture_rules.h"

#include <cmath>
#include <string>
#include <vector>

#include "gguf/gguf_file.h"

namespace ember::model {
namespace {

// Which layers use the sliding window: from <arch>.attention.sliding_window_pattern when present
// (an integer period n: layer il slides unless il % n == n - 1, and with n == 0 every layer
// slides; or an array with one flag per layer), else from the default period.
std::vector<bool> slidingLayers(int32_t layerCount, const MetadataKeys& keys, int64_t period) {
  const std::string name = keys.key("attention.sliding_window_pattern");
  std::vector<bool> sliding(size_t(layerCount), false);
  if (const gguf::Value* value = keys.file().find(name);
      value && value->type == gguf::ValueType::Array) {
    const gguf::Array& flags = value->asArray();
    if (flags.size() != size_t(layerCount))
      keys.fail("metadata key '" + name + "' has " + std::to_string(flags.size()) +
                " entries for " + std::to_string(layerCount) + " layers");
    for (size_t il = 0; il < flags.size(); ++il) {
      const gguf::Value flag = flags.at(il);
      if (flag.type != gguf::ValueType::Bool && !flag.isInteger())
        keys.fail("metadata key '" + name + "' is not an array of flags");
      sliding[il] = flag.type == gguf::ValueType::Bool ? flag.asBool() : flag.asInt() != 0;
    }
    return sliding;
  }
  period = keys.optionalInt("attention.sliding_window_pattern").value_or(period);
  if (period < 0) keys.fail("metadata key '" + name + "' is negative");
  for (int32_t il = 0; il < layerCount; ++il)
    sliding[size_t(il)] = period == 0 || il % period < period - 1;
  return sliding;
}

// The sliding-window layers of an interleaved-attention model: `period` is the default pattern
// (llama.cpp's load_swa_pattern), `localBase`/`localScale` the RoPE of the local layers.
void applySlidingLayers(ModelConfig& c, const MetadataKeys& keys, int64_t window, int64_t period,
                        float localBase, float localScale) {
  if (window < 0)
    keys.fail("metadata key '" + keys.key("attention.sliding_window") + "' is negative");
  c.slidingWindow = static_cast<int32_t>(window);
  if (c.slidingWindow == 0) return;
  const std::vector<bool> sliding = slidingLayers(c.layerCount, keys, period);
  for (int32_t il = 0; il < c.layerCount; ++il) {
    if (!sliding[size_t(il)]) continue;
    c.layers[size_t(il)].slidingWindow = true;
    c.layers[size_t(il)].ropeFreqBase = localBase;
    c.layers[size_t(il)].ropeFreqScale = localScale;
  }
}

float globalRopeBase(const ModelConfig& c) { return c.layers.empty() ? 10000.0f : c.layers[0].ropeFreqBase; }
float globalRopeScale(const ModelConfig& c) { return c.layers.empty() ? 1.0f : c.layers[0].ropeFreqScale; }

// Llama 1/2/3, TinyLlama, Mistral, SmolLM: pre-norm blocks, SwiGLU, "normal" RoPE (adjacent pairs).
void applyLlama(ModelConfig& c) {
  c.ropeStyle = RopeStyle::Normal;
  c.ffnActivation = FfnActivation::SiluGlu;
  c.ffnBiases = true;  // optional (llama.cpp's models/llama.cpp, mistral3.cpp, granite.cpp)
}

// Mistral 3 family files (llama.cpp: models/mistral3.cpp): llama's block, usually with YaRN
// scaling (read with the common keys). The attention temperature scaling some carry is not
// supported and refused.
void applyMistral3(ModelConfig& c, const MetadataKeys& keys) {
  applyLlama(c);
  if (auto t = keys.optionalFloat("attention.temperature_scale"); t && *t != 0.0f)
    keys.fail("metadata key '" + keys.key("attention.temperature_scale") +
              "' (attention temperature scaling) is not supported");
}

// Qwen2 / Qwen2.5: llama's block with biases on the q, k and v projections and NEOX RoPE.
void applyQwen2(ModelConfig& c) {
  c.ropeStyle = RopeStyle::Neox;
  c.ffnActivation = FfnActivation::SiluGlu;
  c.attentionBias = true;
}

// Qwen3 (llama.cpp: models/qwen3.cpp): qwen2 without the biases, with RMSNorm over each q and k
// head before RoPE.
void applyQwen3(ModelConfig& c) {
  c.ropeStyle = RopeStyle::Neox;
  c.ffnActivation = FfnActivation::SiluGlu;
  c.qkNorm = true;
  c.qkNormScope = QkNormScope::PerHead;
}

// Qwen3-MoE (llama.cpp: models/qwen3moe.cpp and build_moe_ffn): qwen3's attention, and in place
// of the dense FFN a router over expert_count experts: softmax over all of them, the top
// expert_used_count kept, their weights always divided by their sum (llama.cpp passes
// norm_w = true for this architecture whatever expert_weights_norm says, and applies no
// expert_weights_scale, which it never reads for it). Each expert is a SwiGLU FFN of width
// expert_feed_forward_length (default: feed_forward_length / expert_used_count).
// The router's keys (expert_count, expert_used_count, expert_feed_forward_length) of a
// mixture-of-experts architecture.
void readExperts(ModelConfig& c, const MetadataKeys& keys, bool widthRequired) {
  const int64_t experts = keys.requiredInt("expert_count");
  const int64_t used = keys.requiredInt("expert_used_count");
  constexpr int64_t kMostExperts = 1024;  // llama.cpp's LLAMA_MAX_EXPERTS
  if (experts <= 0 || experts > kMostExperts)
    keys.fail("metadata key '" + keys.key("expert_count") + "' = " + std::to_string(experts) +
              " must be between 1 and " + std::to_string(kMostExperts));
  if (used <= 0 || used > experts)
    keys.fail("metadata key '" + keys.key("expert_used_count") + "' = " + std::to_string(used) +
              " must be between 1 and expert_count (" + std::to_string(experts) + ")");
  c.expertCount = int32_t(experts);
  c.expertUsedCount = int32_t(used);
  const int64_t width = widthRequired
                            ? keys.requiredInt("expert_feed_forward_length")
                            : keys.optionalInt("expert_feed_forward_length").value_or(c.ffnDim / used);
  if (width <= 0 || width > (int64_t{1} << 30))
    keys.fail("metadata key '" + keys.key("expert_feed_forward_length") + "' = " +
              std::to_string(width) + " is out of range");
  c.expertFfnDim = int32_t(width);
}

void applyQwen3Moe(ModelConfig& c, const MetadataKeys& keys) {
  applyQwen3(c);
  readExperts(c, keys, /*widthRequired=*/false);
  c.expertGating = ExpertGating::Softmax;
  c.expertWeightsNorm = true;
  c.expertWeightsScale = 1.0f;
}

// gpt-oss (llama.cpp: models/openai-moe.cpp, build_moe_ffn, the swiglu_oai op): pre-norm blocks
// whose FFN norm is named post_attention_norm, NEOX RoPE, optional q/k/v biases and a required
// attn_output bias, attention sinks, a sliding window (attention.sliding_window, required) on
// every other layer starting with the first, whose RoPE is the global one unless
// rope.freq_base_swa says otherwise; a biased router whose top-k logits are softmaxed among
// themselves, biased experts with the clamped SwiGLU, no renormalisation and no weight scale.
void applyGptOss(ModelConfig& c, const MetadataKeys& keys) {
  c.ropeStyle = RopeStyle::Neox;
  c.ffnActivation = FfnActivation::SwigluOai;
  c.ffnNormName = "post_attention_norm";
  c.attentionSinks = true;
  c.attentionOutputBias = true;
  applySlidingLayers(c, keys, keys.requiredInt("attention.sliding_window"), 2,
                     keys.optionalFloat("rope.freq_base_swa").value_or(globalRopeBase(c)),
                     globalRopeScale(c));
  readExperts(c, keys, /*widthRequired=*/true);
  c.expertGating = ExpertGating::SoftmaxOfChosen;
  c.expertBiases = true;
  c.expertWeightsNorm = false;
  c.expertWeightsScale = 1.0f;
}

// Gemma 3 (llama.cpp: llama_load_hparams_gemma3 and llm_build_gemma3).
void applyGemma3(ModelConfig& c, const MetadataKeys& keys) {
  c.ropeStyle = RopeStyle::Neox;
  c.ffnActivation = FfnActivation::GeluTanhGlu;
  c.qkNorm = true;
  c.qkNormScope = QkNormScope::PerHead;
  c.postNorms = true;
  // The token embeddings are multiplied by sqrt(n_embd) (in float, as llama.cpp's sqrtf).
  c.embeddingScale = std::sqrt(static_cast<float>(c.embeddingDim));
  // Sliding-window layers interleave with global ones: by default of every 6 layers the first 5
  // are local and the 6th global (llama.cpp: load_swa_pattern(ml, 6)), or as the file's
  // attention.sliding_window_pattern says (a period, or one flag per layer). Local layers use
  // rope.freq_base_swa (default 10000) without scaling; global layers use rope.freq_base and the
  // file's rope scaling. Without a sliding_window key (or with 0) every layer is global.
  applySlidingLayers(c, keys, keys.optionalInt("attention.sliding_window").value_or(0), 6,
                     keys.optionalFloat("rope.freq_base_swa").value_or(10000.0f), 1.0f);
  // Gemma scales queries by query_pre_attn_scalar^-0.5; GGUF does not carry that value, and
  // llama.cpp uses 1/sqrt(head_dim) except for the 27B model (62 layers), whose scalar is
  // n_embd / n_head.
  c.scaleQueries = true;
  c.attentionScale = c.layerCount == 62
                         ? 1.0f / std::sqrt(static_cast<float>(c.embeddingDim / c.headCount))
                         : 1.0f / std::sqrt(static_cast<float>(c.headDim));
  c.finalLogitSoftcap = keys.optionalFloat("final_logit_softcapping").value_or(0.0f);
}

// Gemma 2 (llama.cpp: models/gemma2.cpp): gemma's GeGLU block with pre- and post-norms, no
// QK-norm, soft-capped attention scores (default 50) and logits (default 30), and a sliding
// window (default 4096) on every other layer starting with the first; local layers keep the
// global RoPE unless the file gives rope.freq_base_swa.
void applyGemma2(ModelConfig& c, const MetadataKeys& keys) {
  c.ropeStyle = RopeStyle::Neox;
  c.ffnActivation = FfnActivation::GeluTanhGlu;
  c.postNorms = true;
  c.embeddingScale = std::sqrt(static_cast<float>(c.embeddingDim));
  applySlidingLayers(c, keys, keys.optionalInt("attention.sliding_window").value_or(4096), 2,
                     keys.optionalFloat("rope.freq_base_swa").value_or(globalRopeBase(c)),
                     globalRopeScale(c));
  c.scaleQueries = true;  // the 27B model (46 layers) scales by (n_embd / n_head)^-0.5
  c.attentionScale = c.layerCount == 46
                         ? 1.0f / std::sqrt(static_cast<float>(c.embeddingDim / c.headCount))
                         : 1.0f / std::sqrt(static_cast<float>(c.headDim));
  c.attentionSoftcap = keys.optionalFloat("attn_logit_softcapping").value_or(50.0f);
  c.finalLogitSoftcap = keys.optionalFloat("final_logit_softcapping").value_or(30.0f);
  if (!(c.attentionSoftcap > 0.0f) || !(c.finalLogitSoftcap > 0.0f))
    keys.fail("gemma2 soft-capping values must be positive");
}

// Granite 3.x (llama.cpp: models/granite.cpp): llama's block with four multipliers: the token
// embeddings (embedding_scale), each block's output before the residual (residual_scale), the
// attention scores (attention.scale, replacing 1/sqrt(head_dim)) and the logits (divided by
// logit_scale, which is required). rope.scaling.finetuned = false turns RoPE off.
void applyGranite(ModelConfig& c, const MetadataKeys& keys) {
  applyLlama(c);
  const float logitScale = keys.requiredFloat("logit_scale");
  if (!(logitScale != 0.0f) || !std::isfinite(logitScale))
    keys.fail("metadata key '" + keys.key("logit_scale") + "' must be finite and non-zero");
  c.logitScale = 1.0f / logitScale;
  if (auto v = keys.optionalFloat("residual_scale"); v && *v != 0.0f) c.residualScale = *v;
  if (auto v = keys.optionalFloat("embedding_scale"); v && *v != 0.0f) c.embeddingScale = *v;
  if (auto v = keys.optionalFloat("attention.scale"); v && *v != 0.0f) c.attentionScale = *v;
  if (const gguf::Value* v = keys.file().find(keys.key("rope.scaling.finetuned"));
      v && v->type == gguf::ValueType::Bool && !v->asBool())
    for (LayerAttention& layer : c.layers) layer.rope = false;
}

// OLMo 2 (llama.cpp: models/olmo2.cpp): no norms before the attention and the FFN, RMSNorm after
// each (post_attention_norm, post_ffw_norm) and over the whole q and k rows before RoPE; an
// optional sliding window (pattern 4) whose layers use rope.freq_base_swa without scaling.
void applyOlmo2(ModelConfig& c, const MetadataKeys& keys) {
  c.ropeStyle = RopeStyle::Neox;
  c.ffnActivation = FfnActivation::SiluGlu;
  c.preNorms = false;
  c.postNorms = true;
  c.qkNorm = true;
  c.qkNormScope = QkNormScope::Whole;
  applySlidingLayers(c, keys, keys.optionalInt("attention.sliding_window").value_or(0), 4,
                     keys.optionalFloat("rope.freq_base_swa").value_or(globalRopeBase(c)), 1.0f);
}

// Phi-3 / Phi-4-mini (llama.cpp: models/phi3.cpp): fused attn_qkv (or separate q/k/v), ffn_up
// holding gate and up, NEOX RoPE, queries scaled by 1/sqrt(head_dim) before the attention. Its
// sliding_window key is ignored, as llama.cpp does.
void applyPhi3(ModelConfig& c) {
  c.ropeStyle = RopeStyle::Neox;
  c.ffnActivation = FfnActivation::SiluGlu;
  c.fusedGateUp = true;
  c.scaleQueries = true;
  c.attentionScale = 1.0f / std::sqrt(static_cast<float>(c.headDim));
}

// SmolLM3 (llama.cpp: models/smollm3.cpp): llama's block where every 4th layer (3, 7, 11, ...)
// has no RoPE (NoPE).
void applySmolLM3(ModelConfig& c) {
  applyLlama(c);
  c.ffnBiases = false;  // llama.cpp's smollm3 loads none
  for (int32_t il = 0; il < c.layerCount; ++il)
    if ((il + 1) % 4 == 0) c.layers[size_t(il)].rope = false;
}

}  // namespace

void applyArchitectureRules(ModelConfig& config, const MetadataKeys& keys) {
  switch (config.architecture) {
    case Architecture::Llama: return applyLlama(config);
    case Architecture::Mistral3: return applyMistral3(config, keys);
    case Architecture::Qwen2: return applyQwen2(config);
    case Architecture::Qwen3: return applyQwen3(config);
    case Architecture::Qwen3Moe: return applyQwen3Moe(config, keys);
    case Architecture::GptOss: return applyGptOss(config, keys);
    case Architecture::Gemma2: return applyGemma2(config, keys);
    case Architecture::Gemma3: return applyGemma3(config, keys);
    case Architecture::Granite: return applyGranite(config, keys);
    case Architecture::Olmo2: return applyOlmo2(config, keys);
    case Architecture::Phi3: return applyPhi3(config);
    case Architecture::SmolLM3: return applySmolLM3(config);
  }
}

}  // namespace ember::model
