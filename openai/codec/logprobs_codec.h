#pragma once
// Sampled tokens' log-probabilities in the two OpenAI shapes: chat's
// `logprobs: {content: [{token, logprob, bytes, top_logprobs}], refusal}` and the legacy
// completions' `logprobs: {tokens, token_logprobs, top_logprobs: [{token: logprob}], text_offset}`.
// A logprob below -9999 (a token the model gives no probability) is sent as -9999.0, OpenAI's
// value for "very unlikely", since JSON has no -infinity.
#include <cstdint>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "ember/request.h"

namespace ember::openai {

inline constexpr int kMaxCompletionLogprobs = 5;  // completions' `logprobs`, as the API allows

// {"content": [...], "refusal": null}.
nlohmann::ordered_json chatLogprobsJson(const std::vector<TokenLogprob>& tokens);

// The legacy shape; text_offset counts characters (code points) of the answer from
// `startOffset`, the characters before these tokens (0 for a whole answer).
nlohmann::ordered_json completionLogprobsJson(const std::vector<TokenLogprob>& tokens,
                                              int64_t startOffset);

// Characters (UTF-8 lead bytes) in `bytes`: how far text_offset moves past a token.
int64_t characterCount(std::string_view bytes);

}  // namespace ember::openai
