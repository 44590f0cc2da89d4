#pragma once
// The one door between the engine and the CUDA backend built as a module (libember_cuda.so),
// which the engine opens with dlopen only when a CUDA device is asked for or listed: a process
// that never asks maps neither the module nor the CUDA runtime and cuBLAS it links.
//
// The module exports one C symbol, kCudaModuleEntryName, returning this table. The table passes
// C++ types (std::string, Backend, GgufFile) and exceptions, so both sides must agree on them:
// the loader reads abiVersion first (its offset never moves), then compares emberVersion and
// interfaceHash (EMBER_CUDA_INTERFACE_HASH: the headers of those types and the compiler, see
// engine/CMakeLists.txt) with its own before touching any other field.
#include <cstddef>
#include <memory>
#include <string>

#include "backend/cuda/cuda_backend_entry.h"

namespace ember::cuda {

// Raised whenever this table, Backend (backend/backend.h) or a type passed through them changes.
inline constexpr int kCudaModuleAbiVersion = 1;
inline constexpr const char* kCudaModuleEntryName = "ember_cuda_module_table";
inline constexpr const char* kCudaModuleFileName = "libember_cuda.so";

struct CudaModuleTable {
  int abiVersion;            // kCudaModuleAbiVersion of the module's build; first, always
  const char* emberVersion;  // EMBER_VERSION_STRING
  const char* interfaceHash;  // EMBER_CUDA_INTERFACE_HASH
  // The functions of cuda_backend_entry.h and the device queries of cuda_device.h; each may
  // throw ember::Error as documented there.
  int (*deviceCount)(std::string* reason);
  CudaBackendOptions (*optionsFromEnvironment)();
  std::unique_ptr<Backend> (*makeBackend)(const gguf::GgufFile& file,
                                          const CudaBackendOptions& options);
  int (*selectDevice)(int requested);
  std::string (*deviceName)(int device);
  size_t (*freeDeviceBytes)(int device);
};

// The table of the code linked into this binary (cuda_module_entry.cpp): what the module
// exports, and what programs that link the backend directly (the GPU tests) hand the loader
// with useLinkedCudaModule (backend/cuda_module.h).
const CudaModuleTable* linkedCudaModuleTable();

}  // namespace ember::cuda

extern "C" {
// The module's entry point (kCudaModuleEntryName).
using EmberCudaModuleEntry = const ember::cuda::CudaModuleTable* (*)();
}
