#pragma once
// The backend chosen at run time: EngineOptions::backend ("auto", "cpu" or "cuda").
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "backend/backend.h"
#include "ember/devices.h"
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

// Why "auto" gave a CPU backend, for the backend string the user sees: `autoFallbackReason`
// when makeBackend set one, else cudaUnavailableReason() in a build with the CUDA backend (a
// CPU-only build says nothing: CUDA was never an option). Empty when there is nothing to say.
std::string cudaNotUsedReason(const std::string& autoFallbackReason);

// availableBackends, cudaUnavailableReason and deviceFreeMemory are public: ember/devices.h.

}  // namespace ember
