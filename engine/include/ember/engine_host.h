#pragma once
// EngineHost: the Engine on its own thread, as a Generator. submit/abort are thread-safe and
// return at once; the thread steps the engine while there is work and otherwise sleeps on a
// condition variable (no polling). Model load and unload run on the same thread, between steps:
// requests still running on the old model finish with an error first.
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "ember/engine.h"
#include "ember/generator.h"

namespace ember {

class EngineHost : public Generator {
 public:
  EngineHost();            // starts the thread, with no model
  ~EngineHost() override;  // fails what is running ("shutting down"), stops and joins the thread

  // Loads a model, replacing the current one; blocks until it is loaded and returns its info.
  // Throws ember::Error (bad file, too big, ...); the host is then Empty/Failed. With `control`,
  // the load reports its progress there (on the engine thread) and control->cancel() from any
  // thread stops it: LoadCancelled is thrown and the host is Empty (the old model was freed
  // when the load began).
  ModelInfo load(const EngineOptions& options, LoadControl* control = nullptr);
  void unload();

  RequestId submit(GenerationRequest request, EventSink sink) override;
  // Submits requests[i] with sinks[i] at once: every request is checked first (the first bad one
  // throws and none is queued), then all are queued together, so the engine thread adds them
  // before the same step, as requests arriving together would be (the batch benchmarks).
  std::vector<RequestId> submitAll(std::vector<GenerationRequest> requests,
                                   std::vector<EventSink> sinks);
  void abort(RequestId id) override;
  std::vector<GeneratorModel> models() const override;
  GeneratorStatus status() const override;

  // Runs fn on the engine thread between steps with the loaded engine (nullptr when none) and
  // waits for it: token counting, scoreTokens, checks after a run. fn must not call the host.
  void withEngine(const std::function<void(Engine*)>& fn);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace ember
