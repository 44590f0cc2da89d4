#pragma once
// Turns a step's plan into one ForwardBatch, runs the backend, and hands back each sequence's
// logits row. Its buffers are reused from step to step.
#include <span>
#include <vector>

#include "backend/backend.h"
#include "runtime/engine/scheduler.h"

namespace ember {

class ModelRunner {
 public:
  explicit ModelRunner(Backend& backend) : backend_(backend) {}

  // Runs the plan. Afterwards logitsFor(i) is the next-token logits of plan[i] when that work
  // ended its prompt or was a decode (empty span for a prompt chunk that did not end it).
  void execute(std::span<const ScheduledWork> plan);
  std::span<const float> logitsFor(size_t planIndex) const;

  // All positions' logits for one sequence of tokens already laid out in `blockTable`.
  void scoreAll(std::span<const TokenId> tokens, std::span<const int32_t> blockTable,
                std::vector<float>& logits);

 private:
  Backend& backend_;
  std::vector<TokenId> tokens_;          // (T)
  std::vector<BatchSequence> sequences_;  // (plan size)
  std::vector<int32_t> rowOf_;           // (plan size) logits row, or -1
  ForwardOutput output_;
};

}  // namespace ember
