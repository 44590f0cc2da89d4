#include "runtime/engine/host_kv_spill.h"

#include <algorithm>

namespace ember {

HostKvSpill::HostKvSpill(Backend& backend, int64_t budgetBytes)
    : backend_(backend),
      blockBytes_(backend.kvBytesPerBlock(backend.kvCacheShape().blockSize)),
      capacity_(blockBytes_ == 0 || budgetBytes <= 0
                    ? 0
                    : static_cast<size_t>(budgetBytes) / blockBytes_) {}

void HostKvSpill::spill(int32_t block, uint64_t key, uint64_t parentKey,
                        std::span<const TokenId> tokens) {
  if (capacity_ == 0 || entries_.contains(key)) return;
  std::vector<std::byte> bytes;
  if (entries_.size() >= capacity_) {  // reuse the oldest entry's buffer
    const uint64_t oldest = order_.front();
    order_.pop_front();
    bytes = std::move(entries_.at(oldest).bytes);
    entries_.erase(oldest);
  }
  bytes.resize(blockBytes_);
  if (!backend_.readKvBlock(block, bytes)) return;  // the backend cannot: drop the block
  Entry e;
  e.parentKey = parentKey;
  e.tokens.assign(tokens.begin(), tokens.end());
  e.bytes = std::move(bytes);
  e.order = order_.insert(order_.end(), key);
  entries_.emplace(key, std::move(e));
}

bool HostKvSpill::holds(uint64_t key, uint64_t parentKey, std::span<const TokenId> tokens) const {
  const auto it = entries_.find(key);
  return it != entries_.end() && it->second.parentKey == parentKey &&
         std::equal(it->second.tokens.begin(), it->second.tokens.end(), tokens.begin(),
                    tokens.end());
}

bool HostKvSpill::restore(uint64_t key, int32_t block) {
  const auto it = entries_.find(key);
  if (it == entries_.end()) return false;
  const bool ok = backend_.writeKvBlock(block, it->second.bytes);
  order_.erase(it->second.order);
  entries_.erase(it);
  return ok;
}

}  // namespace ember
