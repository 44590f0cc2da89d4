#include "backend/cuda/cuda_check.h"

namespace ember::cuda {

void throwCudaError(const CudaSite& site, const std::string& call, const std::string& error) {
  std::string where = site.layer >= 0 ? "layer " + std::to_string(site.layer) + ", " + call : call;
  throw CudaError(std::string("CUDA error in ") + site.phase + " (" + where + "): " + error);
}

void checkCublas(cublasStatus_t status, const CudaSite& site, const char* call) {
  if (status != CUBLAS_STATUS_SUCCESS)
    throwCudaError(site, call, std::string("cuBLAS ") + cublasGetStatusString(status));
}

}  // namespace ember::cuda
