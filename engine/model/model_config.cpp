#include "model/model_config.h"

#include <algorithm>
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
      {"llama", Architecture::Llama},     {"mistral3", Architecture::Mistral3},
      {"qwen2", Architecture::Qwen2},
      {"qwen3", Architecture::Qwen3},     {"qwen3moe", Architecture::Qwen3Moe},
      {"gpt-oss", Architecture::GptOss},
      {"gemma2", Architecture::Gemma2},
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

// RoPE scaling as llama.cpp reads it (llama_model_base::load_hparams and the context's YaRN
// set-up): the factor from rope.scaling.factor (or the older rope.scale_linear) turns into
// freq_scale = 1/factor; type "none" disables it; "yarn" adds the extrapolation blend and its
// magnitude correction; "longrope" (phi3) divides the frequencies by the file's factors.
float readRopeScaling(ModelConfig& c, const MetadataKeys& keys) {
  const std::string type = keys.optionalString("rope.scaling.type").value_or("linear");
  if (type != "none" && type != "linear" && type != "yarn" && type != "longrope")
    keys.fail("metadata key '" + keys.key("rope.scaling.type") + "' = '" + type +
              "' is not supported (supported: none, linear, yarn, longrope)");
  c.ropeOriginalContext = int32_t(keys.optionalInt("rope.scaling.original_context_length")
                                      .value_or(c.contextLength));
  if (c.ropeOriginalContext <= 0)
    keys.fail("metadata key '" + keys.key("rope.scaling.original_context_length") +
              "' must be positive");
  const float attnFactor = keys.optionalFloat("rope.scaling.attn_factor").value_or(1.0f);
  c.ropeAttnFactor = attnFactor;
  if (type == "none") return 1.0f;
  auto factor = keys.optionalFloat("rope.scaling.factor");
  if (!factor) factor = keys.optionalFloat("rope.scale_linear");
  if (factor && (!(*factor >= 0.0f) || !std::isfinite(*factor)))
    keys.fail("metadata key '" + keys.key("rope.scaling.factor") + "' must be positive");
  const float freqScale = !factor || *factor == 0.0f ? 1.0f : 1.0f / *factor;
  if (type == "longrope") {
    // The short factors while a sequence's context fits the original one, the long factors past
    // it (the backend chooses when it learns the context, in allocateKvCache). A file with only
    // the short ones is capped at the original context rather than run with the wrong factors.
    if (keys.file().findTensor("rope_factors_short.weight")) {
      c.ropeFactorsTensor = "rope_factors_short.weight";
      if (keys.file().findTensor("rope_factors_long.weight"))
        c.ropeLongFactorsTensor = "rope_factors_long.weight";
      else
        c.contextLength = std::min(c.contextLength, c.ropeOriginalContext);
    }
  }
  if (type == "yarn") {
    c.ropeExtFactor = keys.optionalFloat("rope.scaling.yarn_ext_factor").value_or(1.0f);
    c.yarnBetaFast = keys.optionalFloat("rope.scaling.yarn_beta_fast").value_or(32.0f);
    c.yarnBetaSlow = keys.optionalFloat("rope.scaling.yarn_beta_slow").value_or(1.0f);
    if (c.ropeExtFactor != 0.0f) {
      // llama.cpp's context: mscale(factor) = 0.1 ln(factor) + 1, divided by the same term that
      // ggml's rope multiplies back in, times rope.scaling.attn_factor.
      const float f = 1.0f / freqScale;
      const auto mscale = [](float scale, float m) {
        return scale <= 1.0f ? 1.0f : 0.1f * m * std::log(scale) + 1.0f;
      };
      float yarnAttn = mscale(f, 1.0f);
      if (auto logMul = keys.optionalFloat("rope.scaling.yarn_log_multiplier");
          logMul && *logMul != 0.0f)
        yarnAttn = mscale(f, 1.0f) / mscale(f, *logMul);
      yarnAttn *= 1.0f / (1.0f + 0.1f * std::log(f));
      c.ropeAttnFactor = yarnAttn * attnFactor;
    }
  }
  return freqScale;
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
      tokens->asArray().size() != size_t(c.vocabSize))
    keys.fail("tokenizer.ggml.tokens has " + std::to_string(tokens->asArray().size()) +
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
  // A mixture-of-experts file may leave out the dense width when it gives the experts' own
  // (as llama.cpp allows); every other architecture needs it.
  const auto ffn = keys.optionalInt("feed_forward_length");
  const bool moe = c.architecture == Architecture::Qwen3Moe || c.architecture == Architecture::GptOss;
  if (ffn || !moe ||
      !keys.optionalInt("expert_feed_forward_length"))
    c.ffnDim = positiveInt32(keys, "feed_forward_length",
                             ffn ? *ffn : keys.requiredInt("feed_forward_length"));
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
  if (file.findTensor("rope_freqs.weight")) c.ropeFactorsTensor = "rope_freqs.weight";

  LayerAttention global;
  global.ropeFreqBase = keys.optionalFloat("rope.freq_base").value_or(10000.0f);
  global.ropeFreqScale = readRopeScaling(c, keys);
  c.ropeFreqFactors = !c.ropeFactorsTensor.empty();
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
  if (ropeExtFactor != 0.0f) s << " yarn (original context " << ropeOriginalContext << ")";
  if (ropeAttnFactor != 1.0f) s << " attn factor " << ropeAttnFactor;
  if (ropeFactorsTensor == "rope_factors_short.weight") s << " longrope short factors";
  if (!ropeLongFactorsTensor.empty())
    s << " (long factors past " << ropeOriginalContext << " positions)";
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
  if (mixtureOfExperts()) {
    s << ", " << expertCount << " experts (top " << expertUsedCount << ", n_ff " << expertFfnDim
      << ")";
    if (expertWeightsNorm) s << " weights renormalised";
    if (expertWeightsScale != 1.0f) s << " scaled " << expertWeightsScale;
    if (expertGating == ExpertGating::SoftmaxOfChosen) s << " softmax of the chosen";
    if (expertBiases) s << " biased";
  }
  if (ffnActivation == FfnActivation::SwigluOai) s << ", clamped swiglu";
  if (attentionSinks) s << ", attention sinks";
  if (logitScale != 1.0f) s << ", logit scale " << logitScale;
  return s.str();
}

void yarnCorrectionDims(int32_t dims, int32_t originalContext, float freqBase, float betaFast,
                        float betaSlow, float out[2]) {
  const auto dim = [&](float rotations) {
    return float(dims) * std::log(float(originalContext) / (rotations * 2 * float(M_PI))) /
           (2 * std::log(freqBase));
  };
  out[0] = std::max(0.0f, std::floor(dim(betaFast)));
  out[1] = std::min(float(dims - 1), std::ceil(dim(betaSlow)));
}

}  // namespace ember::model
