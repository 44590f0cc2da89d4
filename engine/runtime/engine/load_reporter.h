#pragma once
// A model load's progress as the caller's LoadControl hears it, and its cancel checks. The two
// stages share the bar equally: reading the tensor data is [0, 0.5), preparing the weights
// [0.5, 1), and 1 is said only once the engine is ready. The fraction never decreases (a CUDA
// backend that falls back to the CPU restarts its preparing, the bar waits for it).
#include <cstdint>
#include <string>

#include "backend/prepare_progress.h"
#include "ember/load_progress.h"

namespace ember {

class LoadReporter {
 public:
  explicit LoadReporter(LoadControl* control) : control_(control) {}
  bool active() const { return control_ != nullptr; }
  // Throws LoadCancelled when the caller asked to stop.
  void checkCancelled() const;
  void reading(uint64_t done, uint64_t total);    // checks for cancel too
  void preparing(uint64_t done, uint64_t total);  // checks for cancel too
  void done();
  // For the backend; empty without a LoadControl, so backends skip the calls.
  PrepareProgress prepareProgress();

 private:
  void report(LoadProgress::Stage stage, uint64_t done, uint64_t total, double fraction);
  LoadControl* control_;
  double fraction_ = 0;
};

// Reads the tensor data section of the file at `path` (bytes [offset, offset + size)) once,
// in chunks, reporting each: the disk's part of a load happens here, measured and cancellable,
// instead of as page faults in the first prompt. It goes through the page cache that the
// mapping reads from, into one small buffer (the process's memory does not grow). Throws
// ember::Error when the file cannot be read.
void readTensorData(const std::string& path, uint64_t offset, uint64_t size,
                    LoadReporter& reporter);

}  // namespace ember
