#include "backend/backend_factory.h"

#include <fstream>
#include <sstream>

#include "backend/cpu/cpu_backend.h"
#include "backend/cuda/cuda_module_abi.h"
#include "backend/cuda_module.h"
#include "ember/error.h"
#include "ember/load_progress.h"

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

// The CUDA module (backend/cuda_module.h) when it is open and sees a device, else null with
// `reason` set.
const cuda::CudaModuleTable* usableCudaModule(std::string* reason) {
  const CudaModuleStatus& module = cudaModule();
  if (!module.table) {
#if EMBER_WITH_CUDA
    *reason = module.reason;
#else
    *reason = "this build of Ember has no CUDA support (it was built without nvcc)";
#endif
    return nullptr;
  }
  return module.table->deviceCount(reason) > 0 ? module.table : nullptr;
}

}  // namespace

std::string cudaUnavailableReason() {
  std::string reason;
  return usableCudaModule(&reason) ? std::string() : reason;
}

std::string cudaNotUsedReason(const std::string& autoFallbackReason) {
  if (!autoFallbackReason.empty()) return autoFallbackReason;
#if EMBER_WITH_CUDA
  return cudaUnavailableReason();
#else
  return cudaModule().table ? cudaUnavailableReason() : std::string();
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
  std::string reason;
  const cuda::CudaModuleTable* module = usableCudaModule(&reason);
  if (!module) {
    if (choice == "cuda") throw ember::Error("the CUDA backend is not available: " + reason);
    return cpu::makeCpuBackend(file, threads, kernels, progress);
  }
  cuda::CudaBackendOptions cudaOptions = module->optionsFromEnvironment();
  cudaOptions.progress = progress;
  if (choice == "cuda") return module->makeBackend(file, cudaOptions);
  try {
    return module->makeBackend(file, cudaOptions);
  } catch (const LoadCancelled&) {
    throw;  // the caller asked to stop: no fallback
  } catch (const ember::Error& e) {
    if (autoFallbackReason) *autoFallbackReason = e.what();
    return cpu::makeCpuBackend(file, threads, kernels, progress);
  }
}

std::optional<FreeMemory> deviceFreeMemory(const std::string& backendChoice) {
  std::string reason;
  const cuda::CudaModuleTable* module =
      backendChoice != "cpu" ? usableCudaModule(&reason) : nullptr;
  if (module) {
    try {
      const int device = module->selectDevice(module->optionsFromEnvironment().device);
      const uint64_t bytes = module->freeDeviceBytes(device);
      return FreeMemory{bytes, "cuda:" + std::to_string(device) + " (" +
                                   module->deviceName(device) + ")"};
    } catch (const ember::Error&) {
      // A device that cannot be asked: with "auto" the load would fall back to the CPU
      // backend, so the RAM figure below is the useful one; with "cuda" there is none.
      if (backendChoice == "cuda") return std::nullopt;
    }
  }
  if (backendChoice == "cuda" && !module) return std::nullopt;
  if (const auto bytes = availableSystemBytes()) return FreeMemory{*bytes, "system RAM"};
  return std::nullopt;
}

}  // namespace ember
