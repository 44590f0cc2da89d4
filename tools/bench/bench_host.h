#pragma once
// The engine the figures run on: an EngineHost, as in the app and ember-serve. The host's thread
// steps the engine; a figure submits its requests and waits for their Finished events.
#include <cstddef>
#include <functional>
#include <vector>

#include "ember/engine_host.h"

namespace ember::bench {

class BenchHost {
 public:
  explicit BenchHost(const EngineOptions& options);  // loads the model; throws ember::Error

  const ModelInfo& info() const { return info_; }
  size_t vocabSize() const { return vocabSize_; }
  KvCacheStats kvCacheStats();  // read on the engine thread, between steps

  // Called on the engine thread with the index of the request and each of its events.
  using EventObserver = std::function<void(size_t, const RequestEvent&)>;
  // Submits the requests together (the engine adds them before the same step, as a batch
  // arriving at once) and returns each one's stats, in order, once all have finished; failed
  // requests come back with FinishReason::Error. The stats are the engine's own: the host's
  // hand-off (RequestStats::hostDelayMs) is taken out of queue wait, TTFT and total again, so the
  // figures keep measuring what they measured when the benchmark stepped the engine itself.
  std::vector<RequestStats> runTogether(std::vector<GenerationRequest> requests,
                                        const EventObserver& observe = {});
  // Chats opened one at a time while the earlier ones answer: submits requests[0], then each
  // next one once the one before it has streamed `startAfterPieces` text pieces (or finished).
  // Returns each one's stats, in order, as runTogether does.
  std::vector<RequestStats> runStaggered(std::vector<GenerationRequest> requests,
                                         int startAfterPieces);
  // One request; throws ember::Error("<what> failed: ...") when it fails.
  RequestStats run(GenerationRequest request, const char* what = "benchmark request");

 private:
  EngineHost host_;
  ModelInfo info_;
  size_t vocabSize_ = 0;
};

}  // namespace ember::bench
