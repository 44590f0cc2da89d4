#pragma once
// Weights repacked at load for the fast kernels (EngineOptions::kernels = "fast"): every
// supported quantized type becomes one of two row-interleaved layouts of 32-element blocks, so
// that one 512-bit vector holds 4 consecutive elements of 16 rows and vpdpbusd leaves each row's
// integer dot product in its own 32-bit lane (no horizontal sums, one weight load serves every
// token of a tile). A group is 16 rows (the last one padded with zero rows); per group the
// blocks follow one another, each:
//
//   Nibble4 (320 bytes)  u8 packed[4][16][4] | f16 d[16] | f16 m[16]
//       packed[k][r][i] = q(r, 4k + i) | q(r, 16 + 4k + i) << 4, q in 0..15
//   Int8    (576 bytes)  i8 w[8][16][4]      | f16 d[16] | f16 m[16]
//       w[k][r][i] = q(r, 4k + i), q in -128..127
//   Nibble5 (352 / 384 bytes) u8 packed[4][16][4] | u8 high[16][4] | f16 d[16] [| f16 m[16]]
//       packed as Nibble4 (the low 4 bits), bit k of high[r][i] = bit 4 of q(r, 4k + i),
//       q in 0..31
//   Without m (RepackedMatrix::hasMin false: Q5_0, Q8_0, Q6_K, whose m is 0) a block ends after
//   d: Int8 544 bytes, Nibble5 352 bytes.
//
// and the weight is d[r] * (q - offset) + m[r] in all, offset = RepackedMatrix::quantOffset (16
// for Q5_0, else 0; the kernels' sums: repacked_kernels.h). Decode reads every weight byte once
// per token, so each layout is as large as its source per 16 x 32 weights (Q4_1 320, Q5_0 352,
// Q5_1 384, Q8_0 544 bytes; Q4_0 320 for 288). Sources:
//   Q4_0  Nibble4  q = nibble, m = -8 d (exact)                    lossless
//   Q4_1  Nibble4  q, d, m as stored                               lossless
//   Q4_K  Nibble4  per sub-block of 32: d = d * scale, m = -dmin * min, each rounded to f16
//   Q5_0  Nibble5  q = 5-bit value, offset 16, no m                lossless
//   Q5_1  Nibble5  q = 5-bit value, d, m as stored                 lossless
//   Q5_K  Int8     q = 5-bit value, d, m per sub-block as Q4_K
//   Q8_0  Int8     q, d as stored, m = 0                           lossless
//   Q6_K  Int8     each 32 dequantized values requantized: d = f16(amax / 127), q = round(v / d)
// (the K-quant scales lose at most 2^-11 relatively in f16; Q6_K's requantization adds at most
// d / 2 per weight). F32, F16 and BF16 are not repacked: they keep the reference kernels.
//
// NibbleK (Q4_K without loss, repackQ4KExact): a block is a whole super-block of 256 elements,
// 2368 bytes per 16 rows (the source's 2304 plus the 6-bit scales and mins unpacked to bytes):
//   u8 packed[4][8][16][4] | u8 scale[8][16] | u8 min[4][16][2] | f16 d[16] | f16 dmin[16]
//       packed[j][k][r][i] = byte 32 j + 4 k + i of row r's qs: its low nibble is element
//       64 j + 4 k + i (sub-block 2 j), its high nibble element 64 j + 32 + 4 k + i (2 j + 1);
//       min[j][r] = {min of sub-block 2 j, min of sub-block 2 j + 1} of row r
// and the weight is d * scale[s] * q - dmin * min[s], as in the source.
//
// SixK (Q6_K without loss, repackQ6KExact): a block is a whole super-block of 256 elements,
// 3360 bytes per 16 rows (the source's 16 x 210), chunk c = elements 32 c .. 32 c + 31:
//   u8 low[4][8][16][4] | u8 high[2][8][16][4] | i8 scale[8][16][2] | f16 d[16]
//       low[j][k][r][i]: low nibble = the low 4 bits of q(r, 64 j + 4 k + i) (chunk 2 j), high
//       nibble those of q(r, 64 j + 32 + 4 k + i) (chunk 2 j + 1); bits 2 c', 2 c' + 1 of
//       high[h][k][r][i] = the top 2 bits of q(r, 32 (4 h + c') + 4 k + i), q in 0..63;
//       scale[c][r] = {scale of sub-block 2 c, of 2 c + 1} of row r (16 elements each)
// and the weight is d * scale[e / 16] * (q - 32), as in the source.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>

#include "gguf/ggml_types.h"

