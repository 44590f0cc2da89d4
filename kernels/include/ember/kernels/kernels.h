#pragma once
// The CUDA kernels' launchers: raw device pointers, sizes and a stream in, cudaError_t out (the
// launch error; kernels run asynchronously). No engine types. Matrices are row-major; a weight
// matrix is stored as in GGUF: (rows = output features, cols = input features), each row a run
// of quantized blocks. Activations are fp32 unless named otherwise; the KV cache is fp16.
//
// Alignment: weight, activation and output pointers must be 16-byte aligned (cudaMalloc and
// GGUF's 32-byte tensor alignment give that); float-type weights need cols % 8 == 0. Attention
// needs an even headDim <= 256, valueDim <= 256 and heads a multiple of kvHeads. Launchers
// return cudaErrorInvalidValue otherwise.
//
// Paged KV cache layout (per layer, as the CPU backend): keys (blockCount, kvHeads, blockSize,
// headDim) and values (blockCount, kvHeads, blockSize, valueDim); token t of a sequence lives in
// block blockTable[t / blockSize] at slot t % blockSize.
#include <cstddef>
#include <cstdint>

#include <cublas_v2.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

namespace ember::kernels {

// ggml's type numbers (the GGUF tensor types).
enum class WeightType : int32_t {
  F32 = 0, F16 = 1, Q4_0 = 2, Q4_1 = 3, Q5_0 = 6, Q5_1 = 7, Q8_0 = 8,
  Q4_K = 12, Q5_K = 13, Q6_K = 14, BF16 = 30, MXFP4 = 39,
};
// Bytes of one row of `cols` values (cols a multiple of the type's block size).
size_t weightRowBytes(WeightType type, int64_t cols);
bool isSupportedWeightType(WeightType type);

// ---- embedding.cu ----
// out (tokens, width) = scale * dequantized rows tokenIds[i] of table (vocab, width).
cudaError_t embedRows(WeightType type, const void* table, int32_t width, const int32_t* tokenIds,
                      int32_t tokens, float scale, float* out, cudaStream_t stream);

// ---- norm.cu ----
// y (rows, width) = x / sqrt(mean(x^2) + eps) * weight (width).
cudaError_t rmsNorm(const float* x, const float* weight, int32_t rows, int32_t width, float eps,
                    float* y, cudaStream_t stream);
// residual (rows, width) += delta; normed = rmsNorm(residual) * weight. Fused (one pass).
cudaError_t addRmsNorm(float* residual, const float* delta, const float* weight, int32_t rows,
                       int32_t width, float eps, float* normed, cudaStream_t stream);
// In place over x (rows, heads, headDim): each head normalized with weight (headDim) (QK-norm).
cudaError_t rmsNormHeads(float* x, const float* weight, int32_t rows, int32_t heads,
                         int32_t headDim, float eps, cudaStream_t stream);

// ---- rope.cu ----
struct RopeSettings {
  int32_t headDim = 0;
  int32_t ropeDims = 0;      // leading dims rotated; the rest kept
  float freqBase = 10000.f;
  float freqScale = 1.f;     // position multiplier (linear scaling)
  const float* freqFactors = nullptr;  // device (ropeDims / 2) divisors, or null
  bool neox = false;         // pairs (i, i + ropeDims/2) instead of (2i, 2i+1)
  // YaRN (ggml's rope_yarn): extFactor > 0 blends the interpolated angle freqScale * theta with
  // the extrapolated theta over the dims between corrDims, and multiplies cos and sin by
  // 1 + 0.1 ln(1 / freqScale); attnFactor multiplies cos and sin in every case (1: none).
  float extFactor = 0.f;
  float attnFactor = 1.f;
  float corrDims[2] = {0.f, 0.f};
};
// In place over x (tokens, heads, headDim); positions (tokens) on the device.
cudaError_t rope(float* x, int32_t tokens, int32_t heads, const int32_t* positions,
                 const RopeSettings& settings, cudaStream_t stream);

// ---- kv_cache.cu ----
// Writes k (tokens, kvHeads, headDim) and v (tokens, kvHeads, valueDim) as fp16 into the layer's
// caches at slotMapping[t] = block * blockSize + slot.
cudaError_t writeKvCache(const float* k, const float* v, const int32_t* slotMapping,
                         int32_t tokens, int32_t kvHeads, int32_t headDim, int32_t valueDim,
                         int32_t blockSize, __half* keyCache, __half* valueCache,
                         cudaStream_t stream);

// ---- attention.cu ----
// One step's batch as the attention kernels see it (all arrays on the device).
struct AttentionBatch {
  int32_t tokens = 0;              // query tokens in the step (T)
  int32_t sequences = 0;           // S
  const int32_t* tokenSequence = nullptr;  // (T) which sequence each query token belongs to
  const int32_t* tokenPosition = nullptr;  // (T) its position (it sees positions <= this)
  const int32_t* blockTables = nullptr;    // (S, maxBlocksPerSequence)
  int32_t maxBlocksPerSequence = 0;
  int32_t maxPosition = 0;         // largest tokenPosition + 1 in the step (sizes the split)
};
struct AttentionShape {
  int32_t heads = 0, kvHeads = 0, headDim = 0, valueDim = 0, blockSize = 16;
  float scale = 1.f;           // multiplies q.k
  // > 0: scores = cap * tanh(scale * q.k / cap) * capScale (gemma2's attention soft-cap, with
  // the score scale that follows the cap); 0: scores = scale * q.k.
  float softcap = 0.f;
  float capScale = 1.f;
  int32_t slidingWindow = 0;   // > 0: a query at p sees positions > p - slidingWindow only
  // (heads) on the device, or null: each head's sink logit joins its softmax (gpt-oss), as in
  // ggml's soft_max with sinks: it counts in the max, and e^(sink - max) in the sum.
  const float* sinks = nullptr;
};
// Workspace the attention needs for a batch (split-context partial results).
size_t pagedAttentionWorkspaceBytes(int32_t tokens, int32_t maxPosition,
                                    const AttentionShape& shape);
// out (T, heads, valueDim) = causal softmax(scores(q, k)) v over each token's own sequence,
// q (T, heads, headDim); GQA: head h reads kv head h / (heads / kvHeads).
cudaError_t pagedAttention(const float* q, const __half* keyCache, const __half* valueCache,
                           const AttentionBatch& batch, const AttentionShape& shape, float* out,
                           void* workspace, size_t workspaceBytes, cudaStream_t stream);

// ---- activations.cu ----
// out (count) = act(gate) * up; gelu: GELU tanh approximation (GeGLU), else SiLU (SwiGLU).
cudaError_t gatedActivation(const float* gate, const float* up, int64_t count, bool gelu,
                            float* out, cudaStream_t stream);
// y (rows, width) += bias (width)
cudaError_t addBias(float* y, const float* bias, int32_t rows, int32_t width,
                    cudaStream_t stream);
// y (count) += x (count)
cudaError_t addInPlace(float* y, const float* x, int64_t count, cudaStream_t stream);
// x (count) *= factor (residual and logit multipliers)
cudaError_t scaleInPlace(float* x, int64_t count, float factor, cudaStream_t stream);
// x = cap * tanh(x / cap)
cudaError_t softcap(float* x, int64_t count, float cap, cudaStream_t stream);
// Copies rows rowIndex[i] of x (rows, width) to out (count, width) (pick the logits rows).
cudaError_t gatherRows(const float* x, const int32_t* rowIndex, int32_t count, int32_t width,
                       float* out, cudaStream_t stream);

// ---- experts.cu ----
// out (count) = gpt-oss's clamped SwiGLU: g = min(gate, limit), u = clamp(up, -limit, limit),
// g * sigmoid(alpha * g) * (u + 1); out may alias gate or up.
cudaError_t swigluOai(const float* gate, const float* up, int64_t count, float alpha, float limit,
                      float* out, cudaStream_t stream);
// y (tokens, width) = sum over ranks r < k, in rank order, of weights[t, r] (tokens, k) times
// row groupedRow[t, r] (tokens, k) of outputs (pairs, width): the mixture of experts' sum.
cudaError_t combineExperts(const float* outputs, const int32_t* groupedRow, const float* weights,
                           int32_t tokens, int32_t k, int32_t width, float* y,
                           cudaStream_t stream);

// ---- matvec.cu ----
// y (batch, rows) = x (batch, cols) W^T for W (rows, cols) of `type`, batch 1..8 (decode).
cudaError_t quantMatVec(WeightType type, const void* weight, int32_t rows, int32_t cols,
                        const float* x, int32_t batch, float* y, cudaStream_t stream);
constexpr int32_t kMaxMatVecBatch = 8;

// ---- dequantize.cu ----
// dst (rows, cols) fp16 = dequantized W; for prompt chunks and large batches through cuBLAS.
cudaError_t dequantizeToHalf(WeightType type, const void* weight, int64_t rows, int64_t cols,
                             __half* dst, cudaStream_t stream);
cudaError_t floatToHalf(const float* x, int64_t count, __half* dst, cudaStream_t stream);

// ---- gemm.cu ----
// y (tokens, rows) fp32 = x (tokens, cols) W^T with fp16 inputs and fp32 accumulation
// (cublasGemmEx); the handle must already be bound to the caller's stream.
cublasStatus_t halfGemm(cublasHandle_t handle, const __half* weight, int32_t rows, int32_t cols,
                        const __half* x, int32_t tokens, float* y);

// ---- sampling.cu ----
// Per-row settings of the device sampler.
struct DeviceSampling {
  float temperature = 0.f;  // <= 0: greedy (argmax, lowest id on ties)
  int32_t topK = 0;         // 0: off
  float topP = 1.f;         // 1: off
  float uniform = 0.f;      // the row's draw in [0, 1), generated on the host (reproducible)
};
size_t sampleWorkspaceBytes(int32_t rows, int32_t vocab);
// ids (rows) = one token per logits row (rows, vocab); settings (rows) on the device.
cudaError_t sampleTokens(const float* logits, int32_t rows, int32_t vocab,
                         const DeviceSampling* settings, int32_t* ids, void* workspace,
                         size_t workspaceBytes, cudaStream_t stream);

}  // namespace ember::kernels
