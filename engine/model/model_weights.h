#pragma once
// The tensors of a model, by role, as views into its GGUF file (never copied). Shapes are checked
// against the ModelConfig when the table is built, so the forward pass can trust them.
// Shapes below are in ggml order: [contiguous dimension, rows].
#include <vector>

#include "gguf/gguf_file.h"
#include "model/model_config.h"

namespace ember::model {

// A matrix as rows [firstRow, firstRow + rows) of a tensor: the whole tensor, or one part of a
// fused one (phi3's attn_qkv holds q, k and v; its ffn_up holds gate then up). Each output row of
// a projection depends only on its own weight row, so a part computes what the fused product's
// slice would.
struct MatrixRows {
  const gguf::TensorInfo* tensor = nullptr;
  uint64_t firstRow = 0;
  uint64_t rows = 0;
  explicit operator bool() const { return tensor != nullptr; }
};

struct LayerWeights {
  const gguf::TensorInfo* attnNorm = nullptr;      // [n_embd]                (not olmo2)
  MatrixRows wq;                                   // [n_embd, n_head * head_dim]
  MatrixRows wk;                                   // [n_embd, n_kv_head * head_dim]
  MatrixRows wv;                                   // [n_embd, n_kv_head * value_dim]
  const gguf::TensorInfo* bq = nullptr;            // [n_head * head_dim]        (qwen2; optional)
  const gguf::TensorInfo* bk = nullptr;            // [n_kv_head * head_dim]     (qwen2; optional)
  const gguf::TensorInfo* bv = nullptr;            // [n_kv_head * value_dim]    (qwen2; optional)
  // [head_dim] per head, or [n_head * head_dim] / [n_kv_head * head_dim] whole (olmo2)
  const gguf::TensorInfo* qNorm = nullptr;
  const gguf::TensorInfo* kNorm = nullptr;
  const gguf::TensorInfo* wo = nullptr;            // [n_head * value_dim, n_embd]
  const gguf::TensorInfo* bo = nullptr;            // [n_embd]                (optional)
  const gguf::TensorInfo* postAttnNorm = nullptr;  // [n_embd]                (gemma2/3, olmo2)
  const gguf::TensorInfo* ffnNorm = nullptr;       // [n_embd]                (not olmo2)
  MatrixRows ffnGate;                              // [n_embd, n_ff]
  MatrixRows ffnUp;                                // [n_embd, n_ff]
  const gguf::TensorInfo* ffnDown = nullptr;       // [n_ff, n_embd]
  const gguf::TensorInfo* ffnGateBias = nullptr;   // [n_ff]    (llama, mistral3, granite; optional)
  const gguf::TensorInfo* ffnUpBias = nullptr;     // [n_ff]    (as ffnGateBias)
  const gguf::TensorInfo* ffnDownBias = nullptr;   // [n_embd]  (as ffnGateBias)
  const gguf::TensorInfo* postFfnNorm = nullptr;   // [n_embd]                (gemma2/3, olmo2)
  // Mixture of experts, in place of ffnGate/ffnUp/ffnDown: the router and the experts' matrices
  // stacked along the last dimension (expert e's gate is rows [e * n_ff_exp, (e + 1) * n_ff_exp)
  // of ffnGateExps seen as [n_embd, n_ff_exp * n_expert]).
  const gguf::TensorInfo* ffnGateInp = nullptr;   // [n_embd, n_expert]
  const gguf::TensorInfo* ffnGateExps = nullptr;  // [n_embd, n_ff_exp, n_expert]
  const gguf::TensorInfo* ffnUpExps = nullptr;    // [n_embd, n_ff_exp, n_expert]
  const gguf::TensorInfo* ffnDownExps = nullptr;  // [n_ff_exp, n_embd, n_expert]
  // Their biases (gpt-oss), one row per expert.
  const gguf::TensorInfo* ffnGateInpBias = nullptr;   // [n_expert]
  const gguf::TensorInfo* ffnGateExpsBias = nullptr;  // [n_ff_exp, n_expert]
  const gguf::TensorInfo* ffnUpExpsBias = nullptr;    // [n_ff_exp, n_expert]
  const gguf::TensorInfo* ffnDownExpsBias = nullptr;  // [n_embd, n_expert]
  const gguf::TensorInfo* attnSinks = nullptr;        // [n_head] (gpt-oss)
};

struct ModelWeights {
  const gguf::TensorInfo* tokenEmbedding = nullptr;  // [n_embd, n_vocab]
  const gguf::TensorInfo* outputNorm = nullptr;      // [n_embd]
  // [n_embd, n_vocab]; the token embedding itself when the file has no output.weight (tied).
  const gguf::TensorInfo* output = nullptr;
  bool tiedOutput = false;
  const gguf::TensorInfo* ropeFreqs = nullptr;  // [rope_dims / 2] (Llama 3.1), or null
  // [rope_dims / 2] LongRoPE's long factors (ModelConfig::ropeLongFactorsTensor), or null
  const gguf::TensorInfo* ropeFreqsLong = nullptr;
  std::vector<LayerWeights> layers;             // (n_layer)
};

// Binds every tensor the configuration needs; throws ModelConfigError naming the file and the
// missing tensor, or the tensor whose shape differs from the configuration's.
ModelWeights bindModelWeights(const gguf::GgufFile& file, const ModelConfig& config);

}  // namespace ember::model
