#pragma once
// The settings of one request's sampler, their defaults, and the checks that turn a bad value into
// a message for the user (RELIABILITY.md "Settings", cases 15-18).
//
// Defaults follow llama.cpp's common_params_sampling (temperature 0.8, top-k 40, top-p 0.95,
// min-p 0.05, repeat penalty 1.0 = off, last-n 64, frequency/presence 0) and its n_predict = -1;
// Ollama uses the same values except repeat_penalty 1.1.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ember {

// Same type as ember::TokenId in tokenizer/tokenizer.h (an alias may be declared twice); the
// runtime does not link the tokenizer, so it does not include that header.
using TokenId = int32_t;

struct SamplingParams {
  // Divides the logits. 0 = greedy (argmax, ties to the lowest id). Allowed [0, kMaxTemperature].
  float temperature = 0.8f;
  // Nucleus: keep the smallest set of most likely tokens whose probabilities sum to >= topP.
  // Allowed [0, 1]; 1 = off; 0 keeps only the most likely token (as llama.cpp, which always
  // keeps at least one).
  float topP = 0.95f;
  // Keep the K most likely tokens. 0 = off; larger than the vocabulary = all of it. Negative
  // values are rejected (-1 is not "off": there is one spelling for off, 0).
  int32_t topK = 40;
  // Keep tokens whose probability is >= minP * (probability of the most likely). Allowed [0, 1];
  // 0 = off.
  float minP = 0.05f;
  // Repetition penalty as llama.cpp: a logit > 0 of a recent token is divided by it, a logit <= 0
  // multiplied. Allowed (0, kMaxRepeatPenalty]; 1 = off.
  float repeatPenalty = 1.0f;
  // As OpenAI: logit -= count * frequencyPenalty + (count > 0) * presencePenalty over the recent
  // tokens. Allowed [-2, 2] each (OpenAI's range); 0 = off.
  float frequencyPenalty = 0.0f;
  float presencePenalty = 0.0f;
  // How many of the most recent tokens the penalties look at. 0 = penalties off; -1 = the whole
  // context; otherwise >= 1 (a window longer than the history is simply the whole history).
  int32_t penaltyLastN = 64;
  // nullopt = random: drawn once from the OS and reported back (Sampler::seedUsed) so the user can
  // reproduce the answer. Every 64-bit value, 2^64-1 included, is a valid seed.
  std::optional<uint64_t> seed;
  // Most tokens to generate. -1 = until end-of-generation or a full context; otherwise >= 1. A
  // value beyond what the context can hold is not an error: generation ends with "length" when
  // the context is full (see effectiveMaxTokens). int64_t so that 2^31 reaches validation intact.
  int64_t maxTokens = -1;
  // Generation stops when the text contains one of these; the stop string is never shown.
  std::vector<std::string> stop;
};

inline constexpr float kMaxTemperature = 100.0f;  // above ~10 the draw is already near-uniform
inline constexpr float kMaxRepeatPenalty = 10.0f;
inline constexpr float kMaxFrequencyOrPresencePenalty = 2.0f;
inline constexpr size_t kMaxStopStrings = 16;
inline constexpr size_t kMaxStopStringBytes = 256;

// Throws ember::Error naming the field, the value and the allowed range when a setting is out of
// range. vocabSize and contextLength are the model's; they must be >= 1.
void validate(const SamplingParams& params, size_t vocabSize, int32_t contextLength);

// A user-typed seed: "-1" or "random" = nullopt (a random seed), otherwise a decimal integer in
// [0, 2^64-1]. Throws ember::Error for anything else.
std::optional<uint64_t> parseSeed(std::string_view text);

// How many tokens may still be generated after `promptTokens` in a context of `contextLength`:
// the smaller of maxTokens and the room left (-1 = the room left). Returns 0 when the prompt
// already fills the context. Assumes validate() passed.
int32_t effectiveMaxTokens(const SamplingParams& params, int32_t contextLength,
                           int32_t promptTokens);

// A requested context length must be in [1, the model's trained context length].
void validateContextLength(int64_t requested, int64_t modelContextLength);

}  // namespace ember
