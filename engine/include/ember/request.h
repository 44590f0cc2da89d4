#pragma once
// What a caller gives the engine for one answer, and what it gets back: text pieces as they are
// produced, then the request's statistics.
#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "ember/sampling_params.h"

namespace ember {

using RequestId = uint64_t;
using Clock = std::chrono::steady_clock;

enum class FinishReason { None, Eos, Stop, Length, Cancelled, Error };
std::string_view finishReasonName(FinishReason reason);  // "eos", "stop", "length", ...

// Log-probabilities of sampled tokens (GenerationRequest::logprobs). They come from the softmax of
// the model's raw logits at that position: before penalties, temperature, top-k/top-p/min-p, as
// llama.cpp's server reports them by default (its post_sampling_probs off) and as OpenAI's are
// independent of the request's temperature. Natural log, so every value is <= 0.
inline constexpr int32_t kMaxTopLogprobs = 20;

struct TokenAlternative {
  int32_t token = 0;
  std::string text;     // the token's bytes (special tokens as their text); may be partial UTF-8
  float logprob = 0;
};

struct TokenLogprob {
  int32_t token = 0;    // the sampled token
  std::string text;     // its bytes, as TokenAlternative::text
  float logprob = 0;
  std::vector<TokenAlternative> top;  // the topLogprobs most likely tokens, most likely first
};

struct GenerationRequest {
  // Which model answers, for a Generator that serves several (a router, a remote server); empty:
  // the generator's own (the one model an EngineHost has loaded).
  std::string model;
  // Either chat messages, rendered with the model's chat template ({"role", "content"} objects
  // plus any fields the template reads), or a raw prompt tokenized as it is.
  nlohmann::ordered_json messages = nlohmann::ordered_json::array();
  std::optional<std::string> prompt;
  std::optional<std::vector<int32_t>> promptTokens;  // or prompt token ids, used as they are
  nlohmann::ordered_json tools;  // null: none
  SamplingParams sampling;
  bool ignoreEndOfGeneration = false;  // benchmarks: always generate maxTokens tokens
  // Report each sampled token's log-probability (RequestEvent::logprobs) and the topLogprobs
  // (0..kMaxTopLogprobs) most likely tokens at its position. Off: nothing is computed.
  bool logprobs = false;
  int32_t topLogprobs = 0;
  bool reportPromptIds = false;  // copy the prompt's token ids into RequestStats.promptIds
  // Called on the engine's thread with the next-token logits (vocab) before each sample; for
  // log-probabilities and for checks that cached and cold prompts compute the same thing.
  std::function<void(std::span<const float>)> logitsObserver;
};

struct RequestStats {
  double queueWaitMs = 0;      // submission (after tokenizing) to the first step that ran it
  double tokenizeMs = 0;       // template rendering and tokenization
  double prefillMs = 0;        // first prompt chunk start to the prompt's last chunk done
  double prefillTokensPerSecond = 0;
  double ttftMs = 0;           // submission to the first text piece handed to the consumer
  double decodeTokensPerSecond = 0;  // (generated - 1) / (last token - first token)
  double totalMs = 0;
  // EngineHost only: submit() to the engine thread taking the request (the hand-off), already
  // counted in queueWaitMs, ttftMs (when set) and totalMs.
  double hostDelayMs = 0;
  std::vector<double> interTokenMs;  // gap before each text piece after the first
  int32_t promptTokens = 0;
  int32_t cachedPromptTokens = 0;  // prompt tokens whose KV was reused (prefix caching)
  int32_t generatedTokens = 0;
  int32_t droppedTurns = 0;  // oldest turns left out to fit the context window
  // Set when the model's chat template could not render this conversation and a built-in
  // template was used instead: what failed and which template was used (shown to the user).
  std::string templateWarning;
  std::vector<int32_t> promptIds;  // the prompt as tokenized, when the request asked for it
  int32_t preemptions = 0;   // times its KV blocks were taken back and it was computed again
  FinishReason finishReason = FinishReason::None;
  std::string error;         // set when finishReason == Error
  uint64_t seed = 0;         // the seed the sampler used (reproduces the answer)
  // Error only: the generator refused the request before computing or streaming anything (a
  // remote server that refused the connection or shed load); another generator may take it.
  bool retryable = false;
  // Answers from a remote server: the timings it reported itself (llama.cpp's `timings` object:
  // prompt_n, prompt_ms, predicted_per_second, cache_n, ...), null when it reported none. The
  // fields above are measured by the client.
  nlohmann::ordered_json serverTimings;
};

struct RequestEvent {
  // Text: a piece of the answer. Progress: the prompt is being read (one per prompt chunk, and
  // one when the request waits for a free slot). Finished: the last event, with the stats.
  // Consumers ignore kinds they do not use; only Finished ends a request.
  enum class Kind { Text, Progress, Finished };
  RequestId id = 0;
  Kind kind = Kind::Text;
  std::string text;  // Kind::Text: a piece of UTF-8 that never ends inside a character
  // Kind::Text: the piece belongs to the model's reasoning section (<think>...</think>), not to
  // the answer.
  bool reasoning = false;
  // Kind::Text, when the request asked for logprobs: the tokens sampled since the previous Text
  // event, whose bytes this piece completes. The last Text event of an answer may have empty text
  // and only logprobs (tokens whose bytes made no character). Tokens that formed a stop string,
  // or the end-of-generation token, are never reported (their text is not part of the answer).
  std::vector<TokenLogprob> logprobs;
  // Kind::Progress: prompt tokens done so far (cached ones included) of promptTokens, of which
  // cachedPromptTokens were reused; waiting = true while queued behind other requests.
  int32_t promptDone = 0;
  int32_t promptTokens = 0;
  int32_t cachedPromptTokens = 0;
  bool waiting = false;
  Clock::time_point time;
  const RequestStats* stats = nullptr;  // Kind::Finished
};

// Called on the engine's thread, from inside Engine::step (or addRequest for immediate errors).
using EventSink = std::function<void(const RequestEvent&)>;

// Percentile (0..100) of a sample by linear interpolation; 0 for an empty sample.
double percentile(std::vector<double> values, double p);

}  // namespace ember
