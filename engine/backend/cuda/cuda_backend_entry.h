#pragma once
// Building the CUDA backend without seeing CUDA types (for backend_factory.cpp).
#include <memory>
#include <string>

#include "backend/backend.h"
#include "backend/prepare_progress.h"

namespace ember::gguf {
class GgufFile;
}

namespace ember::cuda {

struct CudaBackendOptions {
  int device = -1;         // -1: EMBER_CUDA_DEVICE when set, else the device with most free memory
  bool cudaGraphs = true;  // capture decode steps into CUDA graphs
  PrepareProgress progress;  // optional: hears the weights' upload, tensor by tensor
};

// The options the environment asks for: EMBER_CUDA_DEVICE=<n> picks a device, EMBER_CUDA_GRAPHS=0
// switches graphs off. Throws ember::Error on a malformed value.
CudaBackendOptions cudaOptionsFromEnvironment();

// Number of usable CUDA devices; 0 with `reason` set when there are none.
int cudaDeviceCount(std::string* reason);

// Reads the configuration from `file` and uploads the model to the device (file must outlive the
// backend only while it is being built: the weights are copied). Throws ember::Error.
std::unique_ptr<Backend> makeCudaBackend(const gguf::GgufFile& file,
                                         const CudaBackendOptions& options);

}  // namespace ember::cuda
