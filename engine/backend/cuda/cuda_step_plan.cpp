#include "backend/cuda/cuda_step_plan.h"

#include "backend/batch_check.h"

#include <algorithm>
#include <bit>
#include <string>

#include "ember/error.h"

namespace ember::cuda {
namespace {

bool wantsLogits(const BatchSequence& s, int32_t i) {
  return s.logits == BatchSequence::Logits::All ||
         (s.logits == BatchSequence::Logits::Last && i == s.tokenCount - 1);
}

// The shared batch checks (backend/batch_check.h); returns the largest startPosition + tokenCount.
int32_t checkBatch(const ForwardBatch& batch, const StepLimits& limits) {
  const BatchLimits shared{limits.vocabSize, limits.contextLength, limits.blockSize,
                           limits.blockCount};
  return checkForwardBatch(batch, shared, "cuda").maxEnd;
}

// The decode bucket for the batch, or 0 when it is not a decode step that fits one.
int32_t decodeBucket(const ForwardBatch& batch) {
  const size_t count = batch.sequences.size();
  if (count == 0 || count > size_t(kDecodeBuckets.back()) || batch.tokens.size() != count)
    return 0;  // every sequence has at least one token, so T == S means one token each
  return *std::lower_bound(kDecodeBuckets.begin(), kDecodeBuckets.end(), int32_t(count));
}

}  // namespace

void planStep(const ForwardBatch& batch, const StepLimits& limits, StepPlan& plan) {
  const int32_t maxEnd = checkBatch(batch, limits);
  const int32_t realTokens = int32_t(batch.tokens.size());
  const int32_t realSequences = int32_t(batch.sequences.size());
  const int32_t bucket = decodeBucket(batch);

  int32_t wanted = 0;
  for (const BatchSequence& s : batch.sequences)
    for (int32_t i = 0; i < s.tokenCount; ++i) wanted += wantsLogits(s, i) ? 1 : 0;

  plan.realTokens = realTokens;
  plan.bucket = bucket;
  plan.returnedRows = wanted;
  if (bucket > 0) {
    // Fixed shapes per (bucket, width): every token gets a logits row (the wanted ones first).
    const int32_t span = std::max(kMinGraphSpan, int32_t(std::bit_ceil(uint32_t(maxEnd))));
    plan.tokens = plan.sequences = plan.logitRows = bucket;
    plan.tableWidth = (span + limits.blockSize - 1) / limits.blockSize;
    plan.maxPosition = plan.tableWidth * limits.blockSize;
  } else {
    plan.tokens = realTokens;
    plan.sequences = realSequences;
    plan.logitRows = wanted;
    plan.tableWidth = (maxEnd + limits.blockSize - 1) / limits.blockSize;
    plan.maxPosition = maxEnd;
  }

  const size_t T = size_t(plan.tokens), W = size_t(plan.tableWidth);
  plan.metadata.assign(plan.blockTablesAt() + size_t(plan.sequences) * W, 0);
  int32_t* ids = plan.metadata.data() + plan.tokenIdsAt();
  int32_t* sequenceOf = plan.metadata.data() + plan.tokenSequenceAt();
  int32_t* positionOf = plan.metadata.data() + plan.tokenPositionAt();
  int32_t* slotOf = plan.metadata.data() + plan.slotMappingAt();
  int32_t* outputIndex = plan.metadata.data() + plan.outputIndexAt();
  int32_t* tables = plan.metadata.data() + plan.blockTablesAt();

  int32_t row = 0;
  std::vector<int32_t> unwanted;  // decode buckets: real tokens without logits, after the wanted
  for (int32_t si = 0; si < realSequences; ++si) {
    const BatchSequence& s = batch.sequences[size_t(si)];
    const size_t blocksNeeded =
        size_t(s.startPosition + s.tokenCount + limits.blockSize - 1) / size_t(limits.blockSize);
    int32_t* table = tables + size_t(si) * W;
    std::copy_n(s.blockTable.begin(), blocksNeeded, table);
    std::fill(table + blocksNeeded, table + W, limits.scratchBlock);  // never read
    for (int32_t i = 0; i < s.tokenCount; ++i) {
      const int32_t t = s.firstToken + i, position = s.startPosition + i;
      ids[t] = batch.tokens[size_t(t)];
      sequenceOf[t] = si;
      positionOf[t] = position;
      slotOf[t] = table[position / limits.blockSize] * limits.blockSize +
                  position % limits.blockSize;
      if (wantsLogits(s, i))
        outputIndex[row++] = t;
      else if (bucket > 0)
        unwanted.push_back(t);
    }
  }
  // Padding (decode buckets only): token 0 at position 0 of its own sequence, in the scratch block.
  for (size_t t = size_t(realTokens); t < T; ++t) {
    ids[t] = 0;
    sequenceOf[t] = int32_t(t);
    positionOf[t] = 0;
    slotOf[t] = limits.scratchBlock * limits.blockSize;
    std::fill(tables + t * W, tables + (t + 1) * W, limits.scratchBlock);
    unwanted.push_back(int32_t(t));
  }
  if (bucket > 0)
    for (int32_t t : unwanted) outputIndex[row++] = t;
}

}  // namespace ember::cuda
