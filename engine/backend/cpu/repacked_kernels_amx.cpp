// The repacked kernels on Intel AMX (repacked_kernels.h, the fused formula): the tile unit
// computes each block's exact integer sums for up to 16 tokens x 16 rows in one instruction,
// and the per-block float steps stay those of the AVX-512 kernel (x86_repacked_kernels.h,
// groupTile), so both give the same bits:
//   acc = fma(float(I), d_r * dx_b, acc), acc = fma(m_r, s, acc)    per block and token.
// Tiles (the configuration is loaded at the start of every task, since other AMX code may run
// on the same thread in between, and released at its end):
//   tmm0, tmm1  A: tokens x 32 bytes, block b of the Q8x32 activation rows, read in place
//               (row stride = the activation row stride);
//   tmm2, tmm3  B: 8 x 64 bytes, block b of a row group in the VNNI order the tile unit reads,
//               B[k][4 r + i] = q(r, 4 k + i): Int8's w[8][16][4] as stored, Nibble4/5 after
//               splitting the nibbles (repack.h: packed[k] holds elements 4k.. and 16 + 4k..);
//   tmm4, tmm5  C: tokens x 16 int32, C[t][r] = sum_e x(t, e) q(r, e), the exact block sum.
// Two sets alternate so that block b + 1's product runs while block b's sums are scaled.
// Int8 weights are signed (tdpbssd), Nibble4/5 unsigned (tdpbsud: signed activations A,
// unsigned weights B); Nibble5 then subtracts offset * S, as the AVX-512 kernel does.
// Built with AMX and AVX-512 (CMake: *_amx.cpp); called only after amxAvailable().
#include "backend/cpu/repacked_kernels.h"

#if defined(__x86_64__) && defined(__AMX_INT8__) && defined(__AMX_TILE__) && \
    defined(__AVX512BW__)
#include <cstdlib>
#include <utility>
#include <new>

#include "backend/cpu/amx_tiles.h"
#include "backend/cpu/quant/kernels.h"
#include "backend/cpu/quant/x86_simd.h"

