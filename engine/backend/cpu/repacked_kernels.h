#pragma once
// Dot-product kernels on repacked weights (repack.h) against Q8x32 activation rows
// (quant/kernels.h), one implementation per SIMD level:
//   y[t * yStride + row] = sum_b dx_b * d_r * I(r, t, b) + m_r * s(t, b)
// with I the exact integer sum of q * x over block b, S the activation block's integer sum and
// s = dx_b * float(S) (f16(dx_b * S) for RepackedMatrix::roundedMinSum). Per block and token the
// float steps are the same at every level, acc = fma(float(I), d_r * dx_b, acc) then
// acc = fma(m_r, s, acc), so the levels agree bit for bit. Matrices with llamaLanes sum in
// llama.cpp's order instead (x86_repacked_lanes.h), also the same at every level.
//
// A task covers row groups [group0, group1) and `tokens` activation rows. The kernels walk the
// tokens in tiles of up to kRepackTokenTile: the unpacked weights of a block stay in registers
// for all tokens of a tile (1 token: decode; 2-8: batched decode; prompts loop the tiles).
#include <cstddef>
#include <cstdint>

#include "backend/cpu/matmul.h"
#include "backend/cpu/repack.h"

namespace ember::cpu {

constexpr int kRepackTokenTile = 8;

struct RepackedTask {
  const RepackedMatrix* m;
  int64_t group0, group1;
  const uint8_t* x;  // (tokens, xStride) Q8x32 rows
  size_t xStride;
  int64_t tokens;
  float* y;  // (tokens, yStride), row r of token t at y[t * yStride + r]
  int64_t yStride;
};
using RepackedDotFn = void (*)(const RepackedTask&);

// The kernel for a matrix at a level; levels without their own fall back to the next lower.
RepackedDotFn repackedKernel(const RepackedMatrix& m, SimdLevel level);

// Per-level entry points (null where the build has no such code).
RepackedDotFn repackedKernelScalar(const RepackedMatrix& m);
RepackedDotFn repackedKernelAvx2(const RepackedMatrix& m);
RepackedDotFn repackedKernelAvx512(const RepackedMatrix& m);

}  // namespace ember::cpu
