#pragma once
// The backend chosen at run time: EngineOptions::backend ("auto", "cpu" or "cuda").
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "backend/backend.h"
#include "backend/prepare_progress.h"

namespace ember::gguf {
class GgufFile;
}

namespace ember {

// "auto": the CUDA backend when this build has it and a CUDA device is present, else the CPU
// backend; "cpu"; "cuda" (throws ember::Error saying why when it is not available). threads: the
// CPU backend's threads (<= 0: one per physical core). The CUDA device and graphs follow
// EMBER_CUDA_DEVICE and EMBER_CUDA_GRAPHS. `file` must outlive the backend.
// With "auto", a CUDA backend that cannot be built (a weight type its kernels lack, too little
// device memory) falls back to the CPU backend; `autoFallbackReason`, when given, receives the
// error (empty when there was no fallback). "cuda" throws that error instead.
// kernels: the CPU backend's kernels, "fast", "reference" or "approx" (EngineOptions::kernels);
// throws ember::Error for another name. progress (optional): the weights being prepared (CPU
// repack, CUDA upload); it may throw to stop the load, which then propagates (no fallback).
std::unique_ptr<Backend> makeBackend(const gguf::GgufFile& file, const std::string& choice,
                                     int threads, std::string* autoFallbackReason = nullptr,
                                     const std::string& kernels = "reference",
                                     const PrepareProgress& progress = {});

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
