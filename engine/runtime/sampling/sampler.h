#pragma once
// Picks the next token of one sequence from the model's logits by running the sampling chain
// (stages.h) with the request's settings and its own seeded generator. One Sampler per request;
// it owns reusable buffers, so sample() does not allocate once warmed up.
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "runtime/sampling/candidates.h"
#include "ember/rng.h"
#include "ember/sampling_params.h"

namespace ember {

class Sampler {
 public:
  // Validates the settings (throws ember::Error with the user-facing message) and seeds the
  // generator: params.seed, or a random seed drawn now and reported by seedUsed().
  Sampler(SamplingParams params, size_t vocabSize);

  // logits: (vocabSize) for the next position. history: the sequence so far (prompt and
  // generated tokens, oldest first); the penalties look at its last penaltyLastN tokens.
  // Throws ember::Error on a size mismatch, a NaN or +inf logit, or an id outside the vocabulary.
  TokenId sample(std::span<const float> logits, std::span<const TokenId> history);

  uint64_t seedUsed() const { return seed_; }
  const SamplingParams& params() const { return params_; }
  // The tokens the last draw chose from, with their final probabilities (empty after a greedy
  // pick): for diagnostics and tests.
  std::span<const sampling::Candidate> lastSurvivors() const;
  // How many elements the last sample() put through a full sort (see Candidates).
  size_t lastSortedElements() const { return candidates_.sortedElements; }

 private:
  bool penaltiesEnabled() const;

  SamplingParams params_;
  size_t vocabSize_;
  uint64_t seed_;
  Xoshiro256StarStar rng_;
  sampling::Candidates candidates_;  // (vocabSize) reused for every token
  std::vector<uint32_t> recentCounts_;  // (vocabSize) penalty scratch, all zero between calls
  bool lastWasGreedy_ = false;
};

}  // namespace ember
