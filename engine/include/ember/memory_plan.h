#pragma once
// "Will it fit": the memory a model needs for a context length and a number of concurrent
// sequences (weights + KV cache + workspace) against the memory that is free, with the largest
// context that would fit and a one-line message for people. Pure arithmetic, so that the app's
// model picker, ember-cli plan and the backends' load checks agree. The inputs for one file come
// from inspectModelFile (ember/model_file.h), the free memory from
// deviceFreeMemory (ember/devices.h).
#include <cstdint>
#include <string>

namespace ember {

struct MemoryPlanInput {
  uint64_t weightBytes = 0;      // every tensor of the file, as stored
  uint64_t kvBytesPerToken = 0;  // one token's keys and values over all layers
  int32_t contextLength = 0;     // tokens per sequence
  int32_t sequences = 1;         // sequences held at once
  uint64_t workspaceBytes = 0;   // activations, scratch and library workspaces
  uint64_t availableBytes = 0;   // free memory on the device (or RAM)
  // The largest fitting context is rounded down to a multiple of this (when it is at least
  // this much), so that the suggestion is a round number of KV blocks.
  int32_t contextGranularity = 256;
};

struct MemoryPlan {
  uint64_t weightBytes = 0;
  uint64_t kvCacheBytes = 0;  // kvBytesPerToken * contextLength * sequences
  uint64_t workspaceBytes = 0;
  uint64_t neededBytes = 0;  // the sum of the three (saturates at UINT64_MAX)
  uint64_t availableBytes = 0;
  bool fits = false;
  // The largest context (tokens per sequence, a multiple of contextGranularity when at least
  // that) at which `sequences` sequences fit; 0 when not even the weights and workspace fit.
  int32_t largestContext = 0;
  // How many sequences of the requested context fit; 0 when not even one does.
  int32_t sequencesAtContext = 0;
  std::string message;  // one line, e.g. "needs 9.8 GiB (weights ... ) but 8.0 GiB is free; ..."
};

// Throws ember::Error when contextLength or sequences is not positive or kvBytesPerToken is 0.
MemoryPlan planMemory(const MemoryPlanInput& input);

// "4.3 GiB", "512.0 MiB", "20.0 KiB", "12 bytes": binary units with one decimal.
std::string formatBytes(uint64_t bytes);

}  // namespace ember
