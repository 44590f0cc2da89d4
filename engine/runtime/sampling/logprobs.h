#pragma once
// Log-probabilities at one position, from the model's raw logits: log softmax(logits)[id] for the
// sampled token and the N most likely tokens. Computed only for requests that ask for them.
#include <cstdint>
#include <span>
#include <vector>

#include "ember/sampling_params.h"

namespace ember::sampling {

struct RankedLogprob {
  TokenId id = 0;
  float logprob = 0;
};

struct PositionLogprobs {
  float chosen = 0;                 // log-probability of the sampled token
  std::vector<RankedLogprob> top;   // (min(topN, vocab)) most likely first, ties to the lower id
};

// logits: (vocab). One pass for the maximum, one for the log of the normalizer (in double), and
// a bounded insertion list for the top N, so the cost is O(vocab * N) with N <= 20 and nothing
// sorts the vocabulary. A -inf logit has logprob -inf.
PositionLogprobs logprobsAt(std::span<const float> logits, TokenId chosen, int32_t topN);

}  // namespace ember::sampling
