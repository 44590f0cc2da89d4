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

#ifdef EMBER_CUDA_FAULT_INJECTION
// Fault injection for tests, compiled only into builds with the tests (EMBER_BUILD_TESTS; the
// package is built without them). Armed, the `nth` checked call (1-based, counted from arming)
// whose name starts with `callPrefix` ("" matches every call) reports `error` instead of its own
// result, once. Device allocations ("cudaMalloc", "cudaMallocHost") fail before allocating, as
// a full device does; other calls have run, and their result is replaced.
namespace testing {
void armFault(const std::string& callPrefix, cudaError_t error, long nth = 1);
void disarmFault();
long faultsInjected();    // how many calls reported an injected error since arming
long callsSinceArmed();   // how many checked calls matched the prefix since arming
// The result the call reports: `actual`, or the armed error when this call is the nth.
cudaError_t resultOf(const char* call, cudaError_t actual);
}  // namespace testing
#endif

inline void checkCuda(cudaError_t err, const CudaSite& site, const char* call) {
#ifdef EMBER_CUDA_FAULT_INJECTION
  err = testing::resultOf(call, err);
#endif
  if (err != cudaSuccess) throwCudaError(site, call, cudaGetErrorString(err));
}

void checkCublas(cublasStatus_t status, const CudaSite& site, const char* call);

}  // namespace ember::cuda
