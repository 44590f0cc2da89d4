#pragma once
// OpenAI request bodies -> GenerationRequest. Every parameter the API defines is either honoured
// or refused with a 400 naming it, except those that change nothing for a local model (user,
// store, metadata, service_tier, ...): those are ignored, but a value of the wrong JSON type is
// still a 400 naming it. Unknown fields are ignored, as the OpenAI API does. Plain C++ over
// ember/*.h.
#include <cstddef>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "codec/api_error.h"
#include "ember/request.h"

namespace ember::openai {

inline constexpr int kMaxJsonDepth = 64;       // objects/arrays nested deeper are refused
inline constexpr size_t kMaxMessages = 4096;
inline constexpr int kMaxChoices = 8;          // n

enum class Endpoint { ChatCompletions, Completions };

struct ParsedRequest {
  Endpoint endpoint = Endpoint::ChatCompletions;
  std::string model;
  GenerationRequest generation;  // messages or prompt, sampling; model = the requested name
  bool stream = false;
  bool includeUsage = false;     // stream_options.include_usage
  int n = 1;                     // choices, each its own request over the same prompt
};

// Parses a request body; throws ApiError(400) for malformed JSON, nesting deeper than
// kMaxJsonDepth, or a body that is not an object.
nlohmann::json parseJsonBody(std::string_view body);

// Throw ApiError(400, param) for anything out of range or of the wrong type.
ParsedRequest parseChatCompletionRequest(const nlohmann::json& body);
ParsedRequest parseCompletionRequest(const nlohmann::json& body);

}  // namespace ember::openai
