#include "runtime/engine/block_allocator.h"

#include <string>

#include "common/error.h"

namespace ember {

BlockAllocator::BlockAllocator(int32_t blockCount) : inUse_(static_cast<size_t>(blockCount)) {
  free_.reserve(static_cast<size_t>(blockCount));
  // Lowest ids on top, so a fresh pool hands out 0, 1, 2, ...
  for (int32_t b = blockCount - 1; b >= 0; --b) free_.push_back(b);
}

std::optional<int32_t> BlockAllocator::allocate() {
  if (free_.empty()) return std::nullopt;
  const int32_t block = free_.back();
  free_.pop_back();
  inUse_[static_cast<size_t>(block)] = true;
  return block;
}

void BlockAllocator::release(int32_t block) {
  if (block < 0 || block >= blockCount() || !inUse_[static_cast<size_t>(block)])
    throw Error("KV block " + std::to_string(block) + " released but not allocated");
  inUse_[static_cast<size_t>(block)] = false;
  free_.push_back(block);
}

}  // namespace ember
