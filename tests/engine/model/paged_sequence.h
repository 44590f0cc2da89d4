#pragma once
// Drives one sequence through a Backend the way the runtime will: a block table over the KV
// pool (deliberately scattered: blocks taken from the pool in a shuffled order), prompt chunks,
// then one token per step. For tests of the forward pass.
#include <algorithm>
#include <numeric>
#include <random>
#include <span>
#include <vector>

#include "backend/backend.h"

namespace ember::test {

class PagedSequence {
 public:
  // Uses blocks [firstBlock, firstBlock + blocks) of the pool, shuffled with `seed`.
  PagedSequence(int32_t blockSize, int32_t firstBlock, int32_t blocks, uint32_t seed)
      : blockSize_(blockSize), table_(size_t(blocks)) {
    std::iota(table_.begin(), table_.end(), firstBlock);
    std::mt19937 rng(seed);
    std::shuffle(table_.begin(), table_.end(), rng);
  }

  int32_t length() const { return length_; }
  void reset() { length_ = 0; }
  std::span<const int32_t> blockTable() const { return table_; }

  // The batch entry for the next `count` tokens (starting at batch index firstToken).
  BatchSequence next(int32_t firstToken, int32_t count, BatchSequence::Logits logits) const {
    BatchSequence s;
    s.firstToken = firstToken;
    s.tokenCount = count;
    s.startPosition = length_;
    s.blockTable = table_;
    s.logits = logits;
    return s;
  }
  void advance(int32_t count) { length_ += count; }

  // Runs `tokens` in chunks of `chunk` tokens and returns every position's logits
  // (tokens.size(), vocab). A last chunk of one token is merged into the one before: a one-token
  // step sums its attention in llama.cpp's one-token order, which would change the last bits.
  std::vector<float> prefillAll(Backend& backend, std::span<const TokenId> tokens, int32_t chunk) {
    std::vector<float> logits;
    ForwardOutput out;
    for (size_t begin = 0, count = 0; begin < tokens.size(); begin += count) {
      count = std::min(tokens.size() - begin, size_t(chunk));
      if (tokens.size() - begin == size_t(chunk) + 1 && chunk > 1) count = size_t(chunk) + 1;
      const BatchSequence s = next(0, int32_t(count), BatchSequence::Logits::All);
      const ForwardBatch batch{tokens.subspan(begin, count), {&s, 1}};
      backend.forward(batch, out);
      logits.insert(logits.end(), out.logits.begin(), out.logits.end());
      advance(int32_t(count));
    }
    return logits;
  }

  // One decode step: returns the logits after `token` (a view into `out`).
  std::span<const float> step(Backend& backend, TokenId token, ForwardOutput& out) {
    const BatchSequence s = next(0, 1, BatchSequence::Logits::Last);
    const ForwardBatch batch{{&token, 1}, {&s, 1}};
    backend.forward(batch, out);
    advance(1);
    return out.logits;
  }

 private:
  int32_t blockSize_;
  std::vector<int32_t> table_;
  int32_t length_ = 0;
};

inline TokenId argmax(std::span<const float> row) {
  return TokenId(std::max_element(row.begin(), row.end()) - row.begin());
}

}  // namespace ember::test
