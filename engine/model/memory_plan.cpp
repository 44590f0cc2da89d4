#include "model/memory_plan.h"

#include <algorithm>
#include <cstdio>
#include <limits>

#include "common/checked_math.h"
#include "ember/error.h"
#include "gguf/gguf_file.h"
#include "model/model_config.h"

namespace ember {
namespace {

constexpr uint64_t kSaturated = std::numeric_limits<uint64_t>::max();
constexpr uint64_t kInt32Max = uint64_t(std::numeric_limits<int32_t>::max());
constexpr uint64_t kLibraryWorkspaceBytes = uint64_t(64) << 20;  // cuBLAS(Lt) workspace

uint64_t saturatingAdd(uint64_t a, uint64_t b) { return checkedAdd(a, b).value_or(kSaturated); }
uint64_t saturatingMul(uint64_t a, uint64_t b) { return checkedMul(a, b).value_or(kSaturated); }

// How many `unit`s fit in `budget`, capped at INT32_MAX (0 when unit saturated).
int32_t countThatFits(uint64_t budget, uint64_t unit) {
  if (unit == kSaturated) return 0;
  return static_cast<int32_t>(std::min(budget / unit, kInt32Max));
}

std::string describeNeed(const MemoryPlan& plan, const MemoryPlanInput& input) {
  return "needs " + formatBytes(plan.neededBytes) + " (weights " + formatBytes(plan.weightBytes) +
         " + KV cache " + formatBytes(plan.kvCacheBytes) + " for " +
         std::to_string(input.sequences) + " x " + std::to_string(input.contextLength) +
         " tokens + workspace " + formatBytes(plan.workspaceBytes) + ")";
}

std::string messageFor(const MemoryPlan& plan, const MemoryPlanInput& input) {
  const std::string need = describeNeed(plan, input);
  const std::string available = formatBytes(plan.availableBytes);
  if (plan.fits) {
    return need + " and " + available + " is free; up to " +
           std::to_string(plan.largestContext) + " tokens per sequence would fit";
  }
  std::string message = need + " but " + available + " is free";
  const uint64_t fixedBytes = saturatingAdd(plan.weightBytes, plan.workspaceBytes);
  if (fixedBytes >= plan.availableBytes)
    return message + "; the weights and workspace alone need " + formatBytes(fixedBytes);
  if (plan.largestContext > 0) {
    message += "; the largest context that fits is " + std::to_string(plan.largestContext) +
               " tokens";
  } else {
    message += "; no context fits for " + std::to_string(input.sequences) + " sequences";
  }
  if (input.sequences > 1 && plan.sequencesAtContext > 0) {
    message += " (or " + std::to_string(plan.sequencesAtContext) + " sequences of " +
               std::to_string(input.contextLength) + " tokens)";
  }
  return message;
}

}  // namespace

MemoryPlan planMemory(const MemoryPlanInput& input) {
  if (input.contextLength <= 0) throw Error("memory plan: the context length must be positive");
  if (input.sequences <= 0) throw Error("memory plan: the number of sequences must be positive");
  if (input.kvBytesPerToken == 0) throw Error("memory plan: the KV bytes per token must be > 0");
  if (input.contextGranularity <= 0) throw Error("memory plan: the granularity must be positive");

  MemoryPlan plan;
  plan.weightBytes = input.weightBytes;
  plan.workspaceBytes = input.workspaceBytes;
  plan.availableBytes = input.availableBytes;
  const uint64_t context = uint64_t(input.contextLength);
  const uint64_t sequences = uint64_t(input.sequences);
  plan.kvCacheBytes = saturatingMul(saturatingMul(input.kvBytesPerToken, context), sequences);
  plan.neededBytes =
      saturatingAdd(saturatingAdd(plan.weightBytes, plan.kvCacheBytes), plan.workspaceBytes);
  plan.fits = plan.neededBytes != kSaturated && plan.neededBytes <= plan.availableBytes;

  // What is left for the KV cache once weights and workspace are placed.
  const uint64_t fixedBytes = saturatingAdd(plan.weightBytes, plan.workspaceBytes);
  const uint64_t kvBudget = fixedBytes < plan.availableBytes ? plan.availableBytes - fixedBytes : 0;
  int32_t largest = countThatFits(kvBudget, saturatingMul(input.kvBytesPerToken, sequences));
  if (largest >= input.contextGranularity) largest -= largest % input.contextGranularity;
  plan.largestContext = largest;
  plan.sequencesAtContext = countThatFits(kvBudget, saturatingMul(input.kvBytesPerToken, context));
  plan.message = messageFor(plan, input);
  return plan;
}

namespace model {

uint64_t kvBytesPerToken(const ModelConfig& config) {
  constexpr uint64_t kFp16Bytes = 2;
  return kFp16Bytes * uint64_t(config.layerCount) * uint64_t(config.kvHeadCount) *
         (uint64_t(config.headDim) + uint64_t(config.valueDim));
}

uint64_t weightBytes(const gguf::GgufFile& file) {
  uint64_t total = 0;
  for (const gguf::TensorInfo& tensor : file.tensors()) total = saturatingAdd(total, tensor.byteSize);
  return total;
}

uint64_t estimateWorkspaceBytes(const ModelConfig& config, int32_t stepTokens, int32_t sequences) {
  const uint64_t embd = uint64_t(config.embeddingDim);
  // A mixture of experts runs k experts of n_ff_exp per token, with the token's input and each
  // expert's output copied per expert, and one router logit per expert.
  const bool moe = config.mixtureOfExperts();
  const uint64_t used = uint64_t(config.expertUsedCount);
  const uint64_t ff = moe ? uint64_t(config.expertFfnDim) * used : uint64_t(config.ffnDim);
  const uint64_t experts = moe ? 2 * used * embd + uint64_t(config.expertCount) : 0;
  // Per token, fp32: the residual, the normed input and the attention output (3 x n_embd),
  // q, k and v, and the FFN's gate and up halves.
  const uint64_t perToken = 4 * (3 * embd + uint64_t(config.qDim()) + uint64_t(config.kvDim()) +
                                 uint64_t(config.vDim()) + 2 * ff + experts);
  const uint64_t activations = saturatingMul(perToken, uint64_t(std::max(stepTokens, 1)));
  const uint64_t logits =
      saturatingMul(4 * uint64_t(config.vocabSize), uint64_t(std::max(sequences, 1)));
  const uint64_t widestMatrix = std::max({embd * ff, embd * uint64_t(config.qDim()),
                                          uint64_t(config.attnOutDim()) * embd});
  const uint64_t dequantised = 2 * widestMatrix;
  return saturatingAdd(saturatingAdd(activations, logits),
                       saturatingAdd(dequantised, kLibraryWorkspaceBytes));
}

}  // namespace model

std::string formatBytes(uint64_t bytes) {
  char text[48];
  const double value = double(bytes);
  if (bytes >= (uint64_t(1) << 30))
    std::snprintf(text, sizeof(text), "%.1f GiB", value / double(uint64_t(1) << 30));
  else if (bytes >= (uint64_t(1) << 20))
    std::snprintf(text, sizeof(text), "%.1f MiB", value / double(uint64_t(1) << 20));
  else if (bytes >= 1024)
    std::snprintf(text, sizeof(text), "%.1f KiB", value / 1024.0);
  else
    std::snprintf(text, sizeof(text), "%llu bytes", static_cast<unsigned long long>(bytes));
  return text;
}

}  // namespace ember