namespace ember::cpu {
namespace {

using quant::Q8x32Row;
using quant::q8x32Row;

constexpr int kTileTokens = 16;
constexpr size_t kUnpackedBlockBytes = 512;  // one B tile: 8 rows of 64 bytes
constexpr int64_t kPrefetchBlocks = 12;       // as the AVX-512 kernels (decode streams)

void configureTiles(int tokens) {
  TileConfig c;
  for (int i : {0, 1}) c.bytesPerRow[i] = 32, c.rows[i] = uint8_t(tokens);
  for (int i : {2, 3}) c.bytesPerRow[i] = 64, c.rows[i] = 8;
  for (int i : {4, 5}) c.bytesPerRow[i] = 64, c.rows[i] = uint8_t(tokens);
  loadTileConfig(c);
}

// Per thread: (blocks, 512) unpacked weights of one row group, then two (16, 16) int32 tiles
// read back. Plain memory (no std containers: this file's code uses AMX and AVX-512).
struct Scratch {
  uint8_t* data = nullptr;
  size_t bytes = 0;
  ~Scratch() { std::free(data); }
  uint8_t* get(size_t need) {
    if (need > bytes) {
      std::free(data);
      bytes = (need + 4095) / 4096 * 4096;
      data = static_cast<uint8_t*>(std::aligned_alloc(64, bytes));
      if (data == nullptr) throw std::bad_alloc();
    }
    return data;
  }
};
thread_local Scratch tScratch;

// The tile instructions are asm statements that do not tell the compiler which memory they
// read or write: order the plain loads and stores around them.
inline void memoryBarrier() { asm volatile("" ::: "memory"); }

// Every cache line of the block kPrefetchBlocks ahead (this runs into the next group).
inline void prefetchBlock(const RepackedMatrix& m, const uint8_t* blk) {
  const uint8_t* ahead = blk + kPrefetchBlocks * m.blockBytes;
  for (size_t off = 0; off < m.blockBytes; off += 64)
    _mm_prefetch(reinterpret_cast<const char*>(ahead + off), _MM_HINT_T0);
}

template <RepackedLayout kLayout>
void unpackGroup(const RepackedMatrix& m, int64_t g, uint8_t* out) {
  const __m512i lowNibble = _mm512_set1_epi8(0x0f);
  const __m512i bit4 = _mm512_set1_epi8(16);
  for (int64_t b = 0; b < m.blocks; ++b) {
    const uint8_t* blk = m.block(g, b);
    prefetchBlock(m, blk);
    __m512i w[8];
#pragma GCC unroll 4
    for (int k = 0; k < 4; ++k) {
      const __m512i packed = _mm512_loadu_si512(blk + 64 * k);
      w[k] = _mm512_and_si512(packed, lowNibble);
      w[4 + k] = _mm512_and_si512(_mm512_srli_epi16(packed, 4), lowNibble);
    }
    if constexpr (kLayout == RepackedLayout::Nibble5) {
      const __m512i high = _mm512_loadu_si512(blk + 256);  // bit k: bit 4 of w[k]'s byte
#pragma GCC unroll 8
      for (int k = 0; k < 8; ++k) {
        const __m512i moved = k < 4 ? _mm512_slli_epi16(high, 4 - k)
                              : k > 4 ? _mm512_srli_epi16(high, k - 4) : high;
        w[k] = _mm512_ternarylogic_epi32(w[k], moved, bit4, 0xF8);  // w | (moved & bit4)
      }
    }
    uint8_t* o = out + size_t(b) * kUnpackedBlockBytes;
#pragma GCC unroll 8
    for (int k = 0; k < 8; ++k) _mm512_store_si512(o + 64 * k, w[k]);
  }
  memoryBarrier();
}

// Block b's float steps for the M tokens from its read-back sums c (M rows of 16 int32).
template <RepackedLayout kLayout, bool kRoundedSum, int M>
inline void scaleBlock(const RepackedMatrix& m, const uint8_t* blk, const Q8x32Row* xr,
                       int64_t b, const int32_t* c, __m512* acc) {
  const __m512 dw = _mm512_cvtph_ps(quant::load256(blk + m.quantBytes));
  const __m512 mw =
      m.hasMin ? _mm512_cvtph_ps(quant::load256(blk + m.quantBytes + 32)) : _mm512_setzero_ps();
  const int32_t offset = m.quantOffset;
#pragma GCC unroll 16
  for (int t = 0; t < M; ++t) {
    __m512i sum = _mm512_load_si512(c + 16 * t);
    if constexpr (kLayout == RepackedLayout::Nibble5)  // q - offset
      sum = _mm512_sub_epi32(sum, _mm512_set1_epi32(offset * xr[t].sum[b]));
    const float dx = xr[t].d[b];
    acc[t] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(sum), _mm512_mul_ps(dw, _mm512_set1_ps(dx)),
                             acc[t]);
    acc[t] = _mm512_fmadd_ps(
        mw, _mm512_set1_ps(kRoundedSum ? xr[t].s[b] : dx * float(xr[t].sum[b])), acc[t]);
  }
}

// Loads block b's weights (B) and activations (A) into one tile set and starts its product.
#define EMBER_AMX_ISSUE(TA, TB, TC, b)                                       \
  do {                                                                       \
    _tile_loadd(TB, weights(b), 64);                                         \
    _tile_loadd(TA, x + 32 * (b), xStride);                                  \
    _tile_zero(TC);                                                          \
    if constexpr (kLayout == RepackedLayout::Int8)                           \
      _tile_dpbssd(TC, TA, TB);                                              \
    else                                                                     \
      _tile_dpbsud(TC, TA, TB);                                              \
  } while (false)

// M tokens (the configured tile height) against row group g. unpacked: the group's B tiles
// (null for Int8, read from the blocks); c: two (16, 16) int32 buffers.
template <RepackedLayout kLayout, bool kRoundedSum, int M>
void groupTileAmx(const RepackedMatrix& m, int64_t g, const uint8_t* unpacked,
                  const uint8_t* x, size_t xStride, float* y, int64_t yStride, int32_t* c) {
  Q8x32Row xr[M];
  __m512 acc[M];
#pragma GCC unroll 16
  for (int t = 0; t < M; ++t) {
    xr[t] = q8x32Row(x + size_t(t) * xStride, m.cols);
    acc[t] = _mm512_setzero_ps();
  }
  auto weights = [&](int64_t b) -> const uint8_t* {
    if constexpr (kLayout == RepackedLayout::Int8) return m.block(g, b);
    else return unpacked + size_t(b) * kUnpackedBlockBytes;
  };
  int32_t* c0 = c;
  int32_t* c1 = c + 16 * kTileTokens;
  const int64_t nb = m.blocks;
  EMBER_AMX_ISSUE(0, 2, 4, 0);
  for (int64_t b = 0; b < nb; b += 2) {
    if (b + 1 < nb) EMBER_AMX_ISSUE(1, 3, 5, b + 1);
    if constexpr (kLayout == RepackedLayout::Int8) prefetchBlock(m, m.block(g, b));
    _tile_stored(4, c0, 64);
    memoryBarrier();
    scaleBlock<kLayout, kRoundedSum, M>(m, m.block(g, b), xr, b, c0, acc);
    if (b + 1 < nb) {
      if (b + 2 < nb) EMBER_AMX_ISSUE(0, 2, 4, b + 2);
      _tile_stored(5, c1, 64);
      memoryBarrier();
      scaleBlock<kLayout, kRoundedSum, M>(m, m.block(g, b + 1), xr, b + 1, c1, acc);
    }
  }
  const int64_t rows = quant::minOf(kRepackGroupRows, m.rows - g * kRepackGroupRows);
  const __mmask16 valid = __mmask16((1u << rows) - 1);
#pragma GCC unroll 16
  for (int t = 0; t < M; ++t)
    _mm512_mask_storeu_ps(y + t * yStride + g * kRepackGroupRows, valid, acc[t]);
}
#undef EMBER_AMX_ISSUE

template <RepackedLayout kLayout, bool kRoundedSum>
using GroupTileFn = void (*)(const RepackedMatrix&, int64_t, const uint8_t*, const uint8_t*,
                             size_t, float*, int64_t, int32_t*);

template <RepackedLayout kLayout, bool kRoundedSum, int... M>
constexpr GroupTileFn<kLayout, kRoundedSum> tileFor(int tokens,
                                                    std::integer_sequence<int, M...>) {
  GroupTileFn<kLayout, kRoundedSum> f = nullptr;
  ((tokens == M + 1 ? (f = groupTileAmx<kLayout, kRoundedSum, M + 1>, 0) : 0), ...);
  return f;
}

// Full tiles of 16 tokens first, then the remainder, each under its own tile configuration;
// a group's weights are unpacked once per pass and serve every token tile of it.
template <RepackedLayout kLayout, bool kRoundedSum>
void runAmx(const RepackedTask& task) {
  const RepackedMatrix& m = *task.m;
  const size_t unpackedBytes =
      kLayout == RepackedLayout::Int8 ? 0 : size_t(m.blocks) * kUnpackedBlockBytes;
  uint8_t* scratch = tScratch.get(unpackedBytes + 2 * 16 * kTileTokens * sizeof(int32_t));
  auto* c = reinterpret_cast<int32_t*>(scratch + unpackedBytes);
  const int64_t full = task.tokens / kTileTokens * kTileTokens;
  const int rest = int(task.tokens - full);
  for (int pass = 0; pass < 2; ++pass) {
    const int tile = pass == 0 ? kTileTokens : rest;
    if ((pass == 0 && full == 0) || tile == 0) continue;
    const GroupTileFn<kLayout, kRoundedSum> fn =
        tileFor<kLayout, kRoundedSum>(tile, std::make_integer_sequence<int, kTileTokens>());
    configureTiles(tile);
    for (int64_t g = task.group0; g < task.group1; ++g) {
      if constexpr (kLayout != RepackedLayout::Int8) unpackGroup<kLayout>(m, g, scratch);
      const int64_t t0 = pass == 0 ? 0 : full, t1 = pass == 0 ? full : task.tokens;
      for (int64_t t = t0; t < t1; t += tile)
        fn(m, g, scratch, task.x + size_t(t) * task.xStride, task.xStride,
           task.y + t * task.yStride, task.yStride, c);
    }
  }
  _tile_release();
}

}  // namespace

RepackedDotFn repackedKernelAmx(const RepackedMatrix& m) {
  using L = RepackedLayout;
  if (m.llamaLanes) return nullptr;  // llama.cpp's 8-lane order needs per-quad sums
  switch (m.layout) {
    case L::Nibble4: return m.roundedMinSum ? runAmx<L::Nibble4, true> : runAmx<L::Nibble4, false>;
    case L::Nibble5: return m.roundedMinSum ? runAmx<L::Nibble5, true> : runAmx<L::Nibble5, false>;
    case L::Int8: return m.roundedMinSum ? runAmx<L::Int8, true> : runAmx<L::Int8, false>;
    default: return nullptr;  // NibbleK, SixK: the AVX-512 kernels
  }
}

}  // namespace ember::cpu

#else
namespace ember::cpu {
RepackedDotFn repackedKernelAmx(const RepackedMatrix&) { return nullptr; }
}  // namespace ember::cpu
#endif
