#pragma once
// Events and stats -> OpenAI response bodies, stream chunks and usage, plus the llama.cpp-style
// `timings` object (and Ember's queue/TTFT/ITL figures). SSE framing lives here too: a frame is
// "data: " + one line of JSON + "\n\n"; JSON escapes every control character, so no model output
// (newlines, "data: [DONE]", invalid UTF-8, replaced by U+FFFD) can end a frame early.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "ember/generator.h"
#include "ember/request.h"

namespace ember::openai {

using ojson = nlohmann::ordered_json;

struct ResponseMeta {
  std::string id;        // chatcmpl-... / cmpl-...
  int64_t created = 0;   // unix seconds
  std::string model;
  bool logprobs = false;  // the request asked for them: choices carry a logprobs object
};

struct ChoiceResult {
  std::string text;
  std::vector<TokenLogprob> logprobs;  // when ResponseMeta::logprobs
  RequestStats stats;
};

// "stop" (end of generation or a stop string), "length"; nullopt while running. Cancelled and
// failed requests never reach a response body.
std::optional<std::string> finishReasonWire(FinishReason reason);

// Usage of one response: the prompt counted once (the n choices share it), completions summed.
ojson usageJson(const std::vector<ChoiceResult>& choices);
// llama.cpp server's timings names (prompt_n counts the computed prompt tokens, cache_n the
// reused ones) plus queue_ms, tokenize_ms, ttft_ms, itl_p50_ms, itl_p95_ms, total_ms.
ojson timingsJson(const RequestStats& stats);

ojson chatCompletionJson(const ResponseMeta& meta, const std::vector<ChoiceResult>& choices);
ojson completionJson(const ResponseMeta& meta, const std::vector<ChoiceResult>& choices);

// One stream chunk for one choice: role only in the first, content when given, finish_reason
// in the last (then with timings). With meta.logprobs, the chunk's tokens (`logprobs`, may be
// null or empty) are in its logprobs object; a completion chunk's text_offset starts at
// `textOffset`, the characters streamed before it.
ojson chatChunkJson(const ResponseMeta& meta, int index, bool withRole,
                    const std::optional<std::string>& content,
                    const std::optional<std::string>& finishReason,
                    const std::vector<TokenLogprob>* logprobs = nullptr);
ojson completionChunkJson(const ResponseMeta& meta, int index, const std::string& text,
                          const std::optional<std::string>& finishReason,
                          const std::vector<TokenLogprob>* logprobs = nullptr,
                          int64_t textOffset = 0);
// The include_usage chunk: empty choices, usage (and the first choice's timings).
ojson usageChunkJson(const ResponseMeta& meta, bool chat, const std::vector<ChoiceResult>& choices);

ojson modelsJson(const std::vector<GeneratorModel>& models, int64_t created);
ojson modelJson(const GeneratorModel& model, int64_t created);

// JSON as one line, ill-formed UTF-8 replaced by U+FFFD (never an exception).
std::string encodeJson(const ojson& value);
std::string sseFrame(const ojson& value);  // "data: {...}\n\n"
std::string sseDone();                     // "data: [DONE]\n\n"

}  // namespace ember::openai
