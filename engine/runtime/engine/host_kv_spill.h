#pragma once
// Host-RAM tier of the prefix cache: when the KV pool (device memory for the CUDA backend) must
// reuse a cached block, its keys and values are copied here instead of being dropped, and the
// next turn of that conversation copies them back instead of recomputing them. Least recently
// spilled entries go first when the byte budget is full.
#include <cstddef>
#include <cstdint>
#include <list>
#include <unordered_map>
#include <vector>

#include "backend/backend.h"
#include "runtime/engine/block_manager.h"

namespace ember {

class HostKvSpill final : public BlockSpill {
 public:
  // budgetBytes: the most host memory the entries may take (each is kvBytesPerBlock).
  HostKvSpill(Backend& backend, int64_t budgetBytes);

  void spill(int32_t block, uint64_t key, uint64_t parentKey,
             std::span<const TokenId> tokens) override;
  bool holds(uint64_t key, uint64_t parentKey, std::span<const TokenId> tokens) const override;
  bool restore(uint64_t key, int32_t block) override;

  int32_t blocksHeld() const { return static_cast<int32_t>(entries_.size()); }
  int64_t bytesHeld() const { return static_cast<int64_t>(entries_.size() * blockBytes_); }

 private:
  struct Entry {
    uint64_t parentKey = 0;
    std::vector<TokenId> tokens;
    std::vector<std::byte> bytes;         // (kvBytesPerBlock)
    std::list<uint64_t>::iterator order;  // position in order_
  };
  Backend& backend_;
  size_t blockBytes_;
  size_t capacity_;                  // entries the budget holds
  std::unordered_map<uint64_t, Entry> entries_;
  std::list<uint64_t> order_;        // oldest spill first
};

}  // namespace ember
