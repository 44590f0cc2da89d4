#pragma once
// A layer's KV pool for the attention tests: `positions` random fp16 keys and values stored
// through storeKv in a shuffled block table, every other slot NaN (0x7e00) so that a kernel that
// reads past what it may see poisons its result (or, for the AMX path, declines).
#include <algorithm>
#include <numeric>
#include <random>
#include <vector>

#include "backend/cpu/ops/attention.h"
#include "op_test_support.h"

namespace ember::test {

struct RandomKvPool {
  int blockSize, kvHeads, headDim, valueDim, positions;
  std::vector<int32_t> table;
  std::vector<uint16_t> keyStore, valueStore;
  cpu::ops::KvLayerView kv;

  // unwrittenTableBlocks: blocks listed in the table after the last position's, never written
  // (what a sequence's table holds once its next blocks are reserved).
  RandomKvPool(std::mt19937& rng, int blockSize_, int kvHeads_, int headDim_, int valueDim_,
               int positions_, float keySpread, int unwrittenTableBlocks = 0)
      : blockSize(blockSize_), kvHeads(kvHeads_), headDim(headDim_), valueDim(valueDim_),
        positions(positions_) {
    const int used = (positions + blockSize - 1) / blockSize + unwrittenTableBlocks;
    const int count = used + 3;  // three more blocks in the pool than in the table
    std::vector<int32_t> all(static_cast<size_t>(count));
    std::iota(all.begin(), all.end(), 0);
    std::shuffle(all.begin(), all.end(), rng);
    table.assign(all.begin(), all.begin() + used);
    keyStore.assign(size_t(count) * kvHeads * blockSize * headDim, 0x7e00);
    valueStore.assign(size_t(count) * kvHeads * blockSize * valueDim, 0x7e00);
    kv = {keyStore.data(), valueStore.data(), count, blockSize, kvHeads, headDim, valueDim};
    for (int p = 0; p < positions; ++p) {
      std::vector<float> k = randomVector(rng, size_t(kvHeads) * headDim, keySpread);
      std::vector<float> v = randomVector(rng, size_t(kvHeads) * valueDim);
      cpu::ops::storeKv(kv, table, p, k.data(), v.data());
    }
  }
  const uint16_t* key(int p, int head) const {
    return kv.keyAt(table[size_t(p / blockSize)], head, p % blockSize);
  }
  const uint16_t* value(int p, int head) const {
    return kv.valueAt(table[size_t(p / blockSize)], head, p % blockSize);
  }
};

}  // namespace ember::test
