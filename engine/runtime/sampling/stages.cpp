#include "runtime/sampling/stages.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "ember/error.h"

namespace ember::sampling {

void applyPenalties(Candidates& candidates, std::span<const TokenId> recent,
                    const SamplingParams& params, std::vector<uint32_t>& counts) {
  std::vector<Candidate>& items = candidates.items;
  const size_t vocab = items.size();
  for (TokenId id : recent) {
    if (id < 0 || static_cast<size_t>(id) >= vocab || static_cast<size_t>(id) >= counts.size()) {
      throw Error("sampling: token id " + std::to_string(id) + " in the history is outside the " +
                  "vocabulary of " + std::to_string(vocab) + " tokens");
    }
  }
  for (TokenId id : recent) ++counts[static_cast<size_t>(id)];
  // The first visit of each distinct id applies its penalty and zeroes its count, so a token
  // that appears several times is penalised once, with its full count.
  for (TokenId id : recent) {
    const uint32_t count = counts[static_cast<size_t>(id)];
    if (count == 0) continue;
    counts[static_cast<size_t>(id)] = 0;
    float& logit = items[static_cast<size_t>(id)].logit;
    logit = logit > 0.0f ? logit / params.repeatPenalty : logit * params.repeatPenalty;
    logit -= static_cast<float>(count) * params.frequencyPenalty + params.presencePenalty;
  }
}

TokenId pickGreedy(const Candidates& candidates) {
  const std::vector<Candidate>& items = candidates.items;
  if (items.empty()) throw Error("sampling: no candidate tokens left");
  // min_element with ranksBefore returns the first best: highest logit, then lowest id.
  return std::min_element(items.begin(), items.end(), ranksBefore)->id;
}

void applyTemperature(Candidates& candidates, float temperature) {
  std::vector<Candidate>& items = candidates.items;
  if (items.empty()) return;
  float maxLogit = items.front().logit;
  for (const Candidate& c : items) maxLogit = std::max(maxLogit, c.logit);
  if (!std::isfinite(maxLogit)) return;  // all -inf: softmax() reports it
  const double inverse = 1.0 / static_cast<double>(temperature);
  for (Candidate& c : items) {
    c.logit = static_cast<float>(static_cast<double>(c.logit - maxLogit) * inverse);
  }
}

void keepTopK(Candidates& candidates, int32_t k) {
  std::vector<Candidate>& items = candidates.items;
  if (k <= 0 || static_cast<size_t>(k) >= items.size()) return;
  const auto kept = items.begin() + k;
  if (!candidates.sorted) {
    std::nth_element(items.begin(), kept, items.end(), ranksBefore);
    std::sort(items.begin(), kept, ranksBefore);
    candidates.sortedElements += static_cast<size_t>(k);
  }
  items.erase(kept, items.end());  // keeps the capacity: no reallocation next time
  candidates.sorted = true;
}

void softmax(Candidates& candidates) {
  std::vector<Candidate>& items = candidates.items;
  if (items.empty()) return;
  float maxLogit = items.front().logit;
  for (const Candidate& c : items) maxLogit = std::max(maxLogit, c.logit);
  if (!std::isfinite(maxLogit)) {
    throw Error(maxLogit > 0 ? "sampling: a logit overflowed to infinity"
                             : "sampling: every token has probability zero (all logits are -inf)");
  }
  double sum = 0.0;
  for (Candidate& c : items) {
    c.prob = std::exp(c.logit - maxLogit);
    sum += c.prob;
  }
  const double inverse = 1.0 / sum;  // sum >= 1: the best token contributes exp(0)
  for (Candidate& c : items) c.prob = static_cast<float>(c.prob * inverse);
}

void keepTopP(Candidates& candidates, float p) {
  std::vector<Candidate>& items = candidates.items;
  if (p >= 1.0f || items.empty()) return;
  const size_t n = items.size();
  size_t sortedEnd = candidates.sorted ? n : 0;
  double cumulative = 0.0;
  size_t keep = n;  // if rounding leaves the total just under p, everything stays
  for (size_t i = 0; i < n; ++i) {
    if (i == sortedEnd) {
      // Bring the next-best chunk to the front and sort only it; chunks double in size.
      const size_t chunkEnd = std::min(n, std::max<size_t>(64, 2 * sortedEnd));
      const auto first = items.begin() + static_cast<std::ptrdiff_t>(sortedEnd);
      const auto last = items.begin() + static_cast<std::ptrdiff_t>(chunkEnd);
      if (chunkEnd < n) std::nth_element(first, last, items.end(), ranksBefore);
      std::sort(first, last, ranksBefore);
      candidates.sortedElements += chunkEnd - sortedEnd;
      sortedEnd = chunkEnd;
    }
    cumulative += items[i].prob;
    if (cumulative >= p) {
      keep = i + 1;
      break;
    }
  }
  items.erase(items.begin() + static_cast<std::ptrdiff_t>(keep), items.end());
  candidates.sorted = true;
}

void keepMinP(Candidates& candidates, float minP) {
  std::vector<Candidate>& items = candidates.items;
  if (minP <= 0.0f || items.empty()) return;
  float maxProb = 0.0f;
  for (const Candidate& c : items) maxProb = std::max(maxProb, c.prob);
  // minP <= 1, so the threshold never exceeds maxProb and the best token always stays.
  const float threshold = minP * maxProb;
  // remove_if is stable: the survivors keep their order (sorted stays sorted).
  items.erase(std::remove_if(items.begin(), items.end(),
                             [threshold](const Candidate& c) { return c.prob < threshold; }),
              items.end());
}

void renormalize(Candidates& candidates) {
  double sum = 0.0;
  for (const Candidate& c : candidates.items) sum += c.prob;
  if (!(sum > 0.0)) throw Error("sampling: the remaining tokens have total probability zero");
  const double inverse = 1.0 / sum;
  for (Candidate& c : candidates.items) c.prob = static_cast<float>(c.prob * inverse);
}

TokenId drawToken(const Candidates& candidates, double u) {
  const std::vector<Candidate>& items = candidates.items;
  double total = 0.0;
  for (const Candidate& c : items) total += c.prob;
  if (!(total > 0.0)) throw Error("sampling: no candidate token has a positive probability");
  const double target = u * total;
  double cumulative = 0.0;
  for (const Candidate& c : items) {
    cumulative += c.prob;
    if (cumulative > target) return c.id;
  }
  // Rounding left the sum a hair below target (u close to 1): the last token that can be drawn.
  for (auto it = items.rbegin(); it != items.rend(); ++it) {
    if (it->prob > 0.0f) return it->id;
  }
  return items.back().id;  // unreachable: total > 0
}

}  // namespace ember::sampling
