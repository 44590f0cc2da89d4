#pragma once
// The CPU implementation of ember::Backend: the forward pass of the supported architectures
// (model::ModelConfig) over quantized weights viewed in the mapped GGUF, with a paged KV cache
// in fp16 (as llama.cpp's default cache): per layer, keys (blockCount, n_kv_head, blockSize,
// head_dim) and values (blockCount, n_kv_head, blockSize, value_dim), so one head's positions
// in a block are contiguous. The GgufFile must outlive the backend (the weights are views).
#include <memory>
#include <string>
#include <vector>

#include "backend/backend.h"
#include "backend/cpu/cpu_backend_weights.h"
#include "backend/cpu/cpu_backend_workspace.h"
#include "backend/cpu/ops/attention.h"
#include "backend/cpu/ops/rope.h"
#include "backend/cpu/thread_pool.h"
#include "gguf/gguf_file.h"
#include "model/model_config.h"

namespace ember::cpu {

class CpuBackend final : public Backend {
 public:
  // threads <= 0: one per physical core. Throws ember::Error when the file's tensors do not match
  // the configuration or use an unsupported type.
  // kernels: see KernelMode (Fast and Approx repack weights here, at load).
  // `progress` (optional) hears the weights being prepared (repacked) at load.
  CpuBackend(const gguf::GgufFile& file, const model::ModelConfig& config, int threads,
             KernelMode kernels = KernelMode::Reference, const PrepareProgress& progress = {});

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

  const model::ModelConfig& config() const { return config_; }
  int threads() const { return pool_.size(); }
  KernelMode kernels() const { return kernels_; }
  // Whether several-token steps take the int8 attention (ops/attention_int8.h): the approx
  // kernels on a CPU with AVX-512 VNNI, for head sizes it takes. (Not "fast": SmolLM2-135M's
  // greedy continuations leave llama.cpp's on 2 of 6 golden prompts even with float attention
  // that only skips llama.cpp's fp16 rounding of the softmax weights.)
  bool quantizedAttention() const;
  // Whether several-token steps take the AMX bf16 attention (ops/attention_amx.h) instead of the
  // int8 one: approx kernels, AMX usable (EMBER_CPU_AMX=0 turns it off), head sizes fit. Not
  // fast: its different fp32 summation order flips enough of SmolLM2's and Gemma-3's greedy
  // continuations against llama.cpp to miss fast's bounds (as any attention but the reference's
  // order does).
  bool amxAttention() const;

 private:
  friend class CpuLayerOps;  // the layer operations (cpu_backend_layer.cpp) run on our buffers

  // Checks the batch against the KV pool and the model; fills tokenSequence/tokenPosition and
  // outputTokens; returns the longest attention span. Throws ember::Error on a bad batch.
  int64_t planBatch(const ForwardBatch& batch, int64_t& outputs);
  void embedTokens(const ForwardBatch& batch, int64_t tokens);
  void computeRopeAngles(int64_t tokens);
  // The logits of the output rows: `outputRows(r)` fills ws_.outputRows' row r (the normed
  // hidden row of output token r) as the output product's row prologue.
  void computeLogits(int64_t outputs, ForwardOutput& out, RowPrologue outputRows);
  ops::KvLayerView kvLayer(int32_t layer) const;

  model::ModelConfig config_;
  KernelMode kernels_;
  CpuWeights weights_;
  ThreadPool pool_;
  std::vector<ops::RopeParams> ropeVariants_;  // distinct RoPE settings among the layers
  std::vector<int> layerRopeVariant_;          // (n_layer) index into ropeVariants_

  KvCacheShape kvShape_;
  std::unique_ptr<uint16_t[]> kvCache_;  // fp16 (n_layer, {keys, values}) as described above
  size_t kvHalvesPerLayer_ = 0;

  CpuWorkspace ws_;
};

// Reads the configuration from `file` and builds a CPU backend over it (file must outlive it).
std::unique_ptr<Backend> makeCpuBackend(const gguf::GgufFile& file, int threads,
                                        KernelMode kernels = KernelMode::Reference,
                                        const PrepareProgress& progress = {});

}  // namespace ember::cpu
