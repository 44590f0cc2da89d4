#pragma once
// One request's state inside the engine: its tokens, how many of them are in the KV cache, its
// block table, its sampler, detokenizer and stop matcher, and its timing.
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "ember/request.h"
#include "runtime/sampling/sampler.h"
#include "runtime/sampling/stop_matcher.h"
#include "tokenizer/tokenizer.h"

namespace ember {

struct Sequence {
  RequestId id = 0;
  EventSink sink;
  std::vector<TokenId> tokens;  // prompt then generated tokens
  int32_t promptLength = 0;
  int32_t computed = 0;         // tokens whose keys/values are in the cache
  std::vector<int32_t> blockTable;
  int64_t maxNewTokens = -1;    // -1: until the context is full
  std::unique_ptr<Sampler> sampler;
  std::unique_ptr<IncrementalDetokenizer> detokenizer;
  std::unique_ptr<StopMatcher> stopMatcher;
  bool abortRequested = false;
  bool ignoreEndOfGeneration = false;

  RequestStats stats;
  Clock::time_point submitted;                 // after tokenizing
  std::optional<Clock::time_point> started;    // first scheduled
  std::optional<Clock::time_point> prefillStart, prefillEnd;
  std::optional<Clock::time_point> firstToken, lastToken;  // sampled tokens
  std::optional<Clock::time_point> lastPiece;  // last text piece handed out

  bool prefilling() const { return computed < promptLength; }
  int32_t generated() const { return static_cast<int32_t>(tokens.size()) - promptLength; }
};

}  // namespace ember