namespace ember::cpu {

class ThreadPool;
struct WeightMatrix;

enum class RepackedLayout { Nibble4, Int8, Nibble5, NibbleK, SixK };

constexpr int64_t kRepackGroupRows = 16;
constexpr int64_t kRepackBlock = 32;
// Byte offsets inside a NibbleK block.
constexpr size_t kNibbleKScales = 2048, kNibbleKMins = 2176, kNibbleKD = 2304,
                 kNibbleKDmin = 2336, kNibbleKBytes = 2368;
// Byte offsets inside a SixK block.
constexpr size_t kSixKHigh = 2048, kSixKScales = 3072, kSixKD = 3328, kSixKBytes = 3360;

struct RepackedMatrix {
  RepackedLayout layout = RepackedLayout::Nibble4;
  int64_t rows = 0;  // the source's, without the padding
  int64_t cols = 0;
  int64_t groups = 0;       // ceil(rows / 16)
  int64_t blocks = 0;       // cols / 32 (NibbleK, SixK: cols / 256)
  size_t blockBytes = 0;    // see the layouts above
  size_t quantBytes = 0;    // 256, 512 or 320: the f16 d follow, then the f16 m (hasMin)
  int quantOffset = 0;      // subtracted from every q (Q5_0: 16)
  // Q4_1/Q5_1: the min term uses the activation block's sum as llama.cpp's Q8_1 keeps it,
  // f16(dx * S), rather than dx * S in float, so that the result follows llama.cpp's rounding.
  bool roundedMinSum = false;
  // Whether the blocks store m; without it m is 0 and the block ends after d.
  bool hasMin = true;
  // Q4_0, Q4_1, Q5_0, Q5_1, Q8_0: the kernels sum in llama.cpp's order (x86_repacked_lanes.h)
  // and give the reference kernels' bits; Q4_0 then takes its offset as -8 S in lane 0, as
  // llama.cpp does, instead of through m. Cleared, the fused kernels run instead (one float step
  // per block on the same exact integer sums: about 2x faster for Q5_0 prompts, but only close
  // to the reference; "approx" mode clears it for Q5_0).
  bool llamaLanes = false;
  bool lane0Offset = false;
  std::unique_ptr<uint8_t[], void (*)(uint8_t*)> storage{nullptr, nullptr};  // 64-byte aligned start; blocks of 352 / 544 bytes are not
  const uint8_t* block(int64_t group, int64_t b) const {
    return storage.get() + (size_t(group) * size_t(blocks) + size_t(b)) * blockBytes;
  }
  // m of row r (0..15) of a block, as f16 bits; 0 when the layout stores none.
  uint16_t minBits(const uint8_t* blk, int r) const {
    if (!hasMin) return 0;
    uint16_t v;
    std::memcpy(&v, blk + quantBytes + 32 + 2 * r, 2);
    return v;
  }
  size_t bytes() const { return size_t(groups) * size_t(blocks) * blockBytes; }
};

// q (0..63) of element e (0..255) of row r (0..15) in a SixK block, read as the layout says.
inline int sixKQuant(const uint8_t* blk, int r, int e) {
  const int c = e / 32, k = (e % 32) / 4, i = e % 4;
  const uint8_t low = blk[64 * (8 * (c / 2) + k) + 4 * r + i];
  const uint8_t high = blk[kSixKHigh + 64 * (8 * (c / 4) + k) + 4 * r + i];
  return (c % 2 ? low >> 4 : low & 0x0f) | ((high >> (2 * (c % 4))) & 3) << 4;
}

// Whether `type` has a repacked layout.
bool isRepackable(gguf::GgmlType type);

// Repacks `w` on the pool (row groups split across threads). Returns null when the type has no
// repacked layout or a converted scale does not fit in f16 (the reference kernels then serve
// this matrix). releaseSource: hands the source's file pages back to the kernel (madvise) as
// the rows are done, in chunks, so that a large matrix is never resident twice; for a
// read-only file mapping only (a later read faults the pages in again from the file).
std::unique_ptr<RepackedMatrix> repackMatrix(const WeightMatrix& w, ThreadPool& pool,
                                             bool releaseSource = false);

// Q4_K matrices whose row count is a multiple of 8 (those whose reference kernels follow
// llama.cpp's repacked order, which the NibbleK kernels reproduce) and whose fast SIMD level has
// NibbleK kernels (AVX-512 VNNI; elsewhere they keep the reference kernels).
bool isExactQ4KRepackable(const WeightMatrix& w);
// Repacks such a matrix into NibbleK (lossless; see above); null for any other matrix.
std::unique_ptr<RepackedMatrix> repackQ4KExact(const WeightMatrix& w, ThreadPool& pool,
                                               bool releaseSource = false);

// Q6_K matrices (any row count: the reference Q6_K kernels' order does not depend on it) whose
// fast SIMD level has SixK kernels (AVX-512 VNNI).
bool isExactQ6KRepackable(const WeightMatrix& w);
// Repacks such a matrix into SixK (lossless; see above); null for any other matrix.
std::unique_ptr<RepackedMatrix> repackQ6KExact(const WeightMatrix& w, ThreadPool& pool,
                                               bool releaseSource = false);

// Row `row` of a repacked matrix as float32 (cols values): d * q + m per weight, in float.
void dequantizeRepackedRow(const RepackedMatrix& m, int64_t row, float* out);

}  // namespace ember::cpu
