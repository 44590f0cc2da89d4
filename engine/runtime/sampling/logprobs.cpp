#include "runtime/sampling/logprobs.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace ember::sampling {

PositionLogprobs logprobsAt(std::span<const float> logits, TokenId chosen, int32_t topN) {
  PositionLogprobs out;
  if (logits.empty()) return out;
  float maxLogit = -std::numeric_limits<float>::infinity();
  for (float l : logits) maxLogit = std::max(maxLogit, l);
  double sum = 0;
  for (float l : logits) sum += std::exp(double(l) - double(maxLogit));
  const double logNormalizer = double(maxLogit) + std::log(sum);
  const auto logprobOf = [&](float logit) { return float(double(logit) - logNormalizer); };
  out.chosen = logprobOf(logits[size_t(chosen)]);

  const size_t keep = std::min(size_t(std::max(topN, 0)), logits.size());
  if (keep == 0) return out;
  // Ids only: descending logit, ties to the lower id (the order the sampler ranks tokens in).
  std::vector<TokenId> best;
  best.reserve(keep + 1);
  const auto before = [&](TokenId a, TokenId b) {
    return logits[size_t(a)] > logits[size_t(b)] || (logits[size_t(a)] == logits[size_t(b)] && a < b);
  };
  for (size_t i = 0; i < logits.size(); ++i) {
    const TokenId id = TokenId(i);
    if (best.size() == keep && !before(id, best.back())) continue;
    best.insert(std::upper_bound(best.begin(), best.end(), id, before), id);
    if (best.size() > keep) best.pop_back();
  }
  out.top.reserve(keep);
  for (TokenId id : best) out.top.push_back({id, logprobOf(logits[size_t(id)])});
  return out;
}

}  // namespace ember::sampling
