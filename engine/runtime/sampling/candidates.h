#pragma once
// The tokens still in the running while the sampling chain narrows them down.
#include <cstddef>
#include <span>
#include <vector>

#include "ember/sampling_params.h"

namespace ember::sampling {

struct Candidate {
  TokenId id;
  float logit;
  float prob;  // set by softmax(); meaningless before it
};

// Descending logit, ties broken by the lower id: a total order, so every sort and partition
// gives the same survivors in the same order on every standard library.
inline bool ranksBefore(const Candidate& a, const Candidate& b) {
  return a.logit > b.logit || (a.logit == b.logit && a.id < b.id);
}

struct Candidates {
  std::vector<Candidate> items;  // (n) the survivors; n = vocabulary size after reset()
  // True when items are in ranksBefore order. Stages that cut by rank sort only what they keep.
  bool sorted = false;
  // How many elements the stages have put through a full sort since reset(): lets the tests
  // check that top-k and top-p never sort the whole vocabulary.
  size_t sortedElements = 0;

  // Refills items with (id, logit) for every token, in id order. Allocates only the first time
  // (or when the vocabulary grows); the Sampler reuses one Candidates for every token.
  void reset(std::span<const float> logits) {
    items.resize(logits.size());
    for (size_t i = 0; i < logits.size(); ++i) {
      items[i] = Candidate{static_cast<TokenId>(i), logits[i], 0.0f};
    }
    sorted = false;
    sortedElements = 0;
  }
};

}  // namespace ember::sampling
