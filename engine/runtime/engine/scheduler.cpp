#include "runtime/engine/scheduler.h"

#include <algorithm>

#include "runtime/engine/sequence_blocks.h"

namespace ember {

namespace {

void preempt(Sequence* victim, std::deque<Sequence*>& waiting, std::vector<Sequence*>& running,
             BlockManager& blocks, ScheduleOutcome& outcome, int32_t& budget) {
  // A victim already planned this step gives its tokens back.
  auto& plan = outcome.plan;
  for (auto it = plan.begin(); it != plan.end(); ++it) {
    if (it->sequence != victim) continue;
    budget += it->tokenCount;
    plan.erase(it);
    break;
  }
  releaseBlocks(*victim, blocks);
  ++victim->preemptions;
  std::erase(running, victim);
  waiting.push_front(victim);
  outcome.preempted.push_back(victim);
}

}  // namespace

bool Scheduler::reserveOrPreempt(size_t index, int32_t tokens, std::deque<Sequence*>& waiting,
                                 std::vector<Sequence*>& running, BlockManager& blocks,
                                 ScheduleOutcome& outcome, int32_t& budget) const {
  Sequence* s = running[index];
  while (!reserveBlocks(*s, tokens, blocks)) {
    if (running.size() == 1) {  // alone and still too big for the pool
      std::erase(running, s);
      outcome.outOfBlocks.push_back(s);
      return false;
    }
    Sequence* victim = running.back();  // the most recently admitted
    preempt(victim, waiting, running, blocks, outcome, budget);
    if (victim == s) return false;
  }
  return true;
}

void Scheduler::admit(std::deque<Sequence*>& waiting, std::vector<Sequence*>& running,
                      BlockManager& blocks, ScheduleOutcome& outcome, int32_t& budget) const {
  while (!waiting.empty() && budget > 0 &&
         static_cast<int32_t>(running.size()) < limits_.maxRunning) {
    Sequence* s = waiting.front();
    acquireCachedPrefix(*s, blocks);
    // Admit only when the pool can hold the whole sequence next to the running ones (unless
    // nothing runs): admitting more than fits would only preempt it again.
    if (!running.empty() && blocks.availableCount() < blocksStillNeeded(*s, limits_.blockSize)) {
      releaseBlocks(*s, blocks);
      break;
    }
    waiting.pop_front();
    running.push_back(s);
    const int32_t chunk = std::min(budget, s->pending());
    if (!reserveOrPreempt(running.size() - 1, s->computed + chunk, waiting, running, blocks,
                          outcome, budget))
      break;
    outcome.plan.push_back({s, chunk});
    budget -= chunk;
  }
}

ScheduleOutcome Scheduler::schedule(std::deque<Sequence*>& waiting,
                                    std::vector<Sequence*>& running,
                                    BlockManager& blocks) const {
  ScheduleOutcome outcome;
  int32_t budget = limits_.tokenBudget;
  // Decodes first, one token each, oldest first.
  for (size_t i = 0; i < running.size() && budget > 0;) {
    Sequence* s = running[i];
    if (s->pending() != 1) {
      ++i;
      continue;
    }
    if (!reserveOrPreempt(i, s->computed + 1, waiting, running, blocks, outcome, budget))
      continue;  // s left `running`; running[i] is now the next one
    outcome.plan.push_back({s, 1});
    --budget;
    ++i;
  }
  // Prompt tokens from here on come out of `budget`, capped when the step decodes. (A preempted
  // decode gives its token back to it; that only makes the step cheaper.)
  if (!outcome.plan.empty()) budget = std::min(budget, limits_.promptBudgetWhileDecoding);
  // Then the prompt chunks of running sequences.
  for (size_t i = 0; i < running.size() && budget > 0;) {
    Sequence* s = running[i];
    const bool planned = std::any_of(outcome.plan.begin(), outcome.plan.end(),
                                     [s](const ScheduledWork& w) { return w.sequence == s; });
    if (planned || s->pending() <= 1) {
      ++i;
      continue;
    }
    const int32_t chunk = std::min(budget, s->pending());
    if (!reserveOrPreempt(i, s->computed + chunk, waiting, running, blocks, outcome, budget))
      continue;
    outcome.plan.push_back({s, chunk});
    budget -= chunk;
    ++i;
  }
  // Not in a step that preempted: the victims would come straight back in.
  if (outcome.preempted.empty()) admit(waiting, running, blocks, outcome, budget);
  return outcome;
}

}  // namespace ember
