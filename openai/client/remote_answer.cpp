#include "remote_answer.h"

#include <cmath>

#include "ember/error.h"
#include "remote_protocol.h"

namespace ember::openai {

namespace {
using Json = nlohmann::ordered_json;

double msBetween(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}

int32_t intField(const Json& j, const char* key, int32_t fallback) {
  if (j.is_object() && j.contains(key) && j[key].is_number_integer()) return j[key].get<int32_t>();
  return fallback;
}
}  // namespace

FinishReason finishReasonFromWire(std::string_view reason) {
  if (reason == "length") return FinishReason::Length;
  if (reason == "stop" || reason == "tool_calls" || reason == "function_call" ||
      reason == "content_filter")
    return FinishReason::Stop;
  if (reason == "abort" || reason == "cancelled") return FinishReason::Cancelled;
  return FinishReason::Stop;
}

std::vector<AnswerPiece> RemoteAnswer::onData(std::string_view data, Clock::time_point now) {
  std::vector<AnswerPiece> pieces;
  if (data == "[DONE]") {
    sawDone_ = true;
    return pieces;
  }
  const Json chunk = Json::parse(data, nullptr, /*allow_exceptions=*/false);
  if (chunk.is_discarded() || !chunk.is_object()) {
    std::string shown(data.substr(0, 120));
    throw Error("the server sent malformed stream data (not a JSON chunk): '" + shown + "'");
  }
  if (chunk.contains("error") || (chunk.contains("object") && chunk["object"] == "error"))
    throw Error("the server reported an error mid-stream: " + errorBodyMessage(data));
  if (chunk.contains("usage") && chunk["usage"].is_object()) readUsage(chunk["usage"]);
  if (chunk.contains("timings") && chunk["timings"].is_object()) timings_ = chunk["timings"];
  if (!chunk.contains("choices") || !chunk["choices"].is_array()) return pieces;
  for (const Json& choice : chunk["choices"]) {
    if (!choice.is_object() || intField(choice, "index", 0) != 0) continue;
    auto take = [&](const Json& holder, const char* key, bool reasoning) {
      if (holder.is_object() && holder.contains(key) && holder[key].is_string()) {
        std::string text = holder[key].get<std::string>();
        if (!text.empty()) pieces.push_back({std::move(text), reasoning});
      }
    };
    if (choice.contains("delta")) {  // chat completion chunk
      const Json& delta = choice["delta"];
      take(delta, "reasoning_content", true);
      take(delta, "reasoning", true);
      take(delta, "content", false);
    } else {
      take(choice, "text", false);  // completion chunk
    }
    if (!pieces.empty()) {
      int32_t tokens = 0;
      if (choice.contains("logprobs") && choice["logprobs"].is_object()) {
        const Json& lp = choice["logprobs"];
        if (lp.contains("content") && lp["content"].is_array())
          tokens = static_cast<int32_t>(lp["content"].size());
        else if (lp.contains("tokens") && lp["tokens"].is_array())
          tokens = static_cast<int32_t>(lp["tokens"].size());
      }
      chunks_.push_back({now, tokens});
    }
    if (choice.contains("finish_reason") && choice["finish_reason"].is_string())
      finishReason_ = finishReasonFromWire(choice["finish_reason"].get<std::string>());
  }
  return pieces;
}

void RemoteAnswer::readUsage(const Json& usage) {
  promptTokens_ = intField(usage, "prompt_tokens", promptTokens_);
  completionTokens_ = intField(usage, "completion_tokens", completionTokens_);
  if (usage.contains("prompt_tokens_details"))
    cachedTokens_ = intField(usage["prompt_tokens_details"], "cached_tokens", cachedTokens_);
}

RequestStats RemoteAnswer::stats(Clock::time_point now, FinishReason reason,
                                 std::string error) const {
  RequestStats s;
  s.finishReason = reason != FinishReason::None ? reason
                   : finishReason_ != FinishReason::None ? finishReason_
                                                  : FinishReason::Stop;
  s.error = std::move(error);
  s.totalMs = msBetween(submitted_, now);
  const int32_t textChunks = static_cast<int32_t>(chunks_.size());
  s.generatedTokens = completionTokens_ >= 0 ? completionTokens_ : textChunks;
  if (timings_.is_object()) {
    s.serverTimings = timings_;
    if (promptTokens_ < 0) s.promptTokens = intField(timings_, "prompt_n", 0);
    s.cachedPromptTokens = intField(timings_, "cache_n", 0);
    if (timings_.contains("prompt_ms") && timings_["prompt_ms"].is_number())
      s.prefillMs = timings_["prompt_ms"].get<double>();
    if (timings_.contains("prompt_per_second") && timings_["prompt_per_second"].is_number())
      s.prefillTokensPerSecond = timings_["prompt_per_second"].get<double>();
  }
  if (promptTokens_ >= 0) s.promptTokens = promptTokens_;
  if (cachedTokens_ >= 0) s.cachedPromptTokens = cachedTokens_;
  if (chunks_.empty()) return s;
  s.ttftMs = msBetween(submitted_, chunks_.front().time);
  // Tokens per chunk where the server did not say: spread the usage's count over the chunks.
  double perChunk = 1.0;
  if (completionTokens_ > textChunks && textChunks > 0)
    perChunk = static_cast<double>(completionTokens_) / textChunks;
  for (size_t i = 1; i < chunks_.size(); ++i) {
    const double gap = msBetween(chunks_[i - 1].time, chunks_[i].time);
    const int32_t tokens = chunks_[i].tokens > 0
                               ? chunks_[i].tokens
                               : std::max<int32_t>(1, static_cast<int32_t>(std::lround(perChunk)));
    for (int32_t t = 0; t < tokens; ++t) s.interTokenMs.push_back(gap / tokens);
  }
  const double decodeMs = msBetween(chunks_.front().time, chunks_.back().time);
  if (s.generatedTokens > 1 && decodeMs > 0)
    s.decodeTokensPerSecond = (s.generatedTokens - 1) / (decodeMs / 1000.0);
  return s;
}

}  // namespace ember::openai
