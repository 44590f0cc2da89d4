#include "runtime/engine/scheduler.h"

#include <algorithm>

namespace ember {

bool Scheduler::reserve(Sequence& sequence, int32_t tokens, BlockAllocator& blocks) const {
  const auto needed = static_cast<size_t>((tokens + limits_.blockSize - 1) / limits_.blockSize);
  while (sequence.blockTable.size() < needed) {
    const auto block = blocks.allocate();
    if (!block) return false;
    sequence.blockTable.push_back(*block);
  }
  return true;
}

std::vector<ScheduledWork> Scheduler::schedule(std::deque<Sequence*>& waiting,
                                               std::vector<Sequence*>& running,
                                               BlockAllocator& blocks,
                                               std::vector<Sequence*>& outOfBlocks) {
  while (!waiting.empty() && static_cast<int32_t>(running.size()) < limits_.maxRunning) {
    running.push_back(waiting.front());
    waiting.pop_front();
  }
  std::vector<ScheduledWork> plan;
  int32_t budget = limits_.tokenBudget;
  // Decodes first: one token each.
  for (Sequence* s : running) {
    if (s->prefilling() || budget == 0) continue;
    if (!reserve(*s, s->computed + 1, blocks)) {
      outOfBlocks.push_back(s);
      continue;
    }
    plan.push_back({s, 1});
    --budget;
  }
  // Then prompt chunks, oldest request first.
  for (Sequence* s : running) {
    if (!s->prefilling() || budget == 0) continue;
    const int32_t chunk = std::min(budget, s->promptLength - s->computed);
    if (!reserve(*s, s->computed + chunk, blocks)) {
      outOfBlocks.push_back(s);
      continue;
    }
    plan.push_back({s, chunk});
    budget -= chunk;
  }
  return plan;
}

}  // namespace ember
