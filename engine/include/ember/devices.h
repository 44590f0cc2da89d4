#pragma once
// The compute devices of this machine as EngineOptions::backend names them, and the memory free
// on the one a model would load into.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace ember {

// The choices that work on this machine now besides "auto": "cpu", then "cuda" when this build
// has the CUDA backend and a device is present.
std::vector<std::string> availableBackends();

// Why "cuda" cannot be used here ("this build has no CUDA support", "no CUDA device on this
// machine", ...); empty when it can.
std::string cudaUnavailableReason();

// Memory free now for a model loaded with `backendChoice` ("auto", "cpu" or "cuda"): the free
// memory of the CUDA device the backend would pick when that choice means CUDA and a device is
// present (EMBER_CUDA_DEVICE, else the one with most free memory), else the system's
// MemAvailable (/proc/meminfo). `where` names it: "cuda:0 (NVIDIA H200)", "system RAM".
// nullopt when neither can be read. Asking a CUDA device creates its context (slow the first
// time in a process), so callers with a user interface ask off its thread.
struct FreeMemory {
  uint64_t bytes = 0;
  std::string where;
};
std::optional<FreeMemory> deviceFreeMemory(const std::string& backendChoice);

}  // namespace ember
