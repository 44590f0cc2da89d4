#pragma once
// Generator: what the app, the CLI, the benchmark and the API server talk to. It answers
// GenerationRequests with a stream of RequestEvents. EngineHost (the local engine on its own
// thread) implements it; so does RemoteGenerator (an OpenAI-compatible server over HTTP). It is
// not a Backend: a remote server has no forward pass and no KV blocks.
//
// Every method is thread-safe. Events of one request arrive in order on the generator's own
// thread (never inside the caller's submit), and each request ends with exactly one
// Kind::Finished event, also when it fails, is aborted or the generator shuts down.
#include <cstdint>
#include <string>
#include <vector>

#include "ember/engine.h"
#include "ember/request.h"

namespace ember {

// One model a generator can answer with.
struct GeneratorModel {
  std::string id;         // the name clients use in GenerationRequest::model
  std::string ownedBy;    // "ember" for local files, the server's name for remote ones
  int32_t contextLength = 0;  // 0: unknown
  ModelInfo info;         // filled for local models
};

// A snapshot for gauges and health checks.
struct GeneratorStatus {
  enum class State { Empty, Loading, Ready, Failed };
  State state = State::Empty;
  std::string message;      // why it failed, or what is loading
  int32_t running = 0;      // requests being computed
  int32_t waiting = 0;      // accepted, waiting for a slot
  KvCacheStats kvCache;     // local engines only
};

class Generator {
 public:
  virtual ~Generator() = default;

  // Queues the request; the sink receives its events. Throws ember::Error for a request that
  // cannot be queued at all (no model, bad settings, empty prompt); nothing is queued then.
  virtual RequestId submit(GenerationRequest request, EventSink sink) = 0;
  // Ends the request as cancelled within one engine step (its KV blocks are freed); unknown or
  // finished ids are ignored.
  virtual void abort(RequestId id) = 0;

  virtual std::vector<GeneratorModel> models() const = 0;
  virtual GeneratorStatus status() const = 0;
};

}  // namespace ember
