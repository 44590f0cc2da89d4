// The CUDA module's entry table (backend/cuda/cuda_module_abi.h).
#include "backend/cuda/cuda_backend_entry.h"
#include "backend/cuda/cuda_device.h"
#include "backend/cuda/cuda_module_abi.h"
#include "ember/cuda_module_interface.h"
#include "ember/version.h"

namespace ember::cuda {

const CudaModuleTable* linkedCudaModuleTable() {
  static const CudaModuleTable table{
      kCudaModuleAbiVersion,
      EMBER_VERSION_STRING,
      EMBER_CUDA_INTERFACE_HASH,
      &cudaDeviceCount,
      &cudaOptionsFromEnvironment,
      &makeCudaBackend,
      &selectDevice,
      &deviceName,
      &freeDeviceBytes,
  };
  return &table;
}

}  // namespace ember::cuda

// The only symbol the module exports (the rest is linked with hidden visibility).
extern "C" __attribute__((visibility("default"))) const ember::cuda::CudaModuleTable*
ember_cuda_module_table() {
  return ember::cuda::linkedCudaModuleTable();
}
