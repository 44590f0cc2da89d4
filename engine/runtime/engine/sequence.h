#pragma once
// One request's state inside the engine: its tokens, how many of them are in the KV cache, its
// block table, its sampler, detokenizer and stop matcher, and its timing.
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "ember/request.h"
#include "runtime/engine/reasoning_splitter.h"
#include "runtime/sampling/sampler.h"
#include "runtime/sampling/stop_matcher.h"
#include "tokenizer/tokenizer.h"

namespace ember {

struct Sequence {
  RequestId id = 0;
  EventSink sink;
  std::vector<TokenId> tokens;  // prompt then generated tokens
  int32_t promptLength = 0;
  // Tokens whose keys/values are in the cache. The tokens after them are computed next: a prompt
  // (in chunks), or the last sampled token when decoding; after a preemption, all of them again.
  int32_t computed = 0;
  std::vector<int32_t> blockTable;
  std::vector<uint64_t> blockKeys;  // prefix-cache keys of the leading full blocks committed
  bool admitted = false;            // has been admitted once (cachedPromptTokens is set)
  bool waitingReported = false;     // a Progress event said it waits for a slot (since queued)
  int32_t preemptions = 0;
  int64_t maxNewTokens = -1;    // -1: until the context is full
  std::unique_ptr<Sampler> sampler;
  std::unique_ptr<IncrementalDetokenizer> detokenizer;
  std::unique_ptr<StopMatcher> stopMatcher;
  std::unique_ptr<ReasoningSplitter> reasoning;  // null: every piece is answer text
  bool abortRequested = false;
  bool ignoreEndOfGeneration = false;
  std::function<void(std::span<const float>)> logitsObserver;
  int32_t topLogprobs = -1;  // -1: no logprobs; otherwise how many alternatives per token
  std::vector<TokenLogprob> pendingLogprobs;  // sampled, their text not handed out yet

  RequestStats stats;
  Clock::time_point submitted;                 // after tokenizing
  std::optional<Clock::time_point> started;    // first scheduled
  std::optional<Clock::time_point> prefillStart, prefillEnd;
  std::optional<Clock::time_point> firstToken, lastToken;  // sampled tokens
  std::optional<Clock::time_point> lastPiece;  // last text piece handed out

  bool prefilling() const { return computed < promptLength; }
  // Tokens still to run before the next token can be sampled (1 when decoding).
  int32_t pending() const { return static_cast<int32_t>(tokens.size()) - computed; }
  int32_t generated() const { return static_cast<int32_t>(tokens.size()) - promptLength; }
};

}  // namespace ember
