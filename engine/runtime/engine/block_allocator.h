#pragma once
// The pool of KV blocks: which are free. A sequence holds the ids of its blocks in its block
// table; the backend stores the keys and values. (Prefix sharing with reference counts and
// content hashes comes with continuous batching.)
#include <cstdint>
#include <optional>
#include <vector>

namespace ember {

class BlockAllocator {
 public:
  explicit BlockAllocator(int32_t blockCount);
  std::optional<int32_t> allocate();
  void release(int32_t block);  // throws ember::Error for a block that is not allocated
  int32_t freeCount() const { return static_cast<int32_t>(free_.size()); }
  int32_t blockCount() const { return static_cast<int32_t>(inUse_.size()); }

 private:
  std::vector<int32_t> free_;  // stack of free block ids
  std::vector<bool> inUse_;    // (blockCount)
};

}  // namespace ember
