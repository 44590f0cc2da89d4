#pragma once
// Router: a Generator over several named upstream Generators (remote servers, the local engine).
//
// A request goes to an upstream that serves its model: the one that served the conversation's
// earlier turns while it is healthy and not more than `affinityMaxImbalance` requests busier than
// the least busy (its prefix cache then holds the conversation), else the one with the fewest
// outstanding requests (ties in turn). Health checks eject an upstream after consecutive failures
// and re-admit it after consecutive successes. A request that an upstream refused before anything
// streamed (RequestStats::retryable) is sent to another; once text has streamed, a failure is
// the client's to see. models() is the union of the healthy upstreams' models.
#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "client/remote_generator.h"
#include "ember/generator.h"

namespace ember::openai {

struct RouterUpstream {
  std::string name;
  std::shared_ptr<Generator> generator;
  // Health probe; null: always healthy (the local engine host).
  std::function<HealthCheck()> probe;
  // The upstream's models, asked when it is admitted and on every tenth healthy check; null:
  // generator->models().
  std::function<std::vector<GeneratorModel>()> listModels;
};

// A RemoteGenerator as an upstream: probed with checkHealth(), listed with fetchModels().
RouterUpstream remoteUpstream(std::shared_ptr<RemoteGenerator> remote);
// A generator owned elsewhere (ember-serve's EngineHost), healthy while its status is Ready. It
// must outlive the router.
RouterUpstream localUpstream(Generator& local, std::string name);

struct RouterOptions {
  std::chrono::milliseconds healthInterval{2000};
  int ejectAfterFailures = 3;
  int readmitAfterSuccesses = 2;
  bool affinity = true;
  int affinityMaxImbalance = 4;  // outstanding requests above the least busy candidate
  size_t affinityEntries = 4096;
  int maxAttempts = 3;  // upstreams one request may try before anything streamed
};

// Per-upstream figures for metrics and tests.
struct UpstreamCounters {
  std::string name;
  bool healthy = false;
  int32_t outstanding = 0;
  uint64_t routed = 0;            // requests sent to it (retries included)
  uint64_t completed = 0;         // finished without error
  uint64_t failed = 0;            // finished with an error the client saw
  uint64_t retriedElsewhere = 0;  // refused before streaming, sent to another upstream
  uint64_t affinityHits = 0;      // routed to it because it served the conversation before
  uint64_t ejections = 0;
  uint64_t readmissions = 0;
  uint64_t promptTokens = 0;
  uint64_t cachedPromptTokens = 0;
  uint64_t generatedTokens = 0;
  std::string lastError;  // the last failed health check or refused request
  std::vector<std::string> models;
};

class Router final : public Generator {
 public:
  // Runs one round of health checks before it returns (an upstream that answers is admitted at
  // once, one that does not starts ejected), then checks every healthInterval on its own thread.
  Router(std::vector<RouterUpstream> upstreams, RouterOptions options = {});
  ~Router() override;  // stops the health thread; open requests are aborted
  Router(const Router&) = delete;
  Router& operator=(const Router&) = delete;

  RequestId submit(GenerationRequest request, EventSink sink) override;
  void abort(RequestId id) override;
  std::vector<GeneratorModel> models() const override;
  GeneratorStatus status() const override;

  std::vector<UpstreamCounters> counters() const;
  void checkHealthNow();  // one round of health checks on the calling thread

  struct State;  // internal, shared with the upstreams' event sinks

 private:
  std::shared_ptr<State> state_;
};

}  // namespace ember::openai
