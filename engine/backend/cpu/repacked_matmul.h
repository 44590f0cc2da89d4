#pragma once
// matmul on repacked weights (the "fast" kernels): the activations are quantized once into
// Q8x32 rows shared by all matrices of the call, then the row groups of all matrices are split
// across the pool. Used by matmulShared for targets whose WeightMatrix::repacked is set.
#include <cstdint>
#include <span>

#include "backend/cpu/matmul.h"

namespace ember::cpu {

// Every target must have `repacked` set and the same cols. x may alias any y. `before` runs on
// each row of x ahead of its quantization, as in matmulShared.
void repackedMatmulShared(ThreadPool& pool, std::span<const MatmulTarget> targets, const float* x,
                          int64_t n, MatmulScratch& scratch, RowPrologue before = {});

}  // namespace ember::cpu
