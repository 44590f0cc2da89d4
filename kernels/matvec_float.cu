// quantMatVec for the float formats: F16, BF16, F32 (matvec_kernel.cuh).
#include "matvec_kernel.cuh"

namespace ember::kernels::matvec {

cudaError_t launchFloatMatVec(WeightType type, const void* weight, size_t rowBytes, int32_t rows,
                              int32_t cols, const float* x, int32_t batch, float* y,
                              cudaStream_t stream) {
  using namespace quant;
  switch (type) {
    case WeightType::F16:
      return launchMatVec<FormatF16>(weight, rowBytes, rows, cols, x, batch, y, stream);
    case WeightType::BF16:
      return launchMatVec<FormatBF16>(weight, rowBytes, rows, cols, x, batch, y, stream);
    case WeightType::F32:
      return launchMatVec<FormatF32>(weight, rowBytes, rows, cols, x, batch, y, stream);
    default:
      return cudaErrorInvalidValue;
  }
}

}  // namespace ember::kernels::matvec
