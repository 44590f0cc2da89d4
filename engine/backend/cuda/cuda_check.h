#pragma once
// Every CUDA and cuBLAS call of the backend goes through checkCuda / checkCublas, which turn a
// failure into an ember::Error naming where it happened: "CUDA error in forward (layer 3,
// quantMatVec): out of memory". The engine fails the request with that message; the app lives on.
#include <cstdint>
#include <string>

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include "ember/error.h"

namespace ember::cuda {

class CudaError : public ember::Error {
 public:
  using ember::Error::Error;
};

// Where the backend is: the phase ("load", "allocateKvCache", "forward", ...) and, inside the
// forward pass, the layer (-1 outside the layers).
struct CudaSite {
  const char* phase = "load";
  int32_t layer = -1;
};

[[noreturn]] void throwCudaError(const CudaSite& site, const std::string& call,
                                 const std::string& error);

inline void checkCuda(cudaError_t err, const CudaSite& site, const char* call) {
  if (err != cudaSuccess) throwCudaError(site, call, cudaGetErrorString(err));
}

void checkCublas(cublasStatus_t status, const CudaSite& site, const char* call);

}  // namespace ember::cuda
