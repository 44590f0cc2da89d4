#pragma once
// The router's choice of experts for the tokens of one step, worked out on the host, and the
// grouping of the (token, rank) pairs by expert that lets each chosen expert run one matrix
// product over all of its tokens. Used by both backends (CUDA routes on the host too); it computes
// what llama.cpp's build_moe_ffn computes, in its order: router logits (plus the router's bias);
// then either the softmax over all experts (exp in float, the sum in double, each value times
// the float 1/sum) and its top k, or (gpt-oss) the top k logits and a softmax over those k; ties
// go to the lower expert index; the k weights divided by their sum (clamped below at
// 6.103515625e-5) where the config says so, then times expert_weights_scale.
#include <cstdint>
#include <vector>

#include "model/model_config.h"

namespace ember::model {

// T = tokens, k = experts per token, G = T * k (token, rank) pairs, E = n_expert.
struct ExpertRouting {
  std::vector<int32_t> chosen;      // (T, k) expert of each rank, best first
  std::vector<float> weights;       // (T, k) its weight
  std::vector<int32_t> firstRow;    // (E + 1) expert e's grouped rows are [firstRow[e], firstRow[e+1])
  std::vector<int32_t> groupedRow;  // (T, k) grouped row of each (token, rank)
  std::vector<int32_t> rowToken;    // (G) token of each grouped row; ascending within an expert
  std::vector<int32_t> cursor;      // (E) scratch: next free grouped row of each expert
};

// Routes `tokens` rows of router logits `scores` (T, E; overwritten with the gating's values);
// `routerBias` (E) is added first when not null. `out`'s vectors only grow.
void routeExperts(const ModelConfig& config, float* scores, int64_t tokens,
                  const float* routerBias, ExpertRouting& out);

}  // namespace ember::model
