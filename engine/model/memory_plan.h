#pragma once
// The model-specific inputs of the memory plan (ember/memory_plan.h): KV bytes per token, the
// file's weight bytes and the workspace estimate.
#include <cstdint>
#include <string>

#include "ember/memory_plan.h"

namespace ember::gguf {
class GgufFile;
}

namespace ember::model {

struct ModelConfig;

// The plan's types and arithmetic are public (ember/memory_plan.h); the model-specific inputs
// below are the engine's.
using ember::formatBytes;
using ember::MemoryPlan;
using ember::MemoryPlanInput;
using ember::planMemory;

// Bytes of KV cache per token with keys and values in fp16:
// 2 bytes * layers * kvHeads * (headDim + valueDim).
uint64_t kvBytesPerToken(const ModelConfig& config);
// Bytes of all tensors of the file as stored (what the backend uploads).
uint64_t weightBytes(const gguf::GgufFile& file);
// An estimate of the working memory besides weights and KV cache, for a step of `stepTokens`
// tokens over `sequences` sequences: fp32 activations of the widest layer parts per token, one
// vocabulary row of logits per sequence, one layer matrix dequantised to 16 bits (the cuBLAS
// path for prompt chunks) and a 64 MiB library workspace.
uint64_t estimateWorkspaceBytes(const ModelConfig& config, int32_t stepTokens, int32_t sequences);


}  // namespace ember::model
