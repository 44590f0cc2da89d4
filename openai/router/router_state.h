#pragma once
// Router's inner state, shared by router.cpp (routing, events) and router_health.cpp (the health
// checks). The upstreams' event sinks hold it by shared_ptr, so it outlives a late event.
#include <condition_variable>
#include <memory>
#include <mutex>
#include <thread>
#include <unordered_map>

#include "conversation_affinity.h"
#include "router.h"

namespace ember::openai {

struct Router::State : std::enable_shared_from_this<Router::State> {
  struct Upstream {
    RouterUpstream spec;
    UpstreamCounters counters;
    std::vector<GeneratorModel> models;
    int consecutiveFailures = 0;
    int consecutiveSuccesses = 0;
    uint64_t checks = 0;
  };
  // One client request, across the upstreams it tries.
  struct Request {
    RequestId id = 0;
    GenerationRequest request;
    EventSink sink;
    size_t upstream = 0;
    int attempt = 0;
    RequestId upstreamId = 0;
    bool upstreamIdKnown = false;
    bool cancelled = false;
    bool streamed = false;  // a text piece reached the client: no more retries
    std::string answer;     // the answer's text, for the conversation's affinity key
    std::vector<size_t> tried;
  };

  RouterOptions options;
  mutable std::mutex mutex;  // guards everything below
  std::vector<Upstream> upstreams;
  std::unordered_map<RequestId, std::shared_ptr<Request>> requests;
  ConversationAffinity affinity;
  RequestId nextId = 1;
  size_t cursor = 0;  // where the next tie among least-busy upstreams is broken
  std::condition_variable idle;  // requests became empty

  std::mutex healthMutex;
  std::condition_variable healthWake;
  bool stopping = false;
  std::thread healthThread;

  // Picks the upstream for `r` (mutex held); throws ember::Error when none can take it.
  size_t choose(const Request& r);
  // Sends `r` to the upstream choose() picks (mutex not held); throws like choose().
  void dispatch(const std::shared_ptr<Request>& r);
  void onEvent(const std::shared_ptr<Request>& r, size_t upstream, int attempt,
               const RequestEvent& e);
  void noteFailure(size_t upstream, const std::string& why);  // mutex held
  void healthRound(bool first);
  bool serves(const Upstream& u, const std::string& model) const;
};

}  // namespace ember::openai
