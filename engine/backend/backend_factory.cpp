#include "backend/backend_factory.h"

#include <fstream>
#include <sstream>

#include "backend/cpu/cpu_backend.h"
#include "ember/error.h"
#include "ember/load_progress.h"

#if EMBER_WITH_CUDA
#include "backend/cuda/cuda_backend_entry.h"
#include "backend/cuda/cuda_device.h"
#endif

namespace ember {
namespace {

// MemAvailable of /proc/meminfo in bytes: what the kernel can hand out without swapping.
std::optional<uint64_t> availableSystemBytes() {
  std::ifstream meminfo("/proc/meminfo");
  std::string line;
  while (std::getline(meminfo, line)) {
    std::istringstream fields(line);
    std::string key;
    uint64_t kib = 0;
    if (fields >> key >> kib && key == "MemAvailable:") return kib * 1024;
  }
  return std::nullopt;
}

}  // namespace

std::string cudaUnavailableReason() {
#if EMBER_WITH_CUDA
  std::string reason;
  return cuda::cudaDeviceCount(&reason) > 0 ? std::string() : reason;
#else
  return "this build of Ember has no CUDA support (it was built without nvcc)";
#endif
}

std::vector<std::string> availableBackends() {
  std::vector<std::string> names{"cpu"};
  if (cudaUnavailableReason().empty()) names.push_back("cuda");
  return names;
}

std::unique_ptr<Backend> makeBackend(const gguf::GgufFile& file, const std::string& choice,
                                     int threads, std::string* autoFallbackReason,
                                     const std::string& kernelsName,
                                     const PrepareProgress& progress) {
  if (autoFallbackReason) autoFallbackReason->clear();
  const cpu::KernelMode kernels = cpu::parseKernelMode(kernelsName);
  if (choice != "auto" && choice != "cpu" && choice != "cuda")
    throw ember::Error("unknown backend \"" + choice + "\" (choose auto, cpu or cuda)");
  if (choice == "cpu") return cpu::makeCpuBackend(file, threads, kernels, progress);
  const std::string reason = cudaUnavailableReason();
  if (!reason.empty()) {
    if (choice == "cuda") throw ember::Error("the CUDA backend is not available: " + reason);
    return cpu::makeCpuBackend(file, threads, kernels, progress);
  }
#if EMBER_WITH_CUDA
  cuda::CudaBackendOptions cudaOptions = cuda::cudaOptionsFromEnvironment();
  cudaOptions.progress = progress;
  if (choice == "cuda") return cuda::makeCudaBackend(file, cudaOptions);
  try {
    return cuda::makeCudaBackend(file, cudaOptions);
  } catch (const LoadCancelled&) {
    throw;  // the caller asked to stop: no fallback
  } catch (const ember::Error& e) {
    if (autoFallbackReason) *autoFallbackReason = e.what();
    return cpu::makeCpuBackend(file, threads, kernels, progress);
  }
#else
  return cpu::makeCpuBackend(file, threads, kernels, progress);  // not reached: the reason above is never empty
#endif
}

std::optional<FreeMemory> deviceFreeMemory(const std::string& backendChoice) {
#if EMBER_WITH_CUDA
  if (backendChoice != "cpu" && cudaUnavailableReason().empty()) {
    try {
      const int device = cuda::selectDevice(cuda::cudaOptionsFromEnvironment().device);
      const uint64_t bytes = cuda::freeDeviceBytes(device);
      return FreeMemory{bytes, "cuda:" + std::to_string(device) + " (" +
                                   cuda::deviceName(device) + ")"};
    } catch (const ember::Error&) {
      // A device that cannot be asked: with "auto" the load would fall back to the CPU
      // backend, so the RAM figure below is the useful one; with "cuda" there is none.
      if (backendChoice == "cuda") return std::nullopt;
    }
  }
#endif
  if (backendChoice == "cuda" && !cudaUnavailableReason().empty()) return std::nullopt;
  if (const auto bytes = availableSystemBytes()) return FreeMemory{*bytes, "system RAM"};
  return std::nullopt;
}

}  // namespace ember
