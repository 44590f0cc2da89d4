#include "runtime/sampling/sampler.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <utility>

#if defined(__SSE2__)
#include <immintrin.h>
#endif

#include "ember/error.h"
#include "runtime/sampling/stages.h"

namespace ember {

Sampler::Sampler(SamplingParams params, size_t vocabSize)
    : params_(std::move(params)),
      vocabSize_(vocabSize),
      seed_(params_.seed ? *params_.seed : randomSeed()),
      rng_(seed_) {
  // The context length is the Engine's to check; here only the sampling settings matter.
  validate(params_, vocabSize_, std::numeric_limits<int32_t>::max());
  candidates_.items.reserve(vocabSize_);
  if (penaltiesEnabled()) recentCounts_.assign(vocabSize_, 0);
}

bool Sampler::penaltiesEnabled() const {
  return params_.penaltyLastN != 0 &&
         (params_.repeatPenalty != 1.0f || params_.frequencyPenalty != 0.0f ||
          params_.presencePenalty != 0.0f);
}

std::span<const sampling::Candidate> Sampler::lastSurvivors() const {
  if (lastWasGreedy_) return {};
  return candidates_.items;
}

TokenId Sampler::sample(std::span<const float> logits, std::span<const TokenId> history) {
  if (logits.size() != vocabSize_) {
    throw Error("sampling: got " + std::to_string(logits.size()) + " logits for a vocabulary of " +
                std::to_string(vocabSize_) + " tokens");
  }
  // Rejects NaN and +inf and finds the highest logit, then its first id: greedy's pick in
  // ranksBefore's order (the highest logit, ties to the lowest id, -0 equal to +0) when no
  // penalty changes the logits. `!(logit < inf)` is true exactly for NaN and +inf. Eight
  // independent lanes and no branch in the first pass: it runs over the whole vocabulary for
  // every sequence of every decode step.
  constexpr float kInf = std::numeric_limits<float>::infinity();
  constexpr size_t kLanes = 8;
  float lanes[kLanes];
  bool bad = false;
#if defined(__SSE2__)
  // Two SSE registers (every x86-64 CPU has them; the compiler leaves the plain loop below
  // scalar): maxps keeps its second operand when the first is NaN, as std::max(lane, logit)
  // keeps the lane; cmpnltps is !(logit < inf).
  __m128 high[2] = {_mm_set1_ps(-kInf), _mm_set1_ps(-kInf)};
  __m128 badBits = _mm_setzero_ps();
  const __m128 inf = _mm_set1_ps(kInf);
  const size_t whole = logits.size() / kLanes * kLanes;
  for (size_t i = 0; i < whole; i += kLanes) {
    for (int h = 0; h < 2; ++h) {
      const __m128 x = _mm_loadu_ps(logits.data() + i + 4 * h);
      badBits = _mm_or_ps(badBits, _mm_cmpnlt_ps(x, inf));
      high[h] = _mm_max_ps(x, high[h]);
    }
  }
  _mm_storeu_ps(lanes, high[0]);
  _mm_storeu_ps(lanes + 4, high[1]);
  bad = _mm_movemask_ps(badBits) != 0;
#else
  bool badLanes[kLanes];
  for (size_t l = 0; l < kLanes; ++l) {
    lanes[l] = -kInf;
    badLanes[l] = false;
  }
  const size_t whole = logits.size() / kLanes * kLanes;
  for (size_t i = 0; i < whole; i += kLanes) {
    for (size_t l = 0; l < kLanes; ++l) {
      const float logit = logits[i + l];
      badLanes[l] |= !(logit < kInf);
      lanes[l] = std::max(lanes[l], logit);
    }
  }
  for (size_t l = 0; l < kLanes; ++l) bad |= badLanes[l];
#endif
  float bestLogit = -kInf;
  for (size_t l = 0; l < kLanes; ++l) bestLogit = std::max(bestLogit, lanes[l]);
  for (size_t i = whole; i < logits.size(); ++i) {
    bad |= !(logits[i] < kInf);
    bestLogit = std::max(bestLogit, logits[i]);
  }
  if (bad) {
    for (size_t i = 0; i < logits.size(); ++i) {
      if (logits[i] < kInf) continue;
      throw Error("sampling: the model produced a non-finite logit (" +
                  std::string(std::isnan(logits[i]) ? "nan" : "inf") + ") for token " +
                  std::to_string(i));
    }
  }
  if (bestLogit == -kInf)
    throw Error("sampling: every token has probability zero (all logits are -inf)");

  lastWasGreedy_ = params_.temperature == 0.0f;
  if (lastWasGreedy_ && !penaltiesEnabled()) {
    // The decode loop's common case: no candidate list.
    candidates_.sortedElements = 0;
    size_t best = 0;
#if defined(__SSE2__)
    const __m128 target = _mm_set1_ps(bestLogit);  // cmpeqps: -0 equals +0, as != below
    for (; best + 4 <= logits.size(); best += 4) {
      const int equal = _mm_movemask_ps(_mm_cmpeq_ps(_mm_loadu_ps(logits.data() + best), target));
      if (equal != 0) return static_cast<TokenId>(best + size_t(__builtin_ctz(unsigned(equal))));
    }
#endif
    while (logits[best] != bestLogit) ++best;
    return static_cast<TokenId>(best);
  }

  candidates_.reset(logits);
  if (penaltiesEnabled()) {
    const size_t window = params_.penaltyLastN < 0
                              ? history.size()
                              : std::min(history.size(), static_cast<size_t>(params_.penaltyLastN));
    sampling::applyPenalties(candidates_, history.last(window), params_, recentCounts_);
  }

  if (lastWasGreedy_) return sampling::pickGreedy(candidates_);

  sampling::applyTemperature(candidates_, params_.temperature);
  sampling::keepTopK(candidates_, params_.topK);
  sampling::softmax(candidates_);
  sampling::keepTopP(candidates_, params_.topP);
  sampling::keepMinP(candidates_, params_.minP);
  sampling::renormalize(candidates_);
  return sampling::drawToken(candidates_, rng_.nextDouble());
}

}  // namespace ember
