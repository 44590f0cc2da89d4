#pragma once
// The CUDA implementation of ember::Backend: the layer of model/transformer_layer.h, as the CPU
// backend runs it, over the kernels of kernels/include/ember/kernels/kernels.h, on one stream.
//
// Weights live on the device (uploaded once); the KV block pool is fp16 in the kernels' layout,
// per layer keys (blockCount + 1, n_kv_head, blockSize, head_dim) then values (blockCount + 1,
// n_kv_head, blockSize, value_dim); the extra block (index blockCount) is the scratch block that
// padded decode steps write to. Linear layers use quantMatVec for steps of at most
// kMaxMatVecBatch tokens, else dequantize-to-fp16 + cuBLAS. Decode steps replay CUDA graphs
// (cuda_graphs.h).
#include <cstdint>
#include <memory>
#include <string>

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include "backend/backend.h"
#include "backend/cuda/cuda_backend_entry.h"
#include "backend/cuda/cuda_graphs.h"
#include "backend/cuda/cuda_expert_ffn.h"
#include "backend/cuda/cuda_step_plan.h"
#include "backend/cuda/cuda_weights.h"
#include "backend/cuda/cuda_workspace.h"
#include "gguf/gguf_file.h"
#include "model/model_config.h"
#include "model/transformer_layer.h"

namespace ember::cuda {

class CudaBackend final : public Backend {
 public:
  // Throws ember::Error when there is no device, a tensor's type is unsupported or the weights
  // do not fit.
  CudaBackend(const gguf::GgufFile& file, const model::ModelConfig& config,
              const CudaBackendOptions& options);
  ~CudaBackend() override;
  CudaBackend(const CudaBackend&) = delete;
  CudaBackend& operator=(const CudaBackend&) = delete;

  std::string name() const override;
  BackendMemoryInfo memoryInfo() const override;
  size_t kvBytesPerBlock(int32_t blockSize) const override;
  void allocateKvCache(const KvCacheShape& shape) override;
  const KvCacheShape& kvCacheShape() const override { return kvShape_; }
  void forward(const ForwardBatch& batch, ForwardOutput& out) override;
  size_t vocabSize() const override { return size_t(config_.vocabSize); }
  bool copyBlock(int32_t from, int32_t to) override;
  bool readKvBlock(int32_t block, std::span<std::byte> out) override;
  bool writeKvBlock(int32_t block, std::span<const std::byte> in) override;
  std::optional<uint64_t> freeMemoryBytes() const override;  // cudaMemGetInfo's free bytes

  const model::ModelConfig& config() const { return config_; }
  int device() const { return device_; }
  const GraphStats& graphStats() const { return graphs_.stats(); }

 private:
  friend class CudaLayerOps;  // the layer operations (cuda_backend_layer.cpp) run on our buffers

  // Copies one KV block (all layers) between the pool and host memory; false for a bad block.
  bool transferKvBlock(int32_t block, std::byte* host, size_t bytes, cudaMemcpyKind kind);
  // Device pointers into the uploaded metadata of the current step.
  struct StepInputs {
    const int32_t* tokenIds;
    const int32_t* tokenSequence;
    const int32_t* tokenPosition;
    const int32_t* slotMapping;
    const int32_t* outputIndex;
    const int32_t* blockTables;
  };

  void bindDevice() const;
  void check(cudaError_t err, const char* call) const { checkCuda(err, site_, call); }
  void reserveWorkspace(const StepPlan& plan);
  StepInputs uploadMetadata(const StepPlan& plan);
  void downloadLogits(const StepPlan& plan, ForwardOutput& out);

  // cuda_backend_layer.cpp: everything between the metadata upload and the logits download;
  // only enqueues work on stream_ (it is what a CUDA graph captures).
  void runModel(const StepPlan& plan, const StepInputs& in);
  void computeLogits(const StepPlan& plan, const StepInputs& in);
  // y (tokens, w.rows) = x (tokens, w.cols) W^T
  void project(const DeviceMatrix& w, const float* x, int32_t tokens, float* y);
  // cuda_backend_experts.cpp: y (tokens, n_embd) = the layer's mixture of experts over x.
  // Waits for the stream once (the routing is worked out on the host).
  void expertFeedForward(int32_t layer, const float* x, int32_t tokens, float* y);
  // The attention kernel's shape for a layer's attention step (model/transformer_layer.h).
  kernels::AttentionShape attentionShape(const model::AttentionStep& step) const;
  __half* keyCache(int32_t layer) const;
  __half* valueCache(int32_t layer) const;

  model::ModelConfig config_;
  int device_ = 0;
  std::string deviceName_;
  mutable CudaSite site_;
  cudaStream_t stream_ = nullptr;
  cublasHandle_t cublas_ = nullptr;
  DeviceWeights weights_;
  CudaWorkspace ws_;
  ExpertBuffers experts_;  // mixture-of-experts models only
  DecodeGraphs graphs_;
  StepPlan plan_;  // reused between steps

  KvCacheShape kvShape_;
  DeviceMemory kvCache_;      // (n_layer, {keys, values}) as described above
  size_t kvHalvesPerLayer_ = 0;
};

}  // namespace ember::cuda
