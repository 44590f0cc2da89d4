// quantMatVec for the 32-element block formats: Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, MXFP4
// (matvec_kernel.cuh).
#include "matvec_kernel.cuh"

namespace ember::kernels::matvec {

cudaError_t launchLegacyMatVec(WeightType type, const void* weight, size_t rowBytes, int32_t rows,
                               int32_t cols, const float* x, int32_t batch, float* y,
                               cudaStream_t stream) {
  using namespace quant;
  switch (type) {
    case WeightType::Q4_0:
      return launchMatVec<FormatQ4_0>(weight, rowBytes, rows, cols, x, batch, y, stream);
    case WeightType::Q4_1:
      return launchMatVec<FormatQ4_1>(weight, rowBytes, rows, cols, x, batch, y, stream);
    case WeightType::Q5_0:
      return launchMatVec<FormatQ5_0>(weight, rowBytes, rows, cols, x, batch, y, stream);
    case WeightType::Q5_1:
      return launchMatVec<FormatQ5_1>(weight, rowBytes, rows, cols, x, batch, y, stream);
    case WeightType::Q8_0:
      return launchMatVec<FormatQ8_0>(weight, rowBytes, rows, cols, x, batch, y, stream);
    case WeightType::MXFP4:
      return launchMatVec<FormatMxfp4>(weight, rowBytes, rows, cols, x, batch, y, stream);
    default:
      return cudaErrorInvalidValue;
  }
}

}  // namespace ember::kernels::matvec
