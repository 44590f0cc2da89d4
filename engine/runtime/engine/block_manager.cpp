#include "runtime/engine/block_manager.h"

#include <algorithm>
#include <string>

#include "ember/error.h"

namespace ember {

namespace {

// splitmix64's finalizer: spreads every input bit over the output.
uint64_t mix(uint64_t x) {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ull;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

}  // namespace

BlockManager::BlockManager(int32_t blockCount, int32_t blockSize, bool caching)
    : blockSize_(blockSize), caching_(caching), blocks_(static_cast<size_t>(blockCount)) {
  if (blockCount < 1 || blockSize < 1) throw Error("a KV pool needs at least one block and token");
  free_.reserve(blocks_.size());
  for (int32_t b = blockCount - 1; b >= 0; --b) free_.push_back(b);
}

uint64_t BlockManager::chainKey(uint64_t parentKey, std::span<const TokenId> tokens) {
  uint64_t h = mix(parentKey ^ 0x243f6a8885a308d3ull);
  for (TokenId t : tokens) h = mix(h ^ static_cast<uint32_t>(t)) + 0x9e3779b97f4a7c15ull;
  return mix(h ^ tokens.size());
}

void BlockManager::checkBlock(int32_t block) const {
  if (block < 0 || block >= blockCount())
    throw Error("KV block " + std::to_string(block) + " is outside the pool");
}

BlockManager::EvictionKey BlockManager::evictionKey(int32_t block) const {
  const BlockState& s = blocks_[static_cast<size_t>(block)];
  return {s.lastUsed, -s.depth, block};
}

std::vector<int32_t> BlockManager::acquirePrefix(std::span<const TokenId> tokens,
                                                 int32_t maxBlocks,
                                                 std::vector<uint64_t>& keys) {
  std::vector<int32_t> hits;
  if (!caching_) return hits;
  const int32_t fullBlocks = static_cast<int32_t>(tokens.size()) / blockSize_;
  const int32_t limit = std::min(maxBlocks, fullBlocks);
  uint64_t parent = kRootKey;
  ++clock_;
  for (int32_t i = 0; i < limit; ++i) {
    const auto blockTokens = tokens.subspan(static_cast<size_t>(i) * blockSize_,
                                            static_cast<size_t>(blockSize_));
    const uint64_t key = chainKey(parent, blockTokens);
    const auto it = byKey_.find(key);
    if (it == byKey_.end()) {
      const int32_t restored = restoreSpilled(key, parent, blockTokens, i);
      if (restored < 0) break;
      hits.push_back(restored);
      keys.push_back(key);
      parent = key;
      continue;
    }
    BlockState& s = blocks_[static_cast<size_t>(it->second)];
    if (s.parentKey != parent || !std::equal(s.tokens.begin(), s.tokens.end(),
                                             blockTokens.begin(), blockTokens.end()))
      break;  // a 64-bit key collision: treat as a miss
    if (s.references == 0) {
      evictable_.erase(evictionKey(it->second));
      ++referenced_;
    }
    ++s.references;
    s.lastUsed = clock_;
    hits.push_back(it->second);
    keys.push_back(key);
    parent = key;
  }
  hits_ += static_cast<int64_t>(hits.size());
  return hits;
}

std::optional<int32_t> BlockManager::allocate() {
  int32_t block = -1;
  if (!free_.empty()) {
    block = free_.back();
    free_.pop_back();
  } else if (!evictable_.empty()) {
    block = std::get<2>(*evictable_.begin());
    evictable_.erase(evictable_.begin());
    BlockState& s = blocks_[static_cast<size_t>(block)];
    if (spill_) {
      spill_->spill(block, *s.key, s.parentKey, s.tokens);
      ++spills_;
    }
    byKey_.erase(*s.key);
    s.key.reset();
    s.tokens.clear();
    ++evictions_;
  } else {
    return std::nullopt;
  }
  BlockState& s = blocks_[static_cast<size_t>(block)];
  s.references = 1;
  s.lastUsed = ++clock_;
  ++referenced_;
  return block;
}

void BlockManager::release(int32_t block) {
  checkBlock(block);
  BlockState& s = blocks_[static_cast<size_t>(block)];
  if (s.references <= 0)
    throw Error("KV block " + std::to_string(block) + " released but not referenced");
  if (--s.references > 0) return;
  --referenced_;
  s.lastUsed = ++clock_;
  if (s.key) {
    evictable_.insert(evictionKey(block));
  } else {
    s.tokens.clear();
    free_.push_back(block);
  }
}

uint64_t BlockManager::commitFull(int32_t block, int32_t index, uint64_t parentKey,
                                  std::span<const TokenId> tokens) {
  checkBlock(block);
  if (static_cast<int32_t>(tokens.size()) != blockSize_)
    throw Error("only a full block of " + std::to_string(blockSize_) + " tokens can be cached");
  BlockState& s = blocks_[static_cast<size_t>(block)];
  if (s.references <= 0) throw Error("KV block " + std::to_string(block) + " is not referenced");
  const uint64_t key = chainKey(parentKey, tokens);
  if (!caching_ || s.key || byKey_.contains(key)) return key;
  registerKey(block, key, parentKey, tokens, index);
  return key;
}

void BlockManager::registerKey(int32_t block, uint64_t key, uint64_t parentKey,
                               std::span<const TokenId> tokens, int32_t depth) {
  BlockState& s = blocks_[static_cast<size_t>(block)];
  s.key = key;
  s.parentKey = parentKey;
  s.tokens.assign(tokens.begin(), tokens.end());
  s.depth = depth;
  byKey_.emplace(key, block);
}

int32_t BlockManager::restoreSpilled(uint64_t key, uint64_t parentKey,
                                     std::span<const TokenId> tokens, int32_t depth) {
  if (!spill_ || !spill_->holds(key, parentKey, tokens)) return -1;
  const auto block = allocate();  // may spill another cached block (never a referenced one)
  if (!block) return -1;
  if (!spill_->restore(key, *block)) {
    release(*block);
    return -1;
  }
  registerKey(*block, key, parentKey, tokens, depth);
  blocks_[static_cast<size_t>(*block)].lastUsed = clock_;
  ++restores_;
  return *block;
}

int32_t BlockManager::availableCount() const {
  return static_cast<int32_t>(free_.size() + evictable_.size());
}

int32_t BlockManager::referenceCount(int32_t block) const {
  checkBlock(block);
  return blocks_[static_cast<size_t>(block)].references;
}

bool BlockManager::isCached(int32_t block) const {
  checkBlock(block);
  return blocks_[static_cast<size_t>(block)].key.has_value();
}

std::optional<std::vector<TokenId>> BlockManager::cachedTokens(int32_t block) const {
  checkBlock(block);
  const BlockState& s = blocks_[static_cast<size_t>(block)];
  if (!s.key) return std::nullopt;
  return s.tokens;
}

BlockManagerStats BlockManager::stats() const {
  BlockManagerStats st;
  st.totalBlocks = blockCount();
  st.referencedBlocks = referenced_;
  st.cachedBlocks = static_cast<int32_t>(byKey_.size());
  st.freeBlocks = static_cast<int32_t>(free_.size());
  st.hitBlocks = hits_;
  st.evictedBlocks = evictions_;
  st.spilledBlocks = spills_;
  st.restoredBlocks = restores_;
  return st;
}

}  // namespace ember
