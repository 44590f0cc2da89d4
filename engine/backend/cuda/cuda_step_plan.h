#pragma once
// One step's batch as the CUDA forward pass launches it: checked against the KV pool and the
// model, and flattened into one array of int32 metadata that goes to the device in one copy.
// Host code only (no CUDA calls), so that it is tested without a device.
//
// Decode steps (every sequence one token, at most 64 of them) are padded to a bucket of
// {1, 2, 4, 8, 16, 32, 64} sequences and use a block-table width rounded up to a power of two
// of positions (at least kMinGraphSpan), so that steps of one (bucket, width) launch the very same
// kernels with the same arguments and one captured CUDA graph replays them all. The padding
// sequences are one token at position 0 whose block table points only at the reserved scratch
// block, so padding never writes a real sequence's KV.
#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "backend/backend.h"

namespace ember::cuda {

constexpr std::array<int32_t, 7> kDecodeBuckets{1, 2, 4, 8, 16, 32, 64};
constexpr int32_t kMinGraphSpan = 256;

struct StepLimits {
  int32_t vocabSize = 0;
  int32_t contextLength = 0;
  int32_t blockSize = 16;
  int32_t blockCount = 0;    // usable blocks [0, blockCount)
  int32_t scratchBlock = 0;  // the reserved block padding writes to (= blockCount)
};

struct StepPlan {
  int32_t tokens = 0;        // T launched (padded for decode buckets)
  int32_t realTokens = 0;    // tokens of the batch
  int32_t sequences = 0;     // S launched (padded for decode buckets)
  int32_t tableWidth = 0;    // W: block-table entries per sequence on the device
  int32_t maxPosition = 0;   // bound on position + 1 of any token (sizes the attention split)
  int32_t logitRows = 0;     // rows through the output projection (R)
  int32_t returnedRows = 0;  // rows copied back: the first returnedRows of the R
  int32_t bucket = 0;        // > 0: a padded decode step (a CUDA graph candidate)

  // (T tokenIds | T tokenSequence | T tokenPosition | T slotMapping | R outputIndex | S*W tables)
  std::vector<int32_t> metadata;
  size_t tokenIdsAt() const { return 0; }
  size_t tokenSequenceAt() const { return size_t(tokens); }
  size_t tokenPositionAt() const { return 2 * size_t(tokens); }
  size_t slotMappingAt() const { return 3 * size_t(tokens); }
  size_t outputIndexAt() const { return 4 * size_t(tokens); }
  size_t blockTablesAt() const { return 4 * size_t(tokens) + size_t(logitRows); }
};

// Fills `plan` for `batch`; throws ember::Error (nothing launched yet) on a bad batch.
void planStep(const ForwardBatch& batch, const StepLimits& limits, StepPlan& plan);

}  // namespace ember::cuda
