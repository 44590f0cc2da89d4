#pragma once
// The checks every backend makes on a ForwardBatch before running it, with the same messages:
// sequences cover the tokens in order, positions stay inside the context, block tables are long
// enough and name blocks of the pool, token ids are in the vocabulary.
#include <cstdint>
#include <string>

#include "backend/backend.h"

namespace ember {

struct BatchLimits {
  int32_t vocabSize = 0;
  int32_t contextLength = 0;
  int32_t blockSize = 16;
  int32_t blockCount = 0;  // usable blocks [0, blockCount); 0: no KV cache allocated
};

struct BatchExtent {
  int32_t maxEnd = 0;      // the largest startPosition + tokenCount
  int64_t logitRows = 0;   // rows of logits the batch asks for
};

// Throws ember::Error("<backend> backend: invalid batch: ...") for a batch that breaks a rule.
BatchExtent checkForwardBatch(const ForwardBatch& batch, const BatchLimits& limits,
                              const std::string& backend);

}  // namespace ember
