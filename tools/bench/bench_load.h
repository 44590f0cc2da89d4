#pragma once
// ember-bench load: the load and memory figures of one fresh process: time from the start of
// the load (EngineHost::load) to the first token possible (the model loaded and one 1-token prompt computed),
// against the file size / the read bandwidth of that file probed in the same run; then the peak resident memory after a 512-token prompt, beside the
// KV pool the engine allocated. One repetition per process: the caller starts it again.
#include <cstdint>
#include <string>

namespace ember::bench {

struct LoadOptions {
  std::string modelPath;
  int threads = 0;
  std::string kernels;
  int32_t contextLength = 2560;  // as pp/tg
  uint64_t seed = 1234;
};

int runLoadFigure(const LoadOptions& options, bool json);

}  // namespace ember::bench
