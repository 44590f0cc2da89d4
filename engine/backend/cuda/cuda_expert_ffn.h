#pragma once
// Buffers of the CUDA mixture-of-experts feed-forward (cuda_backend_experts.cpp). The router's
// logits are copied to the host, where model::routeExperts picks each token's experts (the same
// code and float order as llama.cpp's build_moe_ffn); the grouping by expert goes back to the
// device, and each chosen expert runs its gate, up and down products over the rows of the tokens
// that chose it, through the dense path's projections (matvec kernels for up to 8 rows, cuBLAS
// beyond). An expert no token chose is never read.
//
// The copy to the host waits for the stream, once per layer; a step with experts therefore
// cannot be captured into a CUDA graph, and the backend runs such models without graphs.
// T = tokens, k = experts per token, G = T * k (token, rank) pairs, E = n_expert.
#include <cstdint>

#include "backend/cuda/cuda_device.h"
#include "model/expert_routing.h"
#include "model/model_config.h"

namespace ember::cuda {

class ExpertBuffers {
 public:
  // Grows the buffers for `tokens` (they only grow).
  void reserve(const model::ModelConfig& config, int32_t tokens, const CudaSite& site);
  size_t bytes() const { return device_.bytes() + host_.bytes(); }

  // Device.
  float* logits = nullptr;         // (T, E) router logits
  float* input = nullptr;          // (G, n_embd) the tokens' inputs, grouped by expert
  float* gate = nullptr;           // (G, n_ff_exp) gate, then act(gate) * up
  float* up = nullptr;             // (G, n_ff_exp)
  float* output = nullptr;         // (G, n_embd) each expert's output for its tokens
  int32_t* rowToken = nullptr;     // (G) token of each grouped row
  int32_t* groupedRow = nullptr;   // (T, k) grouped row of each (token, rank)
  float* weights = nullptr;        // (T, k)
  // Pinned host: the logits' copy, then the routing to send back (rowToken, groupedRow,
  // weights, laid out as on the device, one copy).
  float* hostLogits = nullptr;     // (T, E)
  int32_t* hostRouting = nullptr;  // (G + G) ints then (G) floats
  model::ExpertRouting routing;    // the host's working copy

 private:
  int32_t capacity_ = 0;
  DeviceMemory device_;
  PinnedMemory host_;
};

}  // namespace ember::cuda
