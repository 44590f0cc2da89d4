#include "backend/cpu/repack.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <new>

#include <sys/mman.h>
#include <unistd.h>

#include "backend/cpu/matmul.h"
#include "backend/cpu/quant/block_formats.h"
#include "backend/cpu/quant/kernels.h"
#include "backend/cpu/thread_pool.h"

namespace ember::cpu {
namespace {

using gguf::GgmlType;
using namespace quant;

// One 32-element block of one row in the repacked form: weight j = d * q[j] + m.
struct SourceBlock {
  int q[32];
  uint16_t d = 0, m = 0;
};

// f16 bits of v; false when v does not fit (the matrix is then left to the reference kernels).
bool toHalf(float v, uint16_t& out) {
  out = floatToFp16(v);
  return std::isfinite(fp16ToFloat(out));
}

int fiveBit(const uint8_t* qs, uint32_t qh, int j) {
  const int nibble = j < 16 ? (qs[j] & 0x0f) : (qs[j - 16] >> 4);
  return nibble | int((qh >> j) & 1u) << 4;
}

// Sub-block s of a Q4_K/Q5_K super-block.
template <class Block, bool kFifthBit>
bool kQuantBlock(const Block& blk, int s, SourceBlock& out) {
  const ScalesMins sm = unpackScalesMins(blk.scales);
  const float d = fp16ToFloat(blk.d), dmin = fp16ToFloat(blk.dmin);
  const uint8_t* qs = blk.qs + 32 * (s / 2);
  for (int l = 0; l < 32; ++l) {
    int q = s % 2 ? qs[l] >> 4 : qs[l] & 0x0f;
    if constexpr (kFifthBit) q |= ((blk.qh[l] >> s) & 1) << 4;
    out.q[l] = q;
  }
  return toHalf(d * float(sm.scale[s]), out.d) && toHalf(-(dmin * float(sm.min[s])), out.m);
}

// Block b (of 32 elements) of a row of `type`.
bool sourceBlock(GgmlType type, const uint8_t* row, int64_t b, SourceBlock& out) {
  switch (type) {
    case GgmlType::Q4_0: {
      const auto& blk = reinterpret_cast<const BlockQ4_0*>(row)[b];
      for (int j = 0; j < 16; ++j) out.q[j] = blk.qs[j] & 0x0f, out.q[j + 16] = blk.qs[j] >> 4;
      out.d = blk.d;
      return toHalf(-8.0f * fp16ToFloat(blk.d), out.m);
    }
    case GgmlType::Q4_1: {
      const auto& blk = reinterpret_cast<const BlockQ4_1*>(row)[b];
      for (int j = 0; j < 16; ++j) out.q[j] = blk.qs[j] & 0x0f, out.q[j + 16] = blk.qs[j] >> 4;
      out.d = blk.d, out.m = blk.m;
      return true;
    }
    case GgmlType::Q5_0: {
      const auto& blk = reinterpret_cast<const BlockQ5_0*>(row)[b];
      const uint32_t qh = loadU32(blk.qh);
      for (int j = 0; j < 32; ++j) out.q[j] = fiveBit(blk.qs, qh, j) - 16;
      out.d = blk.d, out.m = 0;
      return true;
    }
    case GgmlType::Q5_1: {
      const auto& blk = reinterpret_cast<const BlockQ5_1*>(row)[b];
      const uint32_t qh = loadU32(blk.qh);
      for (int j = 0; j < 32; ++j) out.q[j] = fiveBit(blk.qs, qh, j);
      out.d = blk.d, out.m = blk.m;
      return true;
    }
    case GgmlType::Q8_0: {
      const auto& blk = reinterpret_cast<const BlockQ8_0*>(row)[b];
      for (int j = 0; j < 32; ++j) out.q[j] = blk.qs[j];
      out.d = blk.d, out.m = 0;
      return true;
    }
    case GgmlType::Q4_K:
      return kQuantBlock<BlockQ4_K, false>(reinterpret_cast<const BlockQ4_K*>(row)[b / 8],
                                           int(b % 8), out);
    case GgmlType::Q5_K:
      return kQuantBlock<BlockQ5_K, true>(reinterpret_cast<const BlockQ5_K*>(row)[b / 8],
                                          int(b % 8), out);
    case GgmlType::Q6_K: {
      float v[256];
      dequantizeScalar(type, row + (b / 8) * sizeof(BlockQ6_K), 256, v);
      const float* x = v + 32 * (b % 8);
      float amax = 0.0f;
      for (int j = 0; j < 32; ++j) amax = std::fmax(amax, std::fabs(x[j]));
      if (!toHalf(amax / 127.0f, out.d)) return false;
      const float d = fp16ToFloat(out.d);
      for (int j = 0; j < 32; ++j) {
        const float q = d != 0.0f ? std::nearbyint(x[j] / d) : 0.0f;
        out.q[j] = int(std::fmax(-127.0f, std::fmin(127.0f, q)));
      }
      out.m = 0;
      return true;
    }
    default:
      return false;
  }
}

RepackedLayout layoutOf(GgmlType type) {
  switch (type) {
    case GgmlType::Q4_0:
    case GgmlType::Q4_1:
    case GgmlType::Q4_K:
      return RepackedLayout::Nibble4;
    case GgmlType::Q5_0:
    case GgmlType::Q5_1:
      return RepackedLayout::Nibble5;
    default:
      return RepackedLayout::Int8;
  }
}

// Writes row r (0..15) of one repacked block.
void storeRow(const SourceBlock& s, const RepackedMatrix& m, int r, uint8_t* block) {
  const size_t quantBytes = m.quantBytes;
  if (m.layout != RepackedLayout::Int8) {
    int q[32];  // unsigned: 0..15 (Nibble4) or 0..31 (Nibble5)
    for (int j = 0; j < 32; ++j) q[j] = s.q[j] + m.quantOffset;
    for (int k = 0; k < 4; ++k)
      for (int i = 0; i < 4; ++i)
        block[64 * k + 4 * r + i] = uint8_t((q[4 * k + i] & 15) | (q[16 + 4 * k + i] & 15) << 4);
    if (m.layout == RepackedLayout::Nibble5)
      for (int i = 0; i < 4; ++i) {
        uint8_t high = 0;
        for (int k = 0; k < 8; ++k) high |= uint8_t((q[4 * k + i] >> 4 & 1) << k);
        block[256 + 4 * r + i] = high;
      }
  } else {
    for (int k = 0; k < 8; ++k)
      for (int i = 0; i < 4; ++i) block[64 * k + 4 * r + i] = uint8_t(int8_t(s.q[4 * k + i]));
  }
  std::memcpy(block + quantBytes + 2 * r, &s.d, 2);
  if (m.hasMin) std::memcpy(block + quantBytes + 32 + 2 * r, &s.m, 2);
}

void freeAligned(uint8_t* p) { std::free(p); }

// Drops the resident pages wholly inside [data, data + bytes) of a read-only file mapping.
void releasePages(const uint8_t* data, size_t bytes) {
  const auto page = uintptr_t(sysconf(_SC_PAGESIZE));
  const uintptr_t begin = (uintptr_t(data) + page - 1) / page * page;
  const uintptr_t end = (uintptr_t(data) + bytes) / page * page;
  if (end > begin) madvise(reinterpret_cast<void*>(begin), end - begin, MADV_DONTNEED);
}

constexpr int64_t kChunkGroups = 256;  // groups repacked between two page releases

}  // namespace

bool isRepackable(GgmlType type) {
  switch (type) {
    case GgmlType::Q4_0:
    case GgmlType::Q4_1:
    case GgmlType::Q5_0:
    case GgmlType::Q5_1:
    case GgmlType::Q8_0:
    case GgmlType::Q4_K:
    case GgmlType::Q5_K:
    case GgmlType::Q6_K:
      return true;
    default:
      return false;
  }
}

// 64-byte aligned storage for a repacked matrix. aligned_alloc wants a size that is a multiple
// of the alignment (C11; ASan refuses anything else), so the size is rounded up.
namespace {
uint8_t* allocateRows(size_t bytes) {
  auto* raw = static_cast<uint8_t*>(std::aligned_alloc(64, (bytes + 63) / 64 * 64));
  if (raw == nullptr) throw std::bad_alloc();
  return raw;
}
}  // namespace

std::unique_ptr<RepackedMatrix> repackMatrix(const WeightMatrix& w, ThreadPool& pool,
                                             bool releaseSource) {
  if (!isRepackable(w.type) || w.data == nullptr || w.cols % kRepackBlock != 0) return nullptr;
  auto m = std::make_unique<RepackedMatrix>();
  m->layout = layoutOf(w.type);
  m->rows = w.rows;
  m->cols = w.cols;
  m->groups = (w.rows + kRepackGroupRows - 1) / kRepackGroupRows;
  m->blocks = w.cols / kRepackBlock;
  m->quantBytes = m->layout == RepackedLayout::Nibble4 ? 256
                  : m->layout == RepackedLayout::Nibble5 ? 320 : 512;
  m->quantOffset = w.type == GgmlType::Q5_0 ? 16 : 0;
  m->hasMin = !(w.type == GgmlType::Q5_0 || w.type == GgmlType::Q8_0 || w.type == GgmlType::Q6_K);
  m->blockBytes = m->quantBytes + (m->hasMin ? 64 : 32);
  m->roundedMinSum = w.type == GgmlType::Q4_1 || w.type == GgmlType::Q5_1;
  m->llamaLanes = w.type == GgmlType::Q4_0 || w.type == GgmlType::Q4_1 ||
                  w.type == GgmlType::Q5_0 || w.type == GgmlType::Q5_1 || w.type == GgmlType::Q8_0;
  m->lane0Offset = w.type == GgmlType::Q4_0;
  auto* raw = allocateRows(m->bytes());
  m->storage = {raw, freeAligned};

  // Each thread converts whole groups; a scale that does not fit in f16 fails the matrix.
  std::atomic<bool> failed{false};
  for (int64_t c0 = 0; c0 < m->groups && !failed; c0 += kChunkGroups) {
  const int64_t c1 = std::min(m->groups, c0 + kChunkGroups);
  pool.parallelFor(c1 - c0, 1, [&](int64_t g0, int64_t g1, int) {
    SourceBlock s;
    for (int64_t g = c0 + g0; g < c0 + g1 && !failed.load(std::memory_order_relaxed); ++g)
      for (int64_t b = 0; b < m->blocks; ++b) {
        uint8_t* block = raw + (size_t(g) * size_t(m->blocks) + size_t(b)) * m->blockBytes;
        for (int r = 0; r < kRepackGroupRows; ++r) {
          const int64_t row = g * kRepackGroupRows + r;
          if (row < w.rows) {
            if (!sourceBlock(w.type, w.data + size_t(row) * w.rowBytes, b, s)) failed = true;
          } else {
            s = SourceBlock{};  // padding rows: zero weights
          }
          storeRow(s, *m, r, block);
        }
      }
  });
  if (releaseSource) {
    const int64_t r0 = c0 * kRepackGroupRows, r1 = std::min(w.rows, c1 * kRepackGroupRows);
    releasePages(w.data + size_t(r0) * w.rowBytes, size_t(r1 - r0) * w.rowBytes);
  }
  }
  if (failed) return nullptr;
  return m;
}

bool isExactQ4KRepackable(const WeightMatrix& w) {
  return w.type == GgmlType::Q4_K && w.data != nullptr && w.rows % kRepackRowMultiple == 0 &&
         w.cols % kSuperBlock == 0 && fastSimdLevel() == SimdLevel::Avx512Vnni;
}

std::unique_ptr<RepackedMatrix> repackQ4KExact(const WeightMatrix& w, ThreadPool& pool,
                                               bool releaseSource) {
  if (!isExactQ4KRepackable(w)) return nullptr;
  auto m = std::make_unique<RepackedMatrix>();
  m->layout = RepackedLayout::NibbleK;
  m->rows = w.rows;
  m->cols = w.cols;
  m->groups = (w.rows + kRepackGroupRows - 1) / kRepackGroupRows;
  m->blocks = w.cols / kSuperBlock;
  m->blockBytes = kNibbleKBytes;
  m->quantBytes = kNibbleKScales;
  m->hasMin = false;  // minBits is for the other layouts; NibbleK keeps its own mins
  auto* raw = allocateRows(m->bytes());
  m->storage = {raw, freeAligned};
  std::memset(raw, 0, m->bytes());  // padding rows: zero weights, scales and mins
  for (int64_t c0 = 0; c0 < m->groups; c0 += kChunkGroups) {
    const int64_t c1 = std::min(m->groups, c0 + kChunkGroups);
    pool.parallelFor(c1 - c0, 1, [&](int64_t g0, int64_t g1, int) {
      for (int64_t g = c0 + g0; g < c0 + g1; ++g)
        for (int r = 0; r < kRepackGroupRows && g * kRepackGroupRows + r < w.rows; ++r) {
          const auto* src = reinterpret_cast<const BlockQ4_K*>(
              w.data + size_t(g * kRepackGroupRows + r) * w.rowBytes);
          for (int64_t b = 0; b < m->blocks; ++b) {
            uint8_t* blk = raw + (size_t(g) * size_t(m->blocks) + size_t(b)) * kNibbleKBytes;
            const BlockQ4_K& q = src[b];
            for (int j = 0; j < 4; ++j)
              for (int k = 0; k < 8; ++k)
                std::memcpy(blk + 64 * (8 * j + k) + 4 * r, q.qs + 32 * j + 4 * k, 4);
            const ScalesMins sm = unpackScalesMins(q.scales);
            for (int s = 0; s < 8; ++s) {
              blk[kNibbleKScales + 16 * s + r] = sm.scale[s];
              blk[kNibbleKMins + 32 * (s / 2) + 2 * r + s % 2] = sm.min[s];
            }
            std::memcpy(blk + kNibbleKD + 2 * r, &q.d, 2);
            std::memcpy(blk + kNibbleKDmin + 2 * r, &q.dmin, 2);
          }
        }
    });
    if (releaseSource) {
      const int64_t r0 = c0 * kRepackGroupRows, r1 = std::min(w.rows, c1 * kRepackGroupRows);
      releasePages(w.data + size_t(r0) * w.rowBytes, size_t(r1 - r0) * w.rowBytes);
    }
  }
  return m;
}

bool isExactQ6KRepackable(const WeightMatrix& w) {
  return w.type == GgmlType::Q6_K && w.data != nullptr && w.cols % kSuperBlock == 0 &&
         fastSimdLevel() == SimdLevel::Avx512Vnni;
}

std::unique_ptr<RepackedMatrix> repackQ6KExact(const WeightMatrix& w, ThreadPool& pool,
                                               bool releaseSource) {
  if (!isExactQ6KRepackable(w)) return nullptr;
  auto m = std::make_unique<RepackedMatrix>();
  m->layout = RepackedLayout::SixK;
  m->rows = w.rows;
  m->cols = w.cols;
  m->groups = (w.rows + kRepackGroupRows - 1) / kRepackGroupRows;
  m->blocks = w.cols / kSuperBlock;
  m->blockBytes = kSixKBytes;
  m->quantBytes = kSixKD;
  m->hasMin = false;
  auto* raw = allocateRows(m->bytes());
  m->storage = {raw, freeAligned};
  std::memset(raw, 0, m->bytes());  // padding rows: zero quants and scales
  for (int64_t c0 = 0; c0 < m->groups; c0 += kChunkGroups) {
    const int64_t c1 = std::min(m->groups, c0 + kChunkGroups);
    pool.parallelFor(c1 - c0, 1, [&](int64_t g0, int64_t g1, int) {
      for (int64_t g = c0 + g0; g < c0 + g1; ++g)
        for (int r = 0; r < kRepackGroupRows && g * kRepackGroupRows + r < w.rows; ++r) {
          const auto* src = reinterpret_cast<const BlockQ6_K*>(
              w.data + size_t(g * kRepackGroupRows + r) * w.rowBytes);
          for (int64_t b = 0; b < m->blocks; ++b) {
            uint8_t* blk = raw + (size_t(g) * size_t(m->blocks) + size_t(b)) * kSixKBytes;
            const BlockQ6_K& q = src[b];
            uint8_t v[256];  // q of each element, in the source's order (dequantize.cpp)
            for (int h = 0; h < 2; ++h)
              for (int l = 0; l < 32; ++l) {
                const uint8_t a = q.ql[64 * h + l], c = q.ql[64 * h + 32 + l], hb = q.qh[32 * h + l];
                v[128 * h + l] = uint8_t((a & 0x0f) | (hb & 3) << 4);
                v[128 * h + 32 + l] = uint8_t((c & 0x0f) | ((hb >> 2) & 3) << 4);
                v[128 * h + 64 + l] = uint8_t((a >> 4) | ((hb >> 4) & 3) << 4);
                v[128 * h + 96 + l] = uint8_t((c >> 4) | ((hb >> 6) & 3) << 4);
              }
            for (int k = 0; k < 8; ++k)
              for (int i = 0; i < 4; ++i) {
                const int e = 4 * k + i;  // within a chunk
                for (int j = 0; j < 4; ++j)
                  blk[64 * (8 * j + k) + 4 * r + i] =
                      uint8_t((v[64 * j + e] & 0x0f) | (v[64 * j + 32 + e] & 0x0f) << 4);
                for (int h = 0; h < 2; ++h)
                  blk[kSixKHigh + 64 * (8 * h + k) + 4 * r + i] =
                      uint8_t(v[128 * h + e] >> 4 | (v[128 * h + 32 + e] >> 4) << 2 |
                              (v[128 * h + 64 + e] >> 4) << 4 | (v[128 * h + 96 + e] >> 4) << 6);
              }
            for (int s = 0; s < 16; ++s)
              blk[kSixKScales + 32 * (s / 2) + 2 * r + s % 2] = uint8_t(q.scales[s]);
            std::memcpy(blk + kSixKD + 2 * r, &q.d, 2);
          }
        }
    });
    if (releaseSource) {
      const int64_t r0 = c0 * kRepackGroupRows, r1 = std::min(w.rows, c1 * kRepackGroupRows);
      releasePages(w.data + size_t(r0) * w.rowBytes, size_t(r1 - r0) * w.rowBytes);
    }
  }
  return m;
}

void dequantizeRepackedRow(const RepackedMatrix& m, int64_t row, float* out) {
  const int64_t g = row / kRepackGroupRows;
  const int r = int(row % kRepackGroupRows);
  if (m.layout == RepackedLayout::SixK) {  // as the source's dequantization computes it
    for (int64_t b = 0; b < m.blocks; ++b) {
      const uint8_t* blk = m.block(g, b);
      const float d = fp16ToFloat(loadU16(blk + kSixKD + 2 * r));
      for (int e = 0; e < 256; ++e) {
        const int scale = int8_t(blk[kSixKScales + 32 * (e / 32) + 2 * r + (e % 32) / 16]);
        out[256 * b + e] = d * float(scale) * float(sixKQuant(blk, r, e) - 32);
      }
    }
    return;
  }
  if (m.layout == RepackedLayout::NibbleK) {  // as the source's dequantization computes it
    for (int64_t b = 0; b < m.blocks; ++b) {
      const uint8_t* blk = m.block(g, b);
      const float d = fp16ToFloat(loadU16(blk + kNibbleKD + 2 * r));
      const float dmin = fp16ToFloat(loadU16(blk + kNibbleKDmin + 2 * r));
      for (int e = 0; e < 256; ++e) {
        const int j = e / 64, s = e / 32, k = (e % 32) / 4, i = e % 4;
        const uint8_t byte = blk[64 * (8 * j + k) + 4 * r + i];
        const int q = s % 2 ? byte >> 4 : byte & 0x0f;
        const float scale = d * float(blk[kNibbleKScales + 16 * s + r]);
        const float mn = dmin * float(blk[kNibbleKMins + 32 * j + 2 * r + s % 2]);
        out[256 * b + e] = scale * float(q) - mn;
      }
    }
    return;
  }
  for (int64_t b = 0; b < m.blocks; ++b) {
    const uint8_t* block = m.block(g, b);
    const float d = fp16ToFloat(loadU16(block + m.quantBytes + 2 * r));
    const float mn = fp16ToFloat(m.minBits(block, r));
    for (int j = 0; j < 32; ++j) {
      int q;
      if (m.layout == RepackedLayout::Int8) {
        q = int8_t(block[64 * (j / 4) + 4 * r + j % 4]);
      } else {
        const uint8_t byte = block[64 * ((j % 16) / 4) + 4 * r + j % 4];
        q = j < 16 ? byte & 0x0f : byte >> 4;
        if (m.layout == RepackedLayout::Nibble5) q |= (block[256 + 4 * r + j % 4] >> (j / 4) & 1) << 4;
      }
      out[32 * b + j] = d * float(q - m.quantOffset) + mn;
    }
  }
}

}  // namespace ember::cpu
