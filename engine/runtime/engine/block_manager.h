#pragma once
// The pool of KV blocks with prefix caching. A block is either free, held by sequences (reference
// count > 0), or cached: unreferenced but still holding the keys/values of a full block of tokens
// that some prompt may start with again. Each full block is keyed by a hash of its tokens chained
// with its parent block's key, so a key names the whole prefix up to the block's end; a new
// prompt takes a reference on the longest chain of cached blocks it starts with and computes only
// the rest. Cached blocks are evicted least recently used (deepest first among equals) when the
// free list is empty. A block that holds a key is full and is never written again: a sequence
// writes only positions past what it computed, which lie in blocks it allocated itself.
#include <cstdint>
#include <optional>
#include <set>
#include <span>
#include <tuple>
#include <unordered_map>
#include <vector>

namespace ember {

using TokenId = int32_t;

// A second tier for cached blocks (host RAM): a cached block about to be reused for other
// tokens is handed to spill() first, and a prompt whose chain continues in the tier gets those
// blocks back through restore() into freshly allocated blocks.
class BlockSpill {
 public:
  virtual ~BlockSpill() = default;
  virtual void spill(int32_t block, uint64_t key, uint64_t parentKey,
                     std::span<const TokenId> tokens) = 0;
  virtual bool holds(uint64_t key, uint64_t parentKey, std::span<const TokenId> tokens) const = 0;
  // Writes the held contents into `block` and forgets them; false when it cannot.
  virtual bool restore(uint64_t key, int32_t block) = 0;
};

struct BlockManagerStats {
  int32_t totalBlocks = 0;
  int32_t referencedBlocks = 0;  // held by at least one sequence
  int32_t cachedBlocks = 0;      // full blocks with a key (referenced or not)
  int32_t freeBlocks = 0;        // neither referenced nor cached
  int64_t hitBlocks = 0;         // blocks handed out from the cache so far
  int64_t evictedBlocks = 0;
  int64_t spilledBlocks = 0;   // evicted blocks handed to the spill tier
  int64_t restoredBlocks = 0;  // blocks brought back from it
};

class BlockManager {
 public:
  static constexpr uint64_t kRootKey = 0x9e3779b97f4a7c15ull;  // the parent key of block 0

  BlockManager(int32_t blockCount, int32_t blockSize, bool caching = true);
  // The tier evicted cached blocks go to (not owned; null: they are dropped).
  void setSpill(BlockSpill* spill) { spill_ = spill; }

  // The key of a full block of `tokens` (blockSize of them) that follows `parentKey`.
  static uint64_t chainKey(uint64_t parentKey, std::span<const TokenId> tokens);

  // Takes a reference on the longest chain of cached blocks that `tokens` starts with, at most
  // maxBlocks of them, bringing spilled ones back; returns their ids (in order) and appends
  // their keys to `keys`.
  std::vector<int32_t> acquirePrefix(std::span<const TokenId> tokens, int32_t maxBlocks,
                                     std::vector<uint64_t>& keys);
  // A private block (reference count 1): a free one, else the least recently used cached one.
  std::optional<int32_t> allocate();
  // Drops one reference; a block left unreferenced stays cached when it has a key, else is freed.
  // Throws ember::Error for a block that is not referenced.
  void release(int32_t block);
  // Records that `block` (referenced by the caller), block number `index` of its sequence, now
  // holds the full block `tokens` after `parentKey`, and returns its key. When another block already holds that key, this one stays
  // private (freed on release) and the existing one keeps serving hits.
  uint64_t commitFull(int32_t block, int32_t index, uint64_t parentKey,
                      std::span<const TokenId> tokens);

  // Blocks an allocation could get now: free plus unreferenced cached ones.
  int32_t availableCount() const;
  int32_t referenceCount(int32_t block) const;
  bool isCached(int32_t block) const;
  int32_t blockSize() const { return blockSize_; }
  int32_t blockCount() const { return static_cast<int32_t>(blocks_.size()); }
  bool cachingEnabled() const { return caching_; }
  BlockManagerStats stats() const;
  // Every cached block's tokens and key (tests check them against the KV contents they name).
  std::optional<std::vector<TokenId>> cachedTokens(int32_t block) const;

 private:
  struct BlockState {
    int32_t references = 0;
    std::optional<uint64_t> key;  // set while the block is cached under that key
    uint64_t parentKey = 0;
    std::vector<TokenId> tokens;  // the block's tokens, checked on every hit (no false hits)
    int32_t depth = 0;            // index of the block in its chain
    uint64_t lastUsed = 0;
  };
  // Eviction order: least recently used first; among equals the deepest first, so chains are
  // cut from their ends and their beginnings keep serving hits.
  using EvictionKey = std::tuple<uint64_t, int32_t, int32_t>;  // (lastUsed, -depth, block)
  EvictionKey evictionKey(int32_t block) const;
  void checkBlock(int32_t block) const;
  // Brings the spilled block `key` back into a new block; -1 when it is not held or no room.
  int32_t restoreSpilled(uint64_t key, uint64_t parentKey, std::span<const TokenId> tokens,
                         int32_t depth);
  void registerKey(int32_t block, uint64_t key, uint64_t parentKey,
                   std::span<const TokenId> tokens, int32_t depth);

  int32_t blockSize_;
  bool caching_;
  std::vector<BlockState> blocks_;
  std::vector<int32_t> free_;  // stack; lowest ids on top
  std::set<EvictionKey> evictable_;
  std::unordered_map<uint64_t, int32_t> byKey_;
  uint64_t clock_ = 0;
  BlockSpill* spill_ = nullptr;
  int64_t hits_ = 0, evictions_ = 0, spills_ = 0, restores_ = 0;
  int32_t referenced_ = 0;
};

}  // namespace ember
