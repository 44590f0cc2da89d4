#include "backend/cuda/cuda_check.h"

#ifdef EMBER_CUDA_FAULT_INJECTION
#include <mutex>
#include <string_view>
#endif

namespace ember::cuda {

void throwCudaError(const CudaSite& site, const std::string& call, const std::string& error) {
  std::string where = site.layer >= 0 ? "layer " + std::to_string(site.layer) + ", " + call : call;
  throw CudaError(std::string("CUDA error in ") + site.phase + " (" + where + "): " + error);
}

#ifdef EMBER_CUDA_FAULT_INJECTION
namespace testing {
namespace {
std::mutex faultMutex;
std::string armedPrefix;
cudaError_t armedError = cudaSuccess;
long armedAt = 0, matched = 0, injected = 0;
bool armed = false;
}  // namespace

void armFault(const std::string& callPrefix, cudaError_t error, long nth) {
  std::lock_guard lock(faultMutex);
  armedPrefix = callPrefix;
  armedError = error;
  armedAt = nth;
  matched = injected = 0;
  armed = true;
}

void disarmFault() {
  std::lock_guard lock(faultMutex);
  armed = false;
}

long faultsInjected() {
  std::lock_guard lock(faultMutex);
  return injected;
}

long callsSinceArmed() {
  std::lock_guard lock(faultMutex);
  return matched;
}

cudaError_t resultOf(const char* call, cudaError_t actual) {
  std::lock_guard lock(faultMutex);
  if (!armed || std::string_view(call).substr(0, armedPrefix.size()) != armedPrefix) return actual;
  if (++matched != armedAt) return actual;
  ++injected;
  armed = false;  // once: what follows runs as usual, as after a real transient fault
  return armedError;
}
}  // namespace testing
#endif

void checkCublas(cublasStatus_t status, const CudaSite& site, const char* call) {
  if (status != CUBLAS_STATUS_SUCCESS)
    throwCudaError(site, call, std::string("cuBLAS ") + cublasGetStatusString(status));
}

}  // namespace ember::cuda
