#pragma once
// The sampling chain, one stage per function, in the order the Sampler runs them:
//   applyPenalties -> (temperature 0: pickGreedy) -> applyTemperature -> keepTopK -> softmax
//   -> keepTopP -> keepMinP -> renormalize -> drawToken
// Each stage works on a Candidates list and can be tested alone on a few tokens.
// Note: llama.cpp's default chain applies temperature after min-p; ours (as ARCHITECTURE.md
// asks) applies it first, so top-p and min-p see the tempered distribution.
#include <cstdint>
#include <span>
#include <vector>

#include "runtime/sampling/candidates.h"
#include "ember/sampling_params.h"

namespace ember::sampling {

// Penalises the tokens in `recent` (the window the caller chose, any order). Candidates must
// still be in id order (items[i].id == i), i.e. straight after reset(). Per distinct token with
// count c in the window:
//   repetition (llama.cpp): logit > 0 ? logit / repeatPenalty : logit * repeatPenalty
//   frequency and presence (OpenAI): logit -= c * frequencyPenalty + presencePenalty
// `counts` is scratch of at least the vocabulary's size, all zero on entry; left all zero.
// Throws ember::Error for an id outside the vocabulary.
void applyPenalties(Candidates& candidates, std::span<const TokenId> recent,
                    const SamplingParams& params, std::vector<uint32_t>& counts);

// The most likely token; ties go to the lowest id. Used for temperature 0.
TokenId pickGreedy(const Candidates& candidates);

// logit -> (logit - max logit) / temperature, temperature > 0. The shift changes nothing after
// softmax and keeps a tiny temperature from overflowing to infinity.
void applyTemperature(Candidates& candidates, float temperature);

// Keeps the k best (ranksBefore order) and leaves them sorted. k <= 0 or k >= n: no change.
// Partitions with nth_element and sorts only the k kept, never the whole vocabulary.
void keepTopK(Candidates& candidates, int32_t k);

// prob = exp(logit - max) / sum over the candidates.
void softmax(Candidates& candidates);

// Keeps the smallest best-first prefix whose probabilities sum to >= p (at least one token) and
// leaves it sorted. p >= 1: no change. Sorts in growing chunks, so a peaked distribution over a
// big vocabulary sorts only its head. Needs softmax() first.
void keepTopP(Candidates& candidates, float p);

// Keeps the tokens with prob >= minP * (the highest prob); order is kept. minP <= 0: no change.
// Needs softmax() first.
void keepMinP(Candidates& candidates, float minP);

// Scales the probabilities of the survivors so they sum to 1.
void renormalize(Candidates& candidates);

// Inverse CDF: walking the candidates in their current order, the first whose cumulative
// probability exceeds u * total. u must be in [0, 1). A token of probability 0 is never drawn.
TokenId drawToken(const Candidates& candidates, double u);

}  // namespace ember::sampling
