#pragma once
// The grid of an elementwise kernel: kThreads per block, and at most kMaxBlocks blocks; the
// kernels' grid-stride loops cover whatever a capped grid leaves.
#include <cstdint>

namespace ember::kernels {

constexpr int kThreads = 256;
constexpr int64_t kMaxBlocks = 65535 * 16;

inline unsigned blocksFor(int64_t count) {
  const int64_t blocks = (count + kThreads - 1) / kThreads;
  return unsigned(blocks < kMaxBlocks ? blocks : kMaxBlocks);
}

}  // namespace ember::kernels
