#include "backend/batch_check.h"

#include <algorithm>

#include "ember/error.h"

namespace ember {

BatchExtent checkForwardBatch(const ForwardBatch& batch, const BatchLimits& limits,
                              const std::string& backend) {
  const auto bad = [&backend](const std::string& what) {
    throw Error(backend + " backend: invalid batch: " + what);
  };
  if (limits.blockCount <= 0) bad("the KV cache is not allocated");
  const int64_t tokens = int64_t(batch.tokens.size());
  if (tokens == 0) bad("no tokens");
  BatchExtent extent;
  int64_t expectedFirst = 0;
  for (const BatchSequence& s : batch.sequences) {
    if (s.firstToken != expectedFirst || s.tokenCount <= 0 || s.startPosition < 0 ||
        s.firstToken + int64_t(s.tokenCount) > tokens)
      bad("sequences must cover the tokens in order, each with at least one token");
    expectedFirst += s.tokenCount;
    const int64_t end = int64_t(s.startPosition) + s.tokenCount;
    if (end > limits.contextLength)
      bad("position " + std::to_string(end - 1) + " is past the model's context length " +
          std::to_string(limits.contextLength));
    const int64_t blocksNeeded = (end + limits.blockSize - 1) / limits.blockSize;
    if (int64_t(s.blockTable.size()) < blocksNeeded)
      bad("a block table has " + std::to_string(s.blockTable.size()) + " blocks, " +
          std::to_string(blocksNeeded) + " needed");
    for (int64_t b = 0; b < blocksNeeded; ++b)
      if (s.blockTable[size_t(b)] < 0 || s.blockTable[size_t(b)] >= limits.blockCount)
        bad("block id " + std::to_string(s.blockTable[size_t(b)]) + " is outside the pool");
    extent.maxEnd = std::max(extent.maxEnd, int32_t(end));
    extent.logitRows += s.logits == BatchSequence::Logits::All    ? s.tokenCount
                        : s.logits == BatchSequence::Logits::Last ? 1
                                                                  : 0;
  }
  if (expectedFirst != tokens) bad("sequences do not cover every token");
  for (TokenId id : batch.tokens)
    if (id < 0 || id >= limits.vocabSize)
      bad("token id " + std::to_string(id) + " is outside the vocabulary (" +
          std::to_string(limits.vocabSize) + ")");
  return extent;
}

}  // namespace ember
