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
// NibbleK (lossless Q4_K) runs on Q8xK activation rows instead and follows the float order of
// the reference Q4_K kernels (quant/x86_dot_q4k_llama_order.h), so it gives their bits:
//   I_c = scale[2c] dot(q, x)_{2c} + scale[2c+1] dot(q, x)_{2c+1}
//   M_c = min[2c] (bsum[4c] + bsum[4c+1]) + min[2c+1] (bsum[4c+2] + bsum[4c+3])   (exact)
//   grouped tokens, per chunk c = 0..3: acc = fma(float(I_c), d xd, acc),
//                                      accMin = fma(float(M_c), dmin xd, accMin)
//   other tokens, once per super-block with I = sum I_c and M = sum M_c;  y = acc - accMin.
//
// SixK (lossless Q6_K) runs on Q8xK activation rows too and follows the reference Q6_K kernels
// (quant/x86_dot_kquants.h, tileQ6K), so it gives their bits. With P(k, c) the exact dot of
// quad k (elements 4k..4k+3) of chunk c and s_c0, s_c1 the chunk's two sub-block scales:
//   S_k = sum_c s_c(k / 4) P(k, c) - 32 (s_k0 bsum[2k] + s_k1 bsum[2k+1])    (exact)
//   tiled order (products of at least kTiledMinTokens tokens), per super-block with I = sum S_k:
//       acc = fma(float(I) * d, xd, acc), y = acc;
//   otherwise llama.cpp's vec_dot order: lane_k = fma(d * xd, float(S_k), lane_k) per super-block,
//       y = ((l0 + l4) + (l2 + l6)) + ((l1 + l5) + (l3 + l7)).
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
  // NibbleK only (Q8xK rows): the leading tokens that take llama.cpp's order for tokens run in
  // groups of 4 (4 float steps per super-block); the others take its one-token order.
  int64_t groupedTokens = 0;
  // SixK only: the product has at least kTiledMinTokens tokens (the reference's tiled order).
  bool tiledOrder = false;
};
using RepackedDotFn = void (*)(const RepackedTask&);

// The kernel for a matrix at a level; levels without their own fall back to the next lower.
RepackedDotFn repackedKernel(const RepackedMatrix& m, SimdLevel level);

// Per-level entry points (null where the build has no such code).
RepackedDotFn repackedKernelScalar(const RepackedMatrix& m);
RepackedDotFn repackedKernelAvx2(const RepackedMatrix& m);
RepackedDotFn repackedKernelAvx512(const RepackedMatrix& m);
// Intel AMX (repacked_kernels_amx.cpp): the fused formula above with the exact block sums from
// the tile unit, the same bits as the AVX-512 kernel; Nibble4, Nibble5 and Int8 without
// llamaLanes, else null (and null in builds without AMX). Call only after amxAvailable().
RepackedDotFn repackedKernelAmx(const RepackedMatrix& m);

// Products of at least this many tokens run on AMX where it is used (amxRepackedKernels(), for
// the matrices repackedKernelAmx takes: in practice "approx" mode, which repacks the lossless
// types without llamaLanes). Measured: on one cached 1536 x 576 Q4_1 product (thread CPU time)
// the AVX-512 fused kernel is faster up to 4 tokens and AMX from 5 (1.1x at 8 tokens, 1.5x at
// 16, 1.75x at 64), but end to end an 8-chat decode step (weights streamed from memory, the
// tile state set up per task) was slower on AMX (ITL p50 25-35 ms against 20-30 ms), while
// prompts gained (SmolLM2 2048 tokens, 1 thread: 1.58x). So AMX serves prompts and big batches.
constexpr int64_t kAmxMinTokens = 16;
// Whether the repacked kernels use AMX: amxAvailable() (EMBER_CPU_AMX=0 turns it off) and the
// fast SIMD level is AVX-512 VNNI. Below kAmxMinTokens the AVX-512 fused kernel gives the same
// bits, so a token's result does not depend on the product's token count.
bool amxRepackedKernels();

}  // namespace ember::cpu
