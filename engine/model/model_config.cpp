#include "model/model_config.h"

#include <cmath>
#include <sstream>
#include <utility>

#include "gguf/gguf_file.h"
#include "model/architecture_rules.h"
#include "model/metadata_keys.h"

namespace ember::model {
namespace {

Architecture parseArchitecture(const MetadataKeys& keys, const std::string& name) {
  static const std::pair<const char*, Architecture> kNames[] = {
      {"llama", Architecture::Llama},     {"qwen2", Architecture::Qwen2},
      {"qwen3", Architecture::Qwen3},     {"gemma2", Architecture::Gemma2},
      {"gemma3", Architecture::Gemma3},   {"granite", Architecture::Granite},
      {"olmo2", Architecture::Olmo2},     {"phi3", Architecture::Phi3},
      {"smollm3", Architecture::SmolLM3},
  };
  for (const auto& [text, architecture] : kNames)
    if (name == text) return architecture;
  if (name.empty()) keys.fail("missing metadata key 'general.architecture'");
  std::string supported;
  for (const auto& entry : kNames) supported += (supported.empty() ? "" : ", ") + std::string(entry.first);
  keys.fail("unsupported architecture '" + name + "' (supported: " + supported + ")");
}

int32_t positiveInt32(const MetadataKeys& keys, const std::string& suffix, int64_t value) {
  if (value <= 0 || value > (int64_t{1} << 30))
    keys.fail("metadata key '" + keys.key(suffix) + "' = " + std::to_string(value) +
              " is out of range");
  return static_cast<int32_t>(value);
}

// RoPE scaling as llama.cpp reads it: the factor from rope.scaling.factor (or the older
// rope.scale_linear) turns into freq_scale = 1/factor; type "none" disables it.
float readRopeFreqScale(const MetadataKeys& keys) {
  const std::string type = keys.optionalString("rope.scaling.type").value_or("linear");
  if (type == "none") return 1.0f;
  if (type != "linear")
    keys.fail("metadata key '" + keys.key("rope.scaling.type") + "' = '" + type +
              "' is not supported (supported: none, linear)");
  auto factor = keys.optionalFloat("rope.scaling.factor");
  if (!factor) factor = keys.optionalFloat("rope.scale_linear");
  if (!factor || *factor == 0.0f) return 1.0f;
  if (!(*factor > 0.0f) || !std::isfinite(*factor))
    keys.fail("metadata key '" + keys.key("rope.scaling.factor") + "' must be positive");
  return 1.0f / *factor;
}

void readVocabulary(ModelConfig& c, const MetadataKeys& keys) {
  const gguf::GgufFile& file = keys.file();
  const gguf::TensorInfo* embedding = file.findTensor("token_embd.weight");
  if (!embedding) keys.fail("missing tensor 'token_embd.weight'");
  if (embedding->shape.size() != 2 || embedding->shape[0] != uint64_t(c.embeddingDim))
    keys.fail("tensor 'token_embd.weight' should have shape [" + std::to_string(c.embeddingDim) +
              ", n_vocab]");
  const uint64_t rows = embedding->shape[1];
  if (rows == 0 || rows > (uint64_t{1} << 30))
    keys.fail("tensor 'token_embd.weight' has " + std::to_string(rows) + " rows");
  c.vocabSize = static_cast<int32_t>(rows);
  if (auto declared = keys.optionalInt("vocab_size"); declared && *declared != c.vocabSize)
    keys.fail("metadata key '" + keys.key("vocab_size") + "' = " + std::to_string(*declared) +
              " but tensor 'token_embd.weight' has " + std::to_string(c.vocabSize) + " rows");
  if (const gguf::Value* tokens = file.find("tokenizer.ggml.tokens");
      tokens && tokens->type == gguf::ValueType::Array &&
      tokens->asArray().items.size() != size_t(c.vocabSize))
    keys.fail("tokenizer.ggml.tokens has " + std::to_string(tokens->asArray().items.size()) +
              " tokens but tensor 'token_embd.weight' has " + std::to_string(c.vocabSize) +
              " rows");
}

void validate(const ModelConfig& c, const MetadataKeys& keys) {
  if (c.headCount % c.kvHeadCount != 0)
    keys.fail("head_count " + std::to_string(c.headCount) + " is not a multiple of head_count_kv " +
              std::to_string(c.kvHeadCount));
  if (c.architecture == Architecture::Llama && c.ropeDims != c.headDim)  // llama.cpp's check
    keys.fail("metadata key '" + keys.key("rope.dimension_count") +
              "' = " + std::to_string(c.ropeDims) + " differs from the head size " +
              std::to_string(c.headDim));
  if (c.ropeDims > c.headDim || c.ropeDims % 2 != 0)
    keys.fail("metadata key '" + keys.key("rope.dimension_count") +
              "' = " + std::to_string(c.ropeDims) + " must be even and at most the head size " +
              std::to_string(c.headDim));
  if (!(c.rmsNormEps > 0.0f))
    keys.fail("metadata key '" + keys.key("attention.layer_norm_rms_epsilon") +
              "' must be positive");
  for (const LayerAttention& layer : c.layers)
    if (!(layer.ropeFreqBase > 0.0f))
      keys.fail("metadata key '" + keys.key("rope.freq_base") + "' must be positive");
}

}  // namespace

ModelConfig readModelConfig(const gguf::GgufFile& file) {
  ModelConfig c;
  c.sourceFile = file.path();
  c.architectureName = file.architecture();
  const MetadataKeys keys(file, c.architectureName);
  c.architecture = parseArchitecture(keys, c.architectureName);
  c.modelName = file.findString("general.name").value_or("");

  c.layerCount = positiveInt32(keys, "block_count", keys.requiredInt("block_count"));
  c.embeddingDim = positiveInt32(keys, "embedding_length", keys.requiredInt("embedding_length"));
  c.ffnDim = positiveInt32(keys, "feed_forward_length", keys.requiredInt("feed_forward_length"));
  c.contextLength = positiveInt32(keys, "context_length", keys.requiredInt("context_length"));
  c.headCount =
      positiveInt32(keys, "attention.head_count", keys.requiredInt("attention.head_count"));
  c.kvHeadCount = positiveInt32(keys, "attention.head_count_kv",
                                keys.optionalInt("attention.head_count_kv").value_or(c.headCount));
  // key_length and value_length default to n_embd / n_head (as in llama.cpp).
  for (const char* suffix : {"attention.key_length", "attention.value_length"})
    if (!keys.optionalInt(suffix) && c.embeddingDim % c.headCount != 0)
      keys.fail("embedding_length is not a multiple of head_count and '" + keys.key(suffix) +
                "' is missing");
  c.headDim = positiveInt32(
      keys, "attention.key_length",
      keys.optionalInt("attention.key_length").value_or(c.embeddingDim / c.headCount));
  c.valueDim = positiveInt32(
      keys, "attention.value_length",
      keys.optionalInt("attention.value_length").value_or(c.embeddingDim / c.headCount));
  c.rmsNormEps = keys.requiredFloat("attention.layer_norm_rms_epsilon");
  c.ropeDims = positiveInt32(keys, "rope.dimension_count",
                             keys.optionalInt("rope.dimension_count").value_or(c.headDim));
  c.ropeFreqFactors = file.findTensor("rope_freqs.weight") != nullptr;

  LayerAttention global;
  global.ropeFreqBase = keys.optionalFloat("rope.freq_base").value_or(10000.0f);
  global.ropeFreqScale = readRopeFreqScale(keys);
  c.layers.assign(size_t(c.layerCount), global);
  c.attentionScale = 1.0f / std::sqrt(static_cast<float>(c.headDim));

  applyArchitectureRules(c, keys);
  readVocabulary(c, keys);
  validate(c, keys);
  return c;
}

std::string ModelConfig::describe() const {
  std::ostringstream s;
  s << architectureName;
  if (!modelName.empty()) s << " (" << modelName << ")";
  s << ": " << layerCount << " layers, n_embd " << embeddingDim << ", n_ff " << ffnDim << ", "
    << headCount << " heads (" << kvHeadCount << " kv) x " << headDim << ", vocab " << vocabSize
    << ", context " << contextLength << ", rope "
    << (ropeStyle == RopeStyle::Neox ? "neox" : "normal");
  int local = 0;
  const LayerAttention *global = nullptr, *firstLocal = nullptr;
  for (const LayerAttention& l : layers) {
    local += l.slidingWindow ? 1 : 0;
    if (!l.slidingWindow && !global) global = &l;
    if (l.slidingWindow && !firstLocal) firstLocal = &l;
  }
  if (global) {
    s << " base " << global->ropeFreqBase;
    if (global->ropeFreqScale != 1.0f) s << " scale " << global->ropeFreqScale;
  }
  if (firstLocal)
    s << ", sliding window " << slidingWindow << " on " << local << " of " << layerCount
      << " layers (rope base " << firstLocal->ropeFreqBase << ")";
  int noRope = 0;
  for (const LayerAttention& l : layers) noRope += l.rope ? 0 : 1;
  if (noRope > 0) s << ", no RoPE on " << noRope << " of " << layerCount << " layers";
  if (qkNormScope != QkNormScope::None)
    s << ", qk-norm " << (qkNormScope == QkNormScope::PerHead ? "per head" : "whole rows");
  if (!preNorms) s << ", no pre-norms";
  if (postNorms) s << ", post-norms";
  if (attentionSoftcap > 0.0f) s << ", attention softcap " << attentionSoftcap;
  if (finalLogitSoftcap > 0.0f) s << ", logit softcap " << finalLogitSoftcap;
  if (residualScale != 1.0f) s << ", residual scale " << residualScale;
  if (logitScale != 1.0f) s << ", logit scale " << logitScale;
  return s.str();
}

}  // namespace ember::model
