#pragma once
// The load-time "will it fit" check of the KV pool: before Engine::load allocates the pool, the
// weights + the pool about to be allocated + the step workspace are set against the memory the
// backend reports free (model::planMemory), and a pool that would not fit fails the load with
// the plan's message (the numbers and the largest context that fits) instead of an allocation
// failure part way through.
#include <cstdint>
#include <string>

#include "backend/backend.h"
#include "model/memory_plan.h"

namespace ember {

namespace model {
struct ModelConfig;
}

struct KvPoolRequest {
  KvCacheShape shape;           // the pool about to be allocated
  size_t kvBytesPerBlock = 0;   // the backend's, for shape.blockSize
  int32_t contextLength = 0;    // tokens per sequence
  int32_t maxSequences = 1;     // sequences the pool is sized for
  int32_t stepTokenBudget = 1;  // tokens per step (the workspace grows with it)
};

// The plan for `request` on a backend that already holds `held` (its weights, and any workspace
// and pool) with `freeBytes` free besides. What the backend holds counts as available, since the
// plan counts it as needed. A pool of maxSequences full contexts is planned as maxSequences x
// (context rounded up to whole blocks); a pool of any other size (EngineOptions::kvCacheBytes)
// as one sequence of all its tokens.
model::MemoryPlan planKvPool(const model::ModelConfig& config, const BackendMemoryInfo& held,
                             const KvPoolRequest& request, uint64_t freeBytes);

// The load error for a plan that does not fit: "the model does not fit in the memory of
// <backend>: <plan message>".
std::string kvPoolErrorMessage(const model::MemoryPlan& plan, const std::string& backendName);

// Asks the backend for its free memory and throws ember::Error (kvPoolErrorMessage) when the
// pool would not fit; does nothing when the backend cannot say (the CPU backend).
void requireKvPoolFits(const Backend& backend, const model::ModelConfig& config,
                       const KvPoolRequest& request);

}  // namespace ember
