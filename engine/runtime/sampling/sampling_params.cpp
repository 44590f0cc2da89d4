#include "ember/sampling_params.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <limits>

#include "ember/error.h"

namespace ember {
namespace {

// "nan", "inf", "-1", "0.5", "1e+06": %g keeps what the user typed recognisable.
std::string describe(double value) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%g", value);
  return buffer;
}

[[noreturn]] void reject(std::string_view field, const std::string& value,
                         std::string_view allowed) {
  throw Error("invalid sampling setting: " + std::string(field) + " = " + value + "; " +
              std::string(allowed));
}

// NaN fails both comparisons, so it is rejected by every range check below.
void requireInRange(std::string_view field, float value, float low, float high,
                    std::string_view allowed) {
  if (!(value >= low && value <= high)) reject(field, describe(value), allowed);
}

}  // namespace

void validate(const SamplingParams& params, size_t vocabSize, int32_t contextLength) {
  if (vocabSize == 0) throw Error("cannot sample: the model has an empty vocabulary");
  if (contextLength < 1) throw Error("cannot sample: the context length must be at least 1");

  requireInRange("temperature", params.temperature, 0.0f, kMaxTemperature,
                 "allowed: 0 to 100 (0 = always the most likely token)");
  requireInRange("top-p", params.topP, 0.0f, 1.0f,
                 "allowed: 0 to 1 (1 = off, 0 = only the most likely token)");
  if (params.topK < 0) {
    reject("top-k", std::to_string(params.topK),
           "allowed: 0 (off) or a positive count (above the vocabulary size = all tokens)");
  }
  requireInRange("min-p", params.minP, 0.0f, 1.0f, "allowed: 0 to 1 (0 = off)");
  if (!(params.repeatPenalty > 0.0f && params.repeatPenalty <= kMaxRepeatPenalty)) {
    reject("repeat-penalty", describe(params.repeatPenalty),
           "allowed: above 0 up to 10 (1 = off, above 1 discourages repeats)");
  }
  requireInRange("frequency-penalty", params.frequencyPenalty, -kMaxFrequencyOrPresencePenalty,
                 kMaxFrequencyOrPresencePenalty, "allowed: -2 to 2 (0 = off)");
  requireInRange("presence-penalty", params.presencePenalty, -kMaxFrequencyOrPresencePenalty,
                 kMaxFrequencyOrPresencePenalty, "allowed: -2 to 2 (0 = off)");
  if (params.penaltyLastN < -1) {
    reject("penalty-last-n", std::to_string(params.penaltyLastN),
           "allowed: -1 (the whole context), 0 (penalties off) or a positive count");
  }
  if (params.maxTokens == 0 || params.maxTokens < -1) {
    reject("max-tokens", std::to_string(params.maxTokens),
           "allowed: -1 (until the model stops or the context is full) or at least 1");
  }
  if (params.stop.size() > kMaxStopStrings) {
    reject("stop", std::to_string(params.stop.size()) + " strings",
           "allowed: at most " + std::to_string(kMaxStopStrings) + " stop strings");
  }
  for (const std::string& stop : params.stop) {
    if (stop.empty()) reject("stop", "\"\"", "a stop string must not be empty");
    if (stop.size() > kMaxStopStringBytes) {
      reject("stop", "a string of " + std::to_string(stop.size()) + " bytes",
             "allowed: at most " + std::to_string(kMaxStopStringBytes) + " bytes each");
    }
  }
}

std::optional<uint64_t> parseSeed(std::string_view text) {
  if (text == "-1" || text == "random") return std::nullopt;
  uint64_t value = 0;
  const char* end = text.data() + text.size();
  const auto [stopped, error] = std::from_chars(text.data(), end, value, 10);
  if (text.empty() || error != std::errc() || stopped != end) {
    reject("seed", "\"" + std::string(text) + "\"",
           "allowed: an integer from 0 to 18446744073709551615, or -1 for a random seed");
  }
  return value;
}

int32_t effectiveMaxTokens(const SamplingParams& params, int32_t contextLength,
                           int32_t promptTokens) {
  const int64_t room = std::max<int64_t>(0, int64_t{contextLength} - promptTokens);
  if (params.maxTokens < 0) return static_cast<int32_t>(room);
  return static_cast<int32_t>(std::min<int64_t>(room, params.maxTokens));
}

void validateContextLength(int64_t requested, int64_t modelContextLength) {
  if (requested < 1 || requested > modelContextLength) {
    throw Error("invalid setting: context length = " + std::to_string(requested) +
                "; allowed: 1 to " + std::to_string(modelContextLength) +
                " (the model's trained context length)");
  }
}

}  // namespace ember
