#include "backend/cuda_module.h"

#include <dlfcn.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <mutex>
#include <optional>

#include "backend/cuda/cuda_module_abi.h"
#include "ember/cuda_module_interface.h"
#include "ember/version.h"

namespace ember {
namespace {

std::mutex& moduleMutex() {
  static std::mutex mutex;
  return mutex;
}
std::optional<CudaModuleStatus>& moduleStatus() {
  static std::optional<CudaModuleStatus> status;
  return status;
}

std::string executableFolder() {
  char buffer[4096];
  const ssize_t n = readlink("/proc/self/exe", buffer, sizeof buffer - 1);
  if (n <= 0) return ".";
  const std::string path(buffer, size_t(n));
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? "." : path.substr(0, slash);
}

std::string lastDlError() {
  const char* error = dlerror();
  return error ? error : "unknown error";
}

}  // namespace

std::string cudaModulePath() {
  if (const char* path = std::getenv("EMBER_CUDA_MODULE"); path && *path) return path;
  return executableFolder() + "/../lib/ember/" + cuda::kCudaModuleFileName;
}

bool nvidiaDriverPresent(std::string* reason) {
  void* driver = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL);
  if (!driver) {
    // Short for the usual case: the reason ends up in every stats line of a CPU run.
    const std::string error = lastDlError();
    if (reason)
      *reason = error.find("No such file") != std::string::npos
                    ? "no NVIDIA driver on this machine (libcuda.so.1 not found)"
                    : "the NVIDIA driver cannot be loaded (" + error + ")";
    return false;
  }
  dlclose(driver);  // the module's CUDA runtime opens it again when it is used
  return true;
}

CudaModuleStatus openCudaModule(const std::string& path) {
  CudaModuleStatus status;
  struct stat info {};
  if (stat(path.c_str(), &info) != 0) {
    status.reason = "the CUDA backend module " + path + " is not installed (" +
                    std::strerror(errno) + ")";
    return status;
  }
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    status.reason = "the CUDA backend module cannot be loaded: " + lastDlError();
    return status;
  }
  const auto entry =
      reinterpret_cast<EmberCudaModuleEntry>(dlsym(handle, cuda::kCudaModuleEntryName));
  const cuda::CudaModuleTable* table = entry ? entry() : nullptr;
  if (!table) {
    status.reason = path + " is not an Ember CUDA backend module (no " +
                    cuda::kCudaModuleEntryName + ")";
  } else if (table->abiVersion != cuda::kCudaModuleAbiVersion) {
    status.reason = "the CUDA backend module " + path + " has interface version " +
                    std::to_string(table->abiVersion) + ", this Ember needs " +
                    std::to_string(cuda::kCudaModuleAbiVersion);
  } else if (std::strcmp(table->emberVersion, EMBER_VERSION_STRING) != 0 ||
             std::strcmp(table->interfaceHash, EMBER_CUDA_INTERFACE_HASH) != 0) {
    status.reason = "the CUDA backend module " + path + " was built for Ember " +
                    table->emberVersion + " (interface " + table->interfaceHash +
                    "), this is Ember " + EMBER_VERSION_STRING + " (interface " +
                    EMBER_CUDA_INTERFACE_HASH + "): rebuild or reinstall it";
  } else {
    status.table = table;
    return status;
  }
  dlclose(handle);
  return status;
}

const CudaModuleStatus& cudaModule() {
  std::lock_guard<std::mutex> lock(moduleMutex());
  std::optional<CudaModuleStatus>& status = moduleStatus();
  if (!status) {
    const std::string path = cudaModulePath();
    struct stat info {};
    std::string reason;
    if (stat(path.c_str(), &info) != 0)
      status = openCudaModule(path);  // says that it is not installed
    else if (!nvidiaDriverPresent(&reason))
      status = CudaModuleStatus{nullptr, reason};
    else
      status = openCudaModule(path);
  }
  return *status;
}

void useLinkedCudaModule(const cuda::CudaModuleTable* table) {
  std::lock_guard<std::mutex> lock(moduleMutex());
  moduleStatus() = CudaModuleStatus{table, table ? "" : "no CUDA backend was linked"};
}

}  // namespace ember
