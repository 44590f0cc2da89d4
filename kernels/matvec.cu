// quantMatVec: argument checks and dispatch to the per-family launchers (matvec_legacy.cu,
// matvec_kquants.cu, matvec_float.cu; the kernel is in matvec_kernel.cuh). The CPU reference is
// the CPU backend's dequantizer followed by a dot product (tests/kernels/test_kernels_matvec.cpp).
#include "matvec_kernel.cuh"

namespace ember::kernels {

cudaError_t quantMatVec(WeightType type, const void* weight, int32_t rows, int32_t cols,
                        const float* x, int32_t batch, float* y, cudaStream_t stream) {
  const int32_t multiple = quant::requiredColumnMultiple(type);
  if (multiple == 0 || rows < 0 || cols <= 0 || cols % multiple != 0 || batch < 1 ||
      batch > kMaxMatVecBatch)
    return cudaErrorInvalidValue;
  if (rows == 0) return cudaSuccess;
  // 16-byte loads of x (and of F16/BF16/F32 weights); GGUF tensor data is 32-byte aligned.
  if (!weight || !x || !y || !quant::isAligned16(weight) || !quant::isAligned16(x))
    return cudaErrorInvalidValue;
  const size_t rowBytes = weightRowBytes(type, cols);
  if (rowBytes == 0) return cudaErrorInvalidValue;
  switch (type) {
    case WeightType::F32: case WeightType::F16: case WeightType::BF16:
      return matvec::launchFloatMatVec(type, weight, rowBytes, rows, cols, x, batch, y, stream);
    case WeightType::Q4_K: case WeightType::Q5_K: case WeightType::Q6_K:
      return matvec::launchKQuantMatVec(type, weight, rowBytes, rows, cols, x, batch, y, stream);
    default:
      return matvec::launchLegacyMatVec(type, weight, rowBytes, rows, cols, x, batch, y, stream);
  }
}

}  // namespace ember::kernels
