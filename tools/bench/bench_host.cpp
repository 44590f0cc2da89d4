#include "bench_host.h"

#include <condition_variable>
#include <mutex>
#include <string>

#include "ember/error.h"

namespace ember::bench {

BenchHost::BenchHost(const EngineOptions& options) : info_(host_.load(options)) {
  host_.withEngine([this](Engine* engine) { vocabSize_ = engine ? engine->vocabSize() : 0; });
}

KvCacheStats BenchHost::kvCacheStats() {
  KvCacheStats stats;
  host_.withEngine([&](Engine* engine) {
    if (engine) stats = engine->kvCacheStats();
  });
  return stats;
}

std::vector<RequestStats> BenchHost::runTogether(std::vector<GenerationRequest> requests,
                                                 const EventObserver& observe) {
  std::mutex mutex;
  std::condition_variable finished;
  size_t remaining = requests.size();
  std::vector<RequestStats> stats(requests.size());
  std::vector<EventSink> sinks;
  for (size_t i = 0; i < requests.size(); ++i) {
    sinks.push_back([&, i](const RequestEvent& e) {
      if (observe) observe(i, e);
      if (e.kind != RequestEvent::Kind::Finished) return;
      RequestStats s = e.stats ? *e.stats : RequestStats{};
      s.queueWaitMs -= s.hostDelayMs;
      if (s.ttftMs > 0) s.ttftMs -= s.hostDelayMs;
      s.totalMs -= s.hostDelayMs;
      std::lock_guard lock(mutex);
      stats[i] = std::move(s);
      if (--remaining == 0) finished.notify_one();
    });
  }
  host_.submitAll(std::move(requests), std::move(sinks));
  std::unique_lock lock(mutex);
  finished.wait(lock, [&] { return remaining == 0; });
  return stats;
}

std::vector<RequestStats> BenchHost::runStaggered(std::vector<GenerationRequest> requests,
                                                  int startAfterPieces) {
  std::mutex mutex;
  std::condition_variable changed;
  size_t remaining = requests.size();
  std::vector<RequestStats> stats(requests.size());
  std::vector<int> pieces(requests.size(), 0);
  std::vector<bool> done(requests.size(), false);
  for (size_t i = 0; i < requests.size(); ++i) {
    if (i > 0) {  // wait for the chat before this one to be answering
      std::unique_lock lock(mutex);
      changed.wait(lock, [&] { return done[i - 1] || pieces[i - 1] >= startAfterPieces; });
    }
    host_.submit(std::move(requests[i]), [&, i](const RequestEvent& e) {
      std::lock_guard lock(mutex);
      if (e.kind == RequestEvent::Kind::Text) ++pieces[i];
      if (e.kind == RequestEvent::Kind::Finished) {
        RequestStats s = e.stats ? *e.stats : RequestStats{};
        s.queueWaitMs -= s.hostDelayMs;  // as in runTogether
        if (s.ttftMs > 0) s.ttftMs -= s.hostDelayMs;
        s.totalMs -= s.hostDelayMs;
        stats[i] = std::move(s);
        done[i] = true;
        --remaining;
      }
      changed.notify_all();
    });
  }
  std::unique_lock lock(mutex);
  changed.wait(lock, [&] { return remaining == 0; });
  return stats;
}

RequestStats BenchHost::run(GenerationRequest request, const char* what) {
  std::vector<GenerationRequest> one;
  one.push_back(std::move(request));
  RequestStats stats = std::move(runTogether(std::move(one)).front());
  if (stats.finishReason == FinishReason::Error)
    throw Error(std::string(what) + " failed: " + stats.error);
  return stats;
}

}  // namespace ember::bench
