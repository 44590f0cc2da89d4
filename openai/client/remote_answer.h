#pragma once
// One streamed answer as the client sees it: SSE data payloads in, text pieces and the request's
// statistics out. Timing is measured here, on the client: TTFT at the first chunk that carries
// text (not the role-only first chunk), and each later chunk's gap divided over the tokens in it
// (its logprobs entries when sent, else the usage's completion tokens spread over the chunks).
// Usage (prompt, cached and completion tokens) and llama.cpp's `timings` are read when present.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "ember/request.h"

namespace ember::openai {

struct AnswerPiece {
  std::string text;
  bool reasoning = false;  // delta.reasoning_content / delta.reasoning
};

class RemoteAnswer {
 public:
  explicit RemoteAnswer(Clock::time_point submitted) : submitted_(submitted) {}

  // One `data:` payload. Returns the text it adds. Throws ember::Error for data that is not a
  // chunk (malformed JSON, an error object sent mid-stream); what arrived before stays valid.
  std::vector<AnswerPiece> onData(std::string_view data, Clock::time_point now);

  bool sawDone() const { return sawDone_; }  // "data: [DONE]"
  bool complete() const { return sawDone_ || finishReason_ != FinishReason::None; }
  bool anyText() const { return !chunks_.empty(); }
  int32_t textChunks() const { return static_cast<int32_t>(chunks_.size()); }

  // The statistics so far. `reason` overrides the server's finish reason (Cancelled, Error).
  RequestStats stats(Clock::time_point now, FinishReason reason = FinishReason::None,
                     std::string error = {}) const;

 private:
  struct TextChunk {
    Clock::time_point time;
    int32_t tokens = 0;  // 0: not said by the server
  };
  void readUsage(const nlohmann::ordered_json& usage);

  Clock::time_point submitted_;
  std::vector<TextChunk> chunks_;
  FinishReason finishReason_ = FinishReason::None;
  bool sawDone_ = false;
  int32_t promptTokens_ = -1;
  int32_t cachedTokens_ = -1;
  int32_t completionTokens_ = -1;
  nlohmann::ordered_json timings_;
};

// "stop" / "length" / "tool_calls" / ... as Ember's reason ("stop" covers both end-of-generation
// and a stop string; OpenAI does not tell them apart).
FinishReason finishReasonFromWire(std::string_view reason);

}  // namespace ember::openai
