#include "backend/cuda/cuda_graphs.h"

namespace ember::cuda {

DecodeGraphs::DecodeGraphs(bool enabled, std::string reasonWhenOff) {
  stats_.enabled = enabled;
  if (!enabled) stats_.disabledReason = std::move(reasonWhenOff);
}

void DecodeGraphs::clear() {
  for (auto& [key, exec] : graphs_) cudaGraphExecDestroy(exec);
  graphs_.clear();
}

void DecodeGraphs::disable(const std::string& reason) {
  clear();
  stats_.enabled = false;
  stats_.disabledReason = reason;
}

bool DecodeGraphs::launch(const Key& key, cudaStream_t stream,
                          const std::function<void()>& launches, const CudaSite& site) {
  if (!stats_.enabled) return false;
  auto found = graphs_.find(key);
  if (found == graphs_.end()) {
    if (seen_.insert(key).second) return false;  // first time: eagerly

    // Capture. The launches only enqueue work; nothing runs until the graph is launched.
    if (const cudaError_t err = cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal);
        err != cudaSuccess) {
      cudaGetLastError();
      disable(std::string("cudaStreamBeginCapture: ") + cudaGetErrorString(err));
      return false;
    }
    cudaGraph_t graph = nullptr;
    try {
      launches();
    } catch (const std::exception& e) {
      cudaStreamEndCapture(stream, &graph);  // leaves capture mode whatever happened
      if (graph) cudaGraphDestroy(graph);
      cudaGetLastError();
      disable(std::string("capture failed: ") + e.what());
      return false;  // the eager run reports the error again if it is real
    }
    cudaError_t err = cudaStreamEndCapture(stream, &graph);
    cudaGraphExec_t exec = nullptr;
    if (err == cudaSuccess) err = cudaGraphInstantiate(&exec, graph, 0);
    if (graph) cudaGraphDestroy(graph);
    if (err != cudaSuccess) {
      cudaGetLastError();
      disable(std::string("capture failed: ") + cudaGetErrorString(err));
      return false;
    }
    found = graphs_.emplace(key, exec).first;
    ++stats_.captures;
  }
  checkCuda(cudaGraphLaunch(found->second, stream), site, "cudaGraphLaunch");
  ++stats_.replays;
  return true;
}

}  // namespace ember::cuda
