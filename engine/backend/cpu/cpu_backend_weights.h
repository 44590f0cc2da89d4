#pragma once
// The CPU backend's view of a model's weights: matrices stay in the mapped file in their GGUF
// type (WeightMatrix); the small 1-D tensors (norm weights, biases, rope factors) are converted
// to float32 once, so the forward pass reads them directly whatever type the file stores.
#include <cstddef>
#include <vector>

#include "backend/cpu/matmul.h"
#include "model/model_weights.h"

namespace ember::cpu {

struct CpuLayerWeights {
  WeightMatrix wq, wk, wv, wo;           // attention projections (parts of attn_qkv when fused)
  WeightMatrix ffnGate, ffnUp, ffnDown;  // feed-forward (gate, up: parts of ffn_up when fused)
  std::vector<float> attnNorm;           // (n_embd) or empty (olmo2)
  std::vector<float> ffnNorm;            // (n_embd) or empty (olmo2)
  std::vector<float> postAttnNorm;       // (n_embd) or empty
  std::vector<float> postFfnNorm;        // (n_embd) or empty
  std::vector<float> qNorm, kNorm;       // (head_dim), the whole q / k width (olmo2), or empty
  std::vector<float> bq;                 // (n_head * head_dim) or empty
  std::vector<float> bk;                 // (n_kv_head * head_dim) or empty
  std::vector<float> bv;                 // (n_kv_head * value_dim) or empty
  std::vector<float> bo;                 // (n_embd) or empty
};

struct CpuWeights {
  WeightMatrix tokenEmbedding;    // (n_vocab, n_embd)
  WeightMatrix output;            // (n_vocab, n_embd), the embedding when tied
  std::vector<float> outputNorm;  // (n_embd)
  std::vector<float> ropeFreqs;   // (rope_dims / 2) or empty
  std::vector<CpuLayerWeights> layers;
  size_t bytes = 0;  // bytes of the file's tensors in use
};

// Throws ember::Error naming the tensor when its type is not supported.
CpuWeights loadCpuWeights(const model::ModelWeights& weights);

}  // namespace ember::cpu
