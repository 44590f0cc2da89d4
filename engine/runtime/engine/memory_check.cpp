#include "runtime/engine/memory_check.h"

#include <algorithm>
#include <climits>

#include "ember/error.h"
#include "model/model_config.h"

namespace ember {
namespace {

constexpr int32_t kSuggestedContextStep = 256;  // largest-context suggestions in these steps

}  // namespace

model::MemoryPlan planKvPool(const model::ModelConfig& config, const BackendMemoryInfo& held,
                             const KvPoolRequest& request, uint64_t freeBytes) {
  const int32_t blockSize = request.shape.blockSize;
  if (blockSize <= 0 || request.shape.blockCount <= 0 || request.kvBytesPerBlock == 0)
    throw Error("memory check: the KV pool needs a positive block size, block count and size");
  const int32_t blocksPerSequence = (request.contextLength + blockSize - 1) / blockSize;

  model::MemoryPlanInput input;
  input.weightBytes = held.weightBytes;
  input.kvBytesPerToken = (request.kvBytesPerBlock + size_t(blockSize) - 1) / size_t(blockSize);
  if (request.shape.blockCount == int64_t(blocksPerSequence) * request.maxSequences) {
    input.contextLength = blocksPerSequence * blockSize;
    input.sequences = request.maxSequences;
  } else {  // a pool sized by a byte budget: one stretch of all its tokens
    input.contextLength = static_cast<int32_t>(
        std::min<int64_t>(int64_t(request.shape.blockCount) * blockSize, INT32_MAX));
    input.sequences = 1;
  }
  // The estimate, or what the backend already holds when that is more.
  input.workspaceBytes =
      std::max<uint64_t>(model::estimateWorkspaceBytes(config, request.stepTokenBudget,
                                                       request.maxSequences),
                         held.workspaceBytes);
  // What the backend holds is counted as needed above, so it is available as well.
  input.availableBytes = freeBytes + held.weightBytes + held.workspaceBytes + held.kvCacheBytes;
  // Suggestions in whole blocks.
  input.contextGranularity = (kSuggestedContextStep + blockSize - 1) / blockSize * blockSize;
  return model::planMemory(input);
}

std::string kvPoolErrorMessage(const model::MemoryPlan& plan, const std::string& backendName) {
  return "the model does not fit in the memory of " + backendName + ": " + plan.message;
}

void requireKvPoolFits(const Backend& backend, const model::ModelConfig& config,
                       const KvPoolRequest& request) {
  const std::optional<uint64_t> freeBytes = backend.freeMemoryBytes();
  if (!freeBytes) return;
  const model::MemoryPlan plan = planKvPool(config, backend.memoryInfo(), request, *freeBytes);
  if (!plan.fits) throw Error(kvPoolErrorMessage(plan, backend.name()));
}

}  // namespace ember
