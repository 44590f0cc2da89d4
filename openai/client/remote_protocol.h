#pragma once
// The client half of the OpenAI wire format: a GenerationRequest as the JSON body a server
// expects, a model list and an error body as the server sends them, and the Retry-After header.
#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ember/generator.h"
#include "ember/request.h"

namespace ember::openai {

struct EncodedRequest {
  std::string path;  // relative to the base URL: "/chat/completions" or "/completions"
  std::string body;  // JSON, always with "stream": true and usage requested
};

// Chat messages go to /chat/completions, a prompt (text or token ids) to /completions. Sampling
// settings that the OpenAI API lacks (top_k, min_p, repeat_penalty) are sent only when they
// differ from Ember's defaults, which are llama.cpp's and vLLM's own, so that a strict server
// is not sent fields it would reject for nothing. Throws ember::Error for a request a server
// cannot answer (a logits observer, no prompt at all).
EncodedRequest encodeRequest(const GenerationRequest& request, const std::string& model);

// The human part of an error body: OpenAI's {"error": {"message"}}, vLLM's {"message"},
// FastAPI's {"detail"} (a string or a list of problems), or the raw text cut to 300 bytes.
std::string errorBodyMessage(std::string_view body);

// Retry-After as seconds (delta-seconds, or an HTTP-date relative to `now`); nullopt when absent
// or unreadable.
std::optional<double> parseRetryAfter(std::string_view value,
                                      std::chrono::system_clock::time_point now);

// GET /models: {"object": "list", "data": [{"id", "owned_by", ...}]}. llama.cpp's server adds
// "meta": {"n_ctx_train"}; vLLM adds "max_model_len", ember-serve "context_length" (the model's
// context length, 0 when none). Throws ember::Error on another shape.
std::vector<GeneratorModel> parseModelList(std::string_view body, const std::string& serverName);

}  // namespace ember::openai
