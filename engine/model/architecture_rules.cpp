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
    if (flags.items.size() != size_t(layerCount))
      keys.fail("metadata key '" + name + "' has " + std::to_string(flags.items.size()) +
                " entries for " + std::to_string(layerCount) + " layers");
    for (size_t il = 0; il < flags.items.size(); ++il) {
      const gguf::Value& flag = flags.items[il];
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

// Llama 1/2/3, TinyLlama, Mistral, SmolLM: pre-norm blocks, SwiGLU, "normal" RoPE (adjacent pairs).
void applyLlama(ModelConfig& c) {
  c.ropeStyle = RopeStyle::Normal;
  c.ffnActivation = FfnActivation::SiluGlu;
}

// Qwen2 / Qwen2.5: llama's block with biases on the q, k and v projections and NEOX RoPE.
void applyQwen2(ModelConfig& c) {
  c.ropeStyle = RopeStyle::Neox;
  c.ffnActivation = FfnActivation::SiluGlu;
  c.attentionBias = true;
}

// Gemma 3 (llama.cpp: llama_load_hparams_gemma3 and llm_build_gemma3).
void applyGemma3(ModelConfig& c, const MetadataKeys& keys) {
  c.ropeStyle = RopeStyle::Neox;
  c.ffnActivation = FfnActivation::GeluTanhGlu;
  c.qkNorm = true;
  c.postNorms = true;
  // The token embeddings are multiplied by sqrt(n_embd) (in float, as llama.cpp's sqrtf).
  c.embeddingScale = std::sqrt(static_cast<float>(c.embeddingDim));
  // Sliding-window layers interleave with global ones: by default of every 6 layers the first 5
  // are local and the 6th global (llama.cpp: load_swa_pattern(ml, 6)), or as the file's
  // attention.sliding_window_pattern says (a period, or one flag per layer). Local layers use
  // rope.freq_base_swa (default 10000) without scaling; global layers use rope.freq_base and the
  // file's rope scaling. Without a sliding_window key (or with 0) every layer is global.
  const int64_t window = keys.optionalInt("attention.sliding_window").value_or(0);
  if (window < 0)
    keys.fail("metadata key '" + keys.key("attention.sliding_window") + "' is negative");
  c.slidingWindow = static_cast<int32_t>(window);
  if (c.slidingWindow > 0) {
    const std::vector<bool> sliding = slidingLayers(c.layerCount, keys, 6);
    const float localBase = keys.optionalFloat("rope.freq_base_swa").value_or(10000.0f);
    for (int32_t il = 0; il < c.layerCount; ++il) {
      if (!sliding[size_t(il)]) continue;
      c.layers[size_t(il)].slidingWindow = true;
      c.layers[size_t(il)].ropeFreqBase = localBase;
      c.layers[size_t(il)].ropeFreqScale = 1.0f;
    }
  }
  // Gemma scales queries by query_pre_attn_scalar^-0.5; GGUF does not carry that value, and
  // llama.cpp uses 1/sqrt(head_dim) except for the 27B model (62 layers), whose scalar is
  // n_embd / n_head.
  c.scaleQueries = true;
  c.attentionScale = c.layerCount == 62
                         ? 1.0f / std::sqrt(static_cast<float>(c.embeddingDim / c.headCount))
                         : 1.0f / std::sqrt(static_cast<float>(c.headDim));
  c.finalLogitSoftcap = keys.optionalFloat("final_logit_softcapping").value_or(0.0f);
}

}  // namespace

void applyArchitectureRules(ModelConfig& config, const MetadataKeys& keys) {
  switch (config.architecture) {
    case Architecture::Llama:
      applyLlama(config);
      break;
    case Architecture::Qwen2:
      applyQwen2(config);
      break;
    case Architecture::Gemma3:
      applyGemma3(config, keys);
      break;
  }
}

}  // namespace ember::model
