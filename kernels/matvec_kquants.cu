// quantMatVec for the K-quant super-block formats: Q4_K, Q5_K, Q6_K (matvec_kernel.cuh).
#include "matvec_kernel.cuh"

namespace ember::kernels::matvec {

cudaError_t launchKQuantMatVec(WeightType type, const void* weight, size_t rowBytes, int32_t rows,
                               int32_t cols, const float* x, int32_t batch, float* y,
                               cudaStream_t stream) {
  using namespace quant;
  switch (type) {
    case WeightType::Q4_K:
      return launchMatVec<FormatQ4_K>(weight, rowBytes, rows, cols, x, batch, y, stream);
    case WeightType::Q5_K:
      return launchMatVec<FormatQ5_K>(weight, rowBytes, rows, cols, x, batch, y, stream);
    case WeightType::Q6_K:
      return launchMatVec<FormatQ6_K>(weight, rowBytes, rows, cols, x, batch, y, stream);
    default:
      return cudaErrorInvalidValue;
  }
}

}  // namespace ember::kernels::matvec
