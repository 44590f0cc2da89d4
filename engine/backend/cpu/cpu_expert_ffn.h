#pragma once
// The CPU mixture-of-experts feed-forward (model/transformer_layer.h): a router picks k experts
// per token, and each token goes through only the rows of the experts it picked. The tokens of a
// step are grouped by expert, so each chosen expert runs one matrix product over all the tokens
// that chose it (n = their count) and an expert no token chose is never read.
//
// It computes what llama.cpp's build_moe_ffn computes on the CPU, in the same order: router
// logits (plus the router's bias, where it has one); then either the softmax over all experts
// (exp in float, the sum in double, then multiplied by 1/sum) and its top k, or (gpt-oss) the top
// k logits and a softmax over those k; ties go to the lower expert index; the k weights divided
// by their sum (clamped below at 6.103515625e-5, llama.cpp's guard against a zero sum) where the
// model says so; each expert's products plus its biases, where it has them; each expert's output
// times its weight, and the k products added in rank order.
#include <cstdint>
#include <vector>

#include "backend/cpu/matmul.h"
#include "backend/cpu/thread_pool.h"
#include "gguf/gguf_file.h"
#include "model/expert_routing.h"
#include "model/model_config.h"

namespace ember::cpu {

// A layer's router and experts. The stacked matrices hold every expert's rows one expert after
// the other: expert e's gate is rows [e * n_ff_exp, (e + 1) * n_ff_exp) of `gate`.
struct CpuExpertWeights {
  WeightMatrix router;  // (n_expert, n_embd)
  WeightMatrix gate;    // (n_expert * n_ff_exp, n_embd)
  WeightMatrix up;      // (n_expert * n_ff_exp, n_embd)
  WeightMatrix down;    // (n_expert * n_embd, n_ff_exp)
  int32_t experts = 0;  // 0: a dense layer
  // Biases (gpt-oss), or empty: one row per expert.
  std::vector<float> routerBias;  // (n_expert)
  std::vector<float> gateBias;    // (n_expert, n_ff_exp)
  std::vector<float> upBias;      // (n_expert, n_ff_exp)
  std::vector<float> downBias;    // (n_expert, n_embd)
};

// Views a 3-D tensor [cols, rows, n_expert] as the matrix (n_expert * rows, cols); throws
// ember::Error naming the tensor when its type is not supported.
WeightMatrix stackedExpertMatrix(const gguf::TensorInfo& tensor);

// Rows [first, first + count) of a stacked matrix, as a matrix of its own.
WeightMatrix matrixRows(const WeightMatrix& stacked, int64_t first, int64_t count);

// Buffers of one step; they only grow, so a decode step allocates nothing once warm.
// T = tokens, k = experts per token, G = T * k (token, rank) pairs.
struct ExpertScratch {
  std::vector<float> probabilities;   // (T, n_expert) router logits, then the gating's values
  model::ExpertRouting routing;       // chosen experts, weights, pairs grouped by expert
  std::vector<float> input;           // (G, n_embd) the tokens' inputs, grouped by expert
  std::vector<float> gate;            // (G, n_ff_exp) gate, then act(gate) * up
  std::vector<float> up;              // (G, n_ff_exp)
  std::vector<float> output;          // (G, n_embd) each expert's output for its tokens
  size_t bytes() const;
};

// y (T, n_embd) = the layer's mixture of experts over x (T, n_embd). y must not alias x.
void expertFeedForward(ThreadPool& pool, const model::ModelConfig& config,
                       const CpuExpertWeights& weights, const float* x, int64_t tokens, float* y,
                       ExpertScratch& scratch, MatmulScratch& matmulScratch);

}  // namespace ember::cpu
