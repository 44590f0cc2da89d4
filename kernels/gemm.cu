// halfGemm: y (tokens, rows) fp32 = x (tokens, cols) W^T for fp16 W (rows, cols) and x, fp32
// accumulation, through cublasGemmEx. The reference is a double-precision product on the host
// (tests/kernels/test_kernels_dequantize.cpp).
//
// Row-major to cuBLAS's column-major: a row-major (m, n) matrix with leading dimension n is the
// column-major (n, m) matrix, i.e. its transpose. So
//   W  row-major (rows, cols)    = column-major W^T (cols, rows), ld = cols
//   x  row-major (tokens, cols)  = column-major x^T (cols, tokens), ld = cols
//   y  row-major (tokens, rows)  = column-major y^T (rows, tokens), ld = rows
// and y = x W^T  <=>  y^T = W x^T = op_T(stored W^T) * op_N(stored x^T):
//   cublasGemmEx(OP_T, OP_N, m = rows, n = tokens, k = cols, A = W (lda = cols),
//                B = x (ldb = cols), C = y (ldc = rows)).
#include "ember/kernels/kernels.h"

namespace ember::kernels {

cublasStatus_t halfGemm(cublasHandle_t handle, const __half* weight, int32_t rows, int32_t cols,
                        const __half* x, int32_t tokens, float* y) {
  if (!handle) return CUBLAS_STATUS_NOT_INITIALIZED;
  if (rows < 0 || cols <= 0 || tokens < 0) return CUBLAS_STATUS_INVALID_VALUE;
  if (rows == 0 || tokens == 0) return CUBLAS_STATUS_SUCCESS;
  if (!weight || !x || !y) return CUBLAS_STATUS_INVALID_VALUE;
  // Host scalars: the handle must use CUBLAS_POINTER_MODE_HOST (cuBLAS's default).
  const float alpha = 1.f, beta = 0.f;
  return cublasGemmEx(handle, CUBLAS_OP_T, CUBLAS_OP_N, rows, tokens, cols, &alpha, weight,
                      CUDA_R_16F, cols, x, CUDA_R_16F, cols, &beta, y, CUDA_R_32F, rows,
                      CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
}

}  // namespace ember::kernels
