#pragma once
// The tensors of a model, by role, as views into its GGUF file (never copied). Shapes are checked
// against the ModelConfig when the table is built, so the forward pass can trust them.
// Shapes below are in ggml order: [contiguous dimension, rows].
#include <vector>

#include "gguf/gguf_file.h"
#include "model/model_config.h"

namespace ember::model {

struct LayerWeights {
  const gguf::TensorInfo* attnNorm = nullptr;      // [n_embd]
  const gguf::TensorInfo* wq = nullptr;            // [n_embd, n_head * head_dim]
  const gguf::TensorInfo* wk = nullptr;            // [n_embd, n_kv_head * head_dim]
  const gguf::TensorInfo* wv = nullptr;            // [n_embd, n_kv_head * value_dim]
  const gguf::TensorInfo* bq = nullptr;            // [n_head * head_dim]        (qwen2)
  const gguf::TensorInfo* bk = nullptr;            // [n_kv_head * head_dim]     (qwen2)
  const gguf::TensorInfo* bv = nullptr;            // [n_kv_head * value_dim]    (qwen2)
  const gguf::TensorInfo* qNorm = nullptr;         // [head_dim]                 (gemma3)
  const gguf::TensorInfo* kNorm = nullptr;         // [head_dim]                 (gemma3)
  const gguf::TensorInfo* wo = nullptr;            // [n_head * value_dim, n_embd]
  const gguf::TensorInfo* postAttnNorm = nullptr;  // [n_embd]                (gemma3)
  const gguf::TensorInfo* ffnNorm = nullptr;       // [n_embd]
  const gguf::TensorInfo* ffnGate = nullptr;       // [n_embd, n_ff]
  const gguf::TensorInfo* ffnUp = nullptr;         // [n_embd, n_ff]
  const gguf::TensorInfo* ffnDown = nullptr;       // [n_ff, n_embd]
  const gguf::TensorInfo* postFfnNorm = nullptr;   // [n_embd]                 (gemma3)
};

struct ModelWeights {
  const gguf::TensorInfo* tokenEmbedding = nullptr;  // [n_embd, n_vocab]
  const gguf::TensorInfo* outputNorm = nullptr;      // [n_embd]
  // [n_embd, n_vocab]; the token embedding itself when the file has no output.weight (tied).
  const gguf::TensorInfo* output = nullptr;
  bool tiedOutput = false;
  const gguf::TensorInfo* ropeFreqs = nullptr;  // [rope_dims / 2] (Llama 3.1), or null
  std::vector<LayerWeights> layers;             // (n_layer)
};

// Binds every tensor the configuration needs; throws ModelConfigError naming the file and the
// missing tensor, or the tensor whose shape differs from the configuration's.
ModelWeights bindModelWeights(const gguf::GgufFile& file, const ModelConfig& config);

}  // namespace ember::model
