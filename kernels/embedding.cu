// embedRows: the token-embedding lookup straight from the (quantized) table. The CPU reference is
// CpuBackend::embedTokens (dequantizeRow, then * scale); the test compares with it bit for bit.
#include "dequantize_rows.cuh"

namespace ember::kernels {

cudaError_t embedRows(WeightType type, const void* table, int32_t width, const int32_t* tokenIds,
                      int32_t tokens, float scale, float* out, cudaStream_t stream) {
  // Ids are not range-checked here (the table's row count is not passed); the caller validates
  // them on the host. A negative id yields a zero row.
  if (tokens < 0 || (tokens > 0 && !tokenIds)) return cudaErrorInvalidValue;
  return quant::launchDequantizeRows(type, table, tokenIds, tokens, width, scale, out, stream);
}

}  // namespace ember::kernels
