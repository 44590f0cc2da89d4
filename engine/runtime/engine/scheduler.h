#pragma once
// Decides what each step computes. The plan is data: for each running sequence, how many of its
// tokens to run now (a prompt chunk, or 1 when decoding). Within the step's token budget:
// decodes first, then the running sequences' prompt chunks, then newly admitted requests (which
// start from the longest cached prefix of their tokens), so a long prompt never stalls the
// streams already running. A step that carries decodes takes at most promptBudgetWhileDecoding
// prompt tokens (chunked prefill): every decoding stream waits for the whole step, so a big
// prompt chunk in it would freeze them all; the rest of the prompt follows in later steps. With
// nothing decoding, prompts take the whole token budget (a lone chat's first token is not
// delayed). When the KV pool runs short, the most recently admitted sequence is
// preempted: its blocks are released (its full blocks stay in the prefix cache) and it goes back
// to the front of the waiting queue to be computed again.
#include <cstdint>
#include <deque>
#include <vector>

#include "runtime/engine/block_manager.h"
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
  // Prompt tokens in a step that also decodes; >= tokenBudget: no separate cap.
  int32_t promptBudgetWhileDecoding = 512;
};

// What a step's scheduling did besides the plan.
struct ScheduleOutcome {
  std::vector<ScheduledWork> plan;
  std::vector<Sequence*> preempted;   // back in `waiting`, blocks released
  std::vector<Sequence*> outOfBlocks;  // cannot fit even alone: the engine finishes them
};

class Scheduler {
 public:
  explicit Scheduler(const SchedulerLimits& limits) : limits_(limits) {}

  ScheduleOutcome schedule(std::deque<Sequence*>& waiting, std::vector<Sequence*>& running,
                           BlockManager& blocks) const;

 private:
  // Reserves blocks for `tokens` tokens of running[index], preempting later-admitted sequences
  // (or the sequence itself) as needed. False when running[index] was preempted or cannot fit.
  bool reserveOrPreempt(size_t index, int32_t tokens, std::deque<Sequence*>& waiting,
                        std::vector<Sequence*>& running, BlockManager& blocks,
                        ScheduleOutcome& outcome, int32_t& budget) const;
  // Admits waiting sequences while there is room in the running set, the budget and the pool.
  void admit(std::deque<Sequence*>& waiting, std::vector<Sequence*>& running,
             BlockManager& blocks, ScheduleOutcome& outcome, int32_t& budget) const;

  SchedulerLimits limits_;
};

}  // namespace ember
