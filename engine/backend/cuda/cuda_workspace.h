#pragma once
// The CUDA forward pass's device buffers. The per-step ones grow (geometrically) when a step
// needs more than any before and are reused otherwise; growing moves them, which makes captured
// CUDA graphs stale (reserve() says so). T = token capacity, R = logit-row capacity.
#include <cstddef>
#include <cstdint>

#include <cuda_fp16.h>

#include "backend/cuda/cuda_device.h"
#include "model/model_config.h"

namespace ember::cuda {

struct WorkspaceNeeds {
  int32_t tokens = 0;
  int32_t logitRows = 0;
  size_t attentionBytes = 0;
  size_t metadataInts = 0;
};

class CudaWorkspace {
 public:
  // Fixed parts: the fp16 copy of the largest weight matrix and cuBLAS's workspace.
  void init(const model::ModelConfig& config, int64_t largestMatrixElements, int32_t largestCols,
            const CudaSite& site);
  // Grows the buffers to hold `needs`; returns true when any device address changed.
  bool reserve(const WorkspaceNeeds& needs, const CudaSite& site);
  size_t bytes() const;

  // (T, n_embd): the residual stream, the normed input of a block, a block's output, and that
  // output after its post-norm (gemma3). The final rows are gathered into blockOut, normed into
  // normed.
  float* hidden = nullptr;
  float* normed = nullptr;
  float* blockOut = nullptr;
  float* postNormed = nullptr;
  float* q = nullptr;          // (T, n_head, head_dim)
  float* k = nullptr;          // (T, n_kv_head, head_dim)
  float* v = nullptr;          // (T, n_kv_head, value_dim)
  float* attention = nullptr;  // (T, n_head, value_dim)
  float* gate = nullptr;       // (T, n_ff)
  float* up = nullptr;         // (T, n_ff)
  float* activated = nullptr;  // (T, n_ff) act(gate) * up
  __half* inputHalf = nullptr; // (T, widest matrix input) activations for cuBLAS
  float* logits = nullptr;     // (R, n_vocab)
  int32_t* metadata = nullptr; // StepPlan::metadata on the device
  int32_t* stagedMetadata = nullptr;  // the same in pinned host memory (the copy's source)
  void* attentionScratch = nullptr;
  size_t attentionScratchBytes = 0;

  __half* weightHalf = nullptr;  // (largest matrix) a weight dequantized for cuBLAS
  void* cublasScratch = nullptr;
  size_t cublasScratchBytes = 0;

 private:
  const model::ModelConfig* config_ = nullptr;
  int32_t largestCols_ = 0;
  int32_t tokenCapacity_ = 0, logitRowCapacity_ = 0;
  size_t metadataCapacity_ = 0;
  DeviceMemory activations_, attention_, logits_, metadata_, weightHalf_, cublas_;
  PinnedMemory staging_;
};

}  // namespace ember::cuda
