#include "runtime/engine/sequence_blocks.h"

#include <span>

namespace ember {

void acquireCachedPrefix(Sequence& s, BlockManager& blocks) {
  const int32_t size = blocks.blockSize();
  const int32_t maxBlocks = (static_cast<int32_t>(s.tokens.size()) - 1) / size;
  s.blockKeys.clear();
  s.blockTable = blocks.acquirePrefix(s.tokens, maxBlocks, s.blockKeys);
  s.computed = static_cast<int32_t>(s.blockTable.size()) * size;
  if (!s.admitted) s.stats.cachedPromptTokens = std::min(s.computed, s.promptLength);
  s.admitted = true;
}

bool reserveBlocks(Sequence& s, int32_t tokens, BlockManager& blocks) {
  const auto needed = static_cast<size_t>((tokens + blocks.blockSize() - 1) / blocks.blockSize());
  const size_t before = s.blockTable.size();
  while (s.blockTable.size() < needed) {
    const auto block = blocks.allocate();
    if (!block) {
      while (s.blockTable.size() > before) {
        blocks.release(s.blockTable.back());
        s.blockTable.pop_back();
      }
      return false;
    }
    s.blockTable.push_back(*block);
  }
  return true;
}

int32_t blocksStillNeeded(const Sequence& s, int32_t blockSize) {
  const int32_t tokens = static_cast<int32_t>(s.tokens.size()) + 1;
  const int32_t needed = (tokens + blockSize - 1) / blockSize;
  return std::max(0, needed - static_cast<int32_t>(s.blockTable.size()));
}

void commitComputedBlocks(Sequence& s, BlockManager& blocks) {
  const int32_t size = blocks.blockSize();
  const auto full = static_cast<size_t>(s.computed / size);
  for (size_t i = s.blockKeys.size(); i < full && i < s.blockTable.size(); ++i) {
    const uint64_t parent = i == 0 ? BlockManager::kRootKey : s.blockKeys[i - 1];
    const std::span<const TokenId> tokens(s.tokens.data() + i * static_cast<size_t>(size),
                                          static_cast<size_t>(size));
    s.blockKeys.push_back(
        blocks.commitFull(s.blockTable[i], static_cast<int32_t>(i), parent, tokens));
  }
}

void releaseBlocks(Sequence& s, BlockManager& blocks) {
  for (auto it = s.blockTable.rbegin(); it != s.blockTable.rend(); ++it) blocks.release(*it);
  s.blockTable.clear();
  s.blockKeys.clear();
  s.computed = 0;
}

}  // namespace ember
