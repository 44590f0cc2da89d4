#include "backend/backend_factory.h"

#include "backend/cpu/cpu_backend.h"
#include "common/error.h"

#if EMBER_WITH_CUDA
#include "backend/cuda/cuda_backend_entry.h"
#endif

namespace ember {

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
                                     int threads, std::string* autoFallbackReason) {
  if (autoFallbackReason) autoFallbackReason->clear();
  if (choice != "auto" && choice != "cpu" && choice != "cuda")
    throw ember::Error("unknown backend \"" + choice + "\" (choose auto, cpu or cuda)");
  if (choice == "cpu") return cpu::makeCpuBackend(file, threads);
  const std::string reason = cudaUnavailableReason();
  if (!reason.empty()) {
    if (choice == "cuda") throw ember::Error("the CUDA backend is not available: " + reason);
    return cpu::makeCpuBackend(file, threads);
  }
#if EMBER_WITH_CUDA
  if (choice == "cuda") return cuda::makeCudaBackend(file, cuda::cudaOptionsFromEnvironment());
  try {
    return cuda::makeCudaBackend(file, cuda::cudaOptionsFromEnvironment());
  } catch (const ember::Error& e) {
    if (autoFallbackReason) *autoFallbackReason = e.what();
    return cpu::makeCpuBackend(file, threads);
  }
#else
  return cpu::makeCpuBackend(file, threads);  // not reached: the reason above is never empty
#endif
}

}  // namespace ember
