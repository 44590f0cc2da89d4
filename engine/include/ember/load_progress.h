#pragma once
// Progress and cancellation of a model load, for callers with a user interface (Engine::load,
// EngineHost::load). A load has two stages: the tensor data is read from the file (bytes read,
// which warms the page cache that the mapping then uses), then the backend prepares the weights
// (matrices repacked for the CPU's fast kernels, or tensors uploaded to the CUDA device).
#include <atomic>
#include <cstdint>
#include <functional>

#include "ember/error.h"

namespace ember {

struct LoadProgress {
  enum class Stage { Reading, Preparing, Done };
  Stage stage = Stage::Reading;
  uint64_t doneBytes = 0;   // of this stage
  uint64_t totalBytes = 0;  // of this stage
  // The whole load, 0..1, never decreasing; 1 only with Stage::Done (the engine is ready).
  double fraction = 0;
};

struct LoadControl {
  // Called on the loading thread (the engine's): after every chunk read and every tensor
  // prepared, so at most a few hundred times per load. Must not call into the engine.
  std::function<void(const LoadProgress&)> onProgress;
  // Set from any thread; the load stops at its next check (between chunks or tensors) and
  // throws LoadCancelled, having freed what it had built.
  std::atomic<bool> cancelRequested{false};
  void cancel() { cancelRequested.store(true); }
};

class LoadCancelled : public Error {
 public:
  LoadCancelled() : Error("loading the model was cancelled") {}
};

}  // namespace ember
