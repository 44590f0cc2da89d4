#pragma once
// What a sequence does with the KV block pool: take the cached blocks its tokens start with, grow
// its block table, record its full blocks in the prefix cache, and give everything back.
#include <cstdint>

#include "runtime/engine/block_manager.h"
#include "runtime/engine/sequence.h"

namespace ember {

// Takes the cached prefix of s.tokens (leaving at least one token to compute, whose logits are
// needed) and sets s.computed past it. The first admission records it as cachedPromptTokens.
void acquireCachedPrefix(Sequence& s, BlockManager& blocks);
// Grows the block table to hold `tokens` tokens; false (table unchanged) when the pool is short.
bool reserveBlocks(Sequence& s, int32_t tokens, BlockManager& blocks);
// Blocks the table still needs to hold all of s.tokens plus the next one.
int32_t blocksStillNeeded(const Sequence& s, int32_t blockSize);
// Records every computed full block not yet recorded in the prefix cache.
void commitComputedBlocks(Sequence& s, BlockManager& blocks);
// Releases the table (tail first, so the prompt's first blocks stay cached longest) and forgets
// what was computed: the sequence will be computed again from its tokens.
void releaseBlocks(Sequence& s, BlockManager& blocks);

}  // namespace ember
