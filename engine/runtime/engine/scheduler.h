#pragma once
// Decides what each step computes. The plan is data: for each running sequence, how many of its
// tokens to run now (a prompt chunk, or 1 when decoding). Decodes come first, then prompt chunks
// within the step's token budget, so a long prompt does not stall other streams.
#include <cstdint>
#include <deque>
#include <vector>

#include "runtime/engine/block_allocator.h"
#include "runtime/engine/sequence.h"

namespace ember {

struct ScheduledWork {
  Sequence* sequence = nullptr;
  int32_t tokenCount = 0;
};

struct SchedulerLimits {
  int32_t maxRunning = 4;
  int32_t tokenBudget = 512;
  int32_t blockSize = 16;
};

class Scheduler {
 public:
  explicit Scheduler(const SchedulerLimits& limits) : limits_(limits) {}

  // Admits waiting sequences while there is room, then plans the step. Sequences that cannot
  // get the KV blocks they need are returned in `outOfBlocks` (the engine finishes them).
  std::vector<ScheduledWork> schedule(std::deque<Sequence*>& waiting,
                                      std::vector<Sequence*>& running, BlockAllocator& blocks,
                                      std::vector<Sequence*>& outOfBlocks);

 private:
  // Grows the block table to hold `tokens` tokens; false when the pool runs out.
  bool reserve(Sequence& sequence, int32_t tokens, BlockAllocator& blocks) const;
  SchedulerLimits limits_;
};

}  // namespace ember
