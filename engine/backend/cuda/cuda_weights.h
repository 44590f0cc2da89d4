#pragma once
// The model's weights in device memory, uploaded once from the mapped GGUF file into one
// allocation: matrices keep their GGUF type (the kernels read the quantized blocks directly);
// the small 1-D tensors (norm weights, biases, rope factors) are converted to float32 on the host
// first, as the CPU backend does, so the kernels read them directly whatever the file stores.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "backend/cuda/cuda_device.h"
#include "backend/prepare_progress.h"
#include "model/model_weights.h"

#include <ember/kernels/kernels.h>

namespace ember::cuda {

struct DeviceMatrix {
  kernels::WeightType type = kernels::WeightType::F32;
  int32_t rows = 0;  // output features (GGUF shape[1])
  int32_t cols = 0;  // input features (GGUF shape[0], contiguous)
  const void* data = nullptr;  // (rows, weightRowBytes(type, cols)) on the device
};

// A mixture-of-experts layer's router and experts (expertCount 0: a dense layer). The stacked
// matrices hold every expert's rows one expert after the other: expert e's gate is rows
// [e * n_ff_exp, (e + 1) * n_ff_exp) of `gate`.
struct DeviceExpertWeights {
  int32_t expertCount = 0;
  DeviceMatrix router;  // (n_expert, n_embd)
  DeviceMatrix gate;    // (n_expert * n_ff_exp, n_embd)
  DeviceMatrix up;      // (n_expert * n_ff_exp, n_embd)
  DeviceMatrix down;    // (n_expert * n_embd, n_ff_exp)
  // Biases (gpt-oss) on the device, or null: one row per expert.
  const float* gateBias = nullptr;  // (n_expert, n_ff_exp)
  const float* upBias = nullptr;    // (n_expert, n_ff_exp)
  const float* downBias = nullptr;  // (n_expert, n_embd)
  std::vector<float> routerBias;    // (n_expert) on the host, where the routing is worked out
};

// Rows [first, first + count) of a matrix, as a matrix of its own (one expert of a stack).
DeviceMatrix matrixRows(const DeviceMatrix& stacked, int32_t first, int32_t count);

struct DeviceLayerWeights {
  DeviceMatrix wq, wk, wv, wo;           // attention projections (parts of attn_qkv when fused)
  DeviceMatrix ffnGate, ffnUp, ffnDown;  // feed-forward (gate, up: parts of ffn_up when fused)
  // float32 on the device; null when the model has no such tensor.
  const float* attnNorm = nullptr;      // (n_embd)
  const float* ffnNorm = nullptr;       // (n_embd)
  const float* postAttnNorm = nullptr;  // (n_embd)
  const float* postFfnNorm = nullptr;   // (n_embd)
  const float* qNorm = nullptr;         // (head_dim)
  const float* kNorm = nullptr;         // (head_dim)
  const float* bq = nullptr;            // (n_head * head_dim)
  const float* bk = nullptr;            // (n_kv_head * head_dim)
  const float* bv = nullptr;            // (n_kv_head * value_dim)
  const float* bo = nullptr;            // (n_embd)
  const float* bGate = nullptr;         // (n_ff) feed-forward biases, each optional
  const float* bUp = nullptr;           // (n_ff)
  const float* bDown = nullptr;         // (n_embd)
  const float* attnSinks = nullptr;     // (n_head) gpt-oss's sink logits
  DeviceExpertWeights experts;          // in place of ffnGate/Up/Down in a mixture-of-experts layer
};

struct DeviceWeights {
  DeviceMatrix tokenEmbedding;       // (n_vocab, n_embd)
  DeviceMatrix output;               // (n_vocab, n_embd); the same memory as the embedding when tied
  const float* outputNorm = nullptr;  // (n_embd)
  const float* ropeFreqs = nullptr;   // (rope_dims / 2) or null
  const float* ropeFreqsLong = nullptr;  // (rope_dims / 2) LongRoPE's long factors, or null
  std::vector<DeviceLayerWeights> layers;
  int64_t largestMatrixElements = 0;  // rows * cols of the largest matrix (fp16 scratch size)
  int32_t largestCols = 0;            // widest input of any matrix
  DeviceMemory memory;                // everything above lives here
};

// Uploads the bound tensors; throws ember::Error naming a tensor whose type the kernels do not
// support, CudaError when the device runs out of memory.
DeviceWeights uploadWeights(const model::ModelWeights& weights,
                            const PrepareProgress& progress = {});

}  // namespace ember::cuda
