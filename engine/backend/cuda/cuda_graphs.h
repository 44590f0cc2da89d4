#pragma once
// CUDA graphs for decode steps: the kernel sequence of a padded decode step (StepPlan::bucket,
// tableWidth) is captured once and replayed for every later step of the same shape, which saves
// the launch overhead of several hundred small kernels per token. A shape is captured the second
// time it is seen (the first runs eagerly: it warms up cuBLAS and lazily loaded kernels, which
// must not happen during a capture). If a capture fails, graphs are switched off for the
// backend's lifetime and the steps run eagerly; the reason is kept for diagnostics.
#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <utility>

#include <cuda_runtime.h>

#include "backend/cuda/cuda_check.h"

namespace ember::cuda {

struct GraphStats {
  int64_t captures = 0;
  int64_t replays = 0;
  bool enabled = true;
  std::string disabledReason;  // why graphs are off, when they are
};

class DecodeGraphs {
 public:
  using Key = std::pair<int32_t, int32_t>;  // (bucket, table width)

  explicit DecodeGraphs(bool enabled, std::string reasonWhenOff = {});
  ~DecodeGraphs() { clear(); }
  DecodeGraphs(const DecodeGraphs&) = delete;
  DecodeGraphs& operator=(const DecodeGraphs&) = delete;

  // Runs `launches` for a step of shape `key` through a graph on `stream` (capturing it when
  // due). Returns false when the caller must run `launches` eagerly instead.
  bool launch(const Key& key, cudaStream_t stream, const std::function<void()>& launches,
              const CudaSite& site);
  // Forgets every captured graph: the buffers they read or write have moved.
  void clear();
  const GraphStats& stats() const { return stats_; }

 private:
  void disable(const std::string& reason);

  GraphStats stats_;
  std::set<Key> seen_;                     // shapes run at least once
  std::map<Key, cudaGraphExec_t> graphs_;  // captured shapes
};

}  // namespace ember::cuda
