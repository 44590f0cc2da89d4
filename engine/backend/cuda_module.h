#pragma once
// Finding and opening the CUDA backend module (libember_cuda.so, backend/cuda/cuda_module_abi.h)
// the first time a CUDA device is asked for or listed. Nothing here includes a CUDA header: the
// engine links no CUDA library, and a process that never asks never maps one.
//
// Where the module is looked for: $EMBER_CUDA_MODULE when set (a file path), else
// <folder of the executable>/../lib/ember/libember_cuda.so (the build tree's build/lib/ember
// beside build/bin, and an installed /usr/lib/ember beside /usr/bin).
// Before opening it, the NVIDIA driver (libcuda.so.1) is probed: without one the module is not
// opened at all, so a machine without NVIDIA's driver never maps the CUDA runtime or cuBLAS.
#include <string>

namespace ember::cuda {
struct CudaModuleTable;
}

namespace ember {

struct CudaModuleStatus {
  const cuda::CudaModuleTable* table = nullptr;  // set when the module is usable
  std::string reason;                            // why not, when table is null
};

// The process's module: looked for, probed and opened once, on the first call (thread-safe).
// Never unloaded once open.
const CudaModuleStatus& cudaModule();

// Opens the module file at `path` and checks its entry point and build (no driver probe, no
// caching; a file that fails is closed again). For cudaModule() and the tests.
CudaModuleStatus openCudaModule(const std::string& path);

// Where cudaModule() looks: $EMBER_CUDA_MODULE, else the default beside the executable.
std::string cudaModulePath();

// The NVIDIA driver's library can be opened; else false with `reason` set.
bool nvidiaDriverPresent(std::string* reason);

// For programs that link the CUDA backend's code directly (the GPU tests, whose fault switch
// lives in their own copy): cudaModule() answers with `table` instead of opening the file.
// Must be called before the first cudaModule().
void useLinkedCudaModule(const cuda::CudaModuleTable* table);

}  // namespace ember
