// The scalar repacked kernel (the reference the SIMD ones are tested against) and the choice of
// kernel per level. Compiled for baseline x86-64: std::fma keeps the fused steps of the SIMD
// kernels, so every level gives the same bits.
#include "backend/cpu/repacked_kernels.h"

#include <cmath>
#include <cstring>

#include "backend/cpu/amx_support.h"
#include "backend/cpu/quant/block_formats.h"
#include "backend/cpu/quant/kernels.h"

namespace ember::cpu {
namespace {

// q - offset of row r, element j of a block (repack.h's layouts).
template <RepackedLayout kLayout>
int weightAt(const RepackedMatrix& m, const uint8_t* block, int r, int j) {
  if constexpr (kLayout == RepackedLayout::Int8) {
    return int8_t(block[64 * (j / 4) + 4 * r + j % 4]) - m.quantOffset;
  } else {
    const uint8_t byte = block[64 * ((j % 16) / 4) + 4 * r + j % 4];
    int q = j < 16 ? byte & 0x0f : byte >> 4;
    if constexpr (kLayout == RepackedLayout::Nibble5) q |= (block[256 + 4 * r + j % 4] >> (j / 4) & 1) << 4;
    return q - m.quantOffset;
  }
}

template <RepackedLayout kLayout, bool kRoundedSum>
void dotScalar(const RepackedTask& task) {
  const RepackedMatrix& m = *task.m;
  for (int64_t g = task.group0; g < task.group1; ++g) {
    const int rows = int(std::min<int64_t>(kRepackGroupRows, m.rows - g * kRepackGroupRows));
    for (int64_t t = 0; t < task.tokens; ++t) {
      const quant::Q8x32Row xr = quant::q8x32Row(task.x + size_t(t) * task.xStride, m.cols);
      float acc[kRepackGroupRows] = {};
      for (int64_t b = 0; b < m.blocks; ++b) {
        const uint8_t* block = m.block(g, b);
        const float dx = xr.d[b];
        const float xSum = kRoundedSum ? xr.s[b] : dx * float(xr.sum[b]);
        for (int r = 0; r < rows; ++r) {
          int32_t isum = 0;
          for (int j = 0; j < 32; ++j) isum += weightAt<kLayout>(m, block, r, j) * xr.qs[32 * b + j];
          const float d = quant::fp16ToFloat(quant::loadU16(block + m.quantBytes + 2 * r));
          const float mn = quant::fp16ToFloat(m.minBits(block, r));
          acc[r] = std::fma(float(isum), d * dx, acc[r]);
          acc[r] = std::fma(mn, xSum, acc[r]);
        }
      }
      float* y = task.y + t * task.yStride + g * kRepackGroupRows;
      std::memcpy(y, acc, size_t(rows) * sizeof(float));
    }
  }
}

// llama.cpp's order (see x86_repacked_lanes.h): 8 lanes of partial sums per row.
template <RepackedLayout kLayout>
void dotScalarLanes(const RepackedTask& task) {
  const RepackedMatrix& m = *task.m;
  for (int64_t g = task.group0; g < task.group1; ++g) {
    const int rows = int(std::min<int64_t>(kRepackGroupRows, m.rows - g * kRepackGroupRows));
    for (int64_t t = 0; t < task.tokens; ++t) {
      const quant::Q8x32Row xr = quant::q8x32Row(task.x + size_t(t) * task.xStride, m.cols);
      float* y = task.y + t * task.yStride + g * kRepackGroupRows;
      for (int r = 0; r < rows; ++r) {
        float lane[8] = {}, accMin = 0.0f;
        for (int64_t b = 0; b < m.blocks; ++b) {
          const uint8_t* block = m.block(g, b);
          const float d = quant::fp16ToFloat(quant::loadU16(block + m.quantBytes + 2 * r));
          const float dd = d * xr.d[b];
          for (int i = 0; i < 8; ++i) {
            int32_t p = 0;
            for (int j = 4 * i; j < 4 * i + 4; ++j)
              p += weightAt<kLayout>(m, block, r, j) * xr.qs[32 * b + j];
            if (m.lane0Offset && i == 0) p -= 8 * xr.sum[b];
            lane[i] = std::fma(float(p), dd, lane[i]);
          }
          if (m.roundedMinSum) {
            const float mn = quant::fp16ToFloat(m.minBits(block, r));
            accMin = std::fma(mn, xr.s[b], accMin);
          }
        }
        float v = ((lane[0] + lane[4]) + (lane[2] + lane[6])) +
                  ((lane[1] + lane[5]) + (lane[3] + lane[7]));
        if (m.roundedMinSum) v += accMin;
        y[r] = v;
      }
    }
  }
}

// NibbleK (repacked_kernels.h): the reference Q4_K kernels' integer sums and float steps.
void dotScalarNibbleK(const RepackedTask& task) {
  const RepackedMatrix& m = *task.m;
  for (int64_t g = task.group0; g < task.group1; ++g) {
    const int rows = int(std::min<int64_t>(kRepackGroupRows, m.rows - g * kRepackGroupRows));
    for (int64_t t = 0; t < task.tokens; ++t) {
      const quant::Q8xKRow xr = quant::q8xKRow(task.x + size_t(t) * task.xStride, m.cols);
      const bool grouped = t < task.groupedTokens;
      float* y = task.y + t * task.yStride + g * kRepackGroupRows;
      for (int r = 0; r < rows; ++r) {
        float acc = 0.0f, accMin = 0.0f;
        for (int64_t b = 0; b < m.blocks; ++b) {
          const uint8_t* blk = m.block(g, b);
          const int8_t* xq = xr.qs + 256 * b;
          const int16_t* bs = xr.bsums + 16 * b;
          const float xd = xr.d[b];
          const float scale = quant::fp16ToFloat(quant::loadU16(blk + kNibbleKD + 2 * r)) * xd;
          const float scaleMin =
              quant::fp16ToFloat(quant::loadU16(blk + kNibbleKDmin + 2 * r)) * xd;
          int32_t sumAll = 0, minAll = 0;
          for (int c = 0; c < 4; ++c) {
            int32_t chunk = 0, chunkMin = 0;
            for (int h = 0; h < 2; ++h) {
              const int s = 2 * c + h;
              int32_t dot = 0;
              for (int k = 0; k < 8; ++k)
                for (int i = 0; i < 4; ++i) {
                  const uint8_t byte = blk[64 * (8 * c + k) + 4 * r + i];
                  dot += (h ? byte >> 4 : byte & 0x0f) * xq[64 * c + 32 * h + 4 * k + i];
                }
              chunk += int32_t(blk[kNibbleKScales + 16 * s + r]) * dot;
              chunkMin += int32_t(blk[kNibbleKMins + 32 * c + 2 * r + h]) *
                          (int32_t(bs[2 * s]) + int32_t(bs[2 * s + 1]));
            }
            if (grouped) {
              acc = std::fma(float(chunk), scale, acc);
              accMin = std::fma(float(chunkMin), scaleMin, accMin);
            }
            sumAll += chunk, minAll += chunkMin;
          }
          if (!grouped) {
            acc = std::fma(float(sumAll), scale, acc);
            accMin = std::fma(float(minAll), scaleMin, accMin);
          }
        }
        y[r] = acc - accMin;
      }
    }
  }
}

// SixK (repacked_kernels.h): the reference Q6_K kernels' integer sums and float steps.
void dotScalarSixK(const RepackedTask& task) {
  const RepackedMatrix& m = *task.m;
  for (int64_t g = task.group0; g < task.group1; ++g) {
    const int rows = int(std::min<int64_t>(kRepackGroupRows, m.rows - g * kRepackGroupRows));
    for (int64_t t = 0; t < task.tokens; ++t) {
      const quant::Q8xKRow xr = quant::q8xKRow(task.x + size_t(t) * task.xStride, m.cols);
      float* y = task.y + t * task.yStride + g * kRepackGroupRows;
      for (int r = 0; r < rows; ++r) {
        float acc = 0.0f, lane[8] = {};
        for (int64_t b = 0; b < m.blocks; ++b) {
          const uint8_t* blk = m.block(g, b);
          const int8_t* xq = xr.qs + 256 * b;
          const int16_t* bs = xr.bsums + 16 * b;
          auto scale = [&](int s) {  // sub-block s (16 elements) of row r
            return int32_t(int8_t(blk[kSixKScales + 32 * (s / 2) + 2 * r + s % 2]));
          };
          int32_t sum[8];
          for (int k = 0; k < 8; ++k) {
            sum[k] = -32 * (scale(2 * k) * bs[2 * k] + scale(2 * k + 1) * bs[2 * k + 1]);
            for (int c = 0; c < 8; ++c) {
              int32_t p = 0;
              for (int i = 0; i < 4; ++i)
                p += sixKQuant(blk, r, 32 * c + 4 * k + i) * xq[32 * c + 4 * k + i];
              sum[k] += scale(2 * c + k / 4) * p;
            }
          }
          const float d = quant::fp16ToFloat(quant::loadU16(blk + kSixKD + 2 * r));
          if (task.tiledOrder) {
            int32_t total = 0;
            for (int k = 0; k < 8; ++k) total += sum[k];
            acc = std::fma(float(total) * d, xr.d[b], acc);
          } else {
            const float dd = d * xr.d[b];
            for (int k = 0; k < 8; ++k) lane[k] = std::fma(dd, float(sum[k]), lane[k]);
          }
        }
        y[r] = task.tiledOrder ? acc
                               : ((lane[0] + lane[4]) + (lane[2] + lane[6])) +
                                     ((lane[1] + lane[5]) + (lane[3] + lane[7]));
      }
    }
  }
}

}  // namespace

RepackedDotFn repackedKernelScalar(const RepackedMatrix& m) {
  using L = RepackedLayout;
  if (m.layout == L::NibbleK) return dotScalarNibbleK;
  if (m.layout == L::SixK) return dotScalarSixK;
  if (m.llamaLanes)
    return m.layout == L::Nibble4   ? dotScalarLanes<L::Nibble4>
           : m.layout == L::Nibble5 ? dotScalarLanes<L::Nibble5>
                                    : dotScalarLanes<L::Int8>;
  if (m.layout == L::Nibble5)
    return m.roundedMinSum ? dotScalar<L::Nibble5, true> : dotScalar<L::Nibble5, false>;
  if (m.layout == L::Nibble4)
    return m.roundedMinSum ? dotScalar<L::Nibble4, true> : dotScalar<L::Nibble4, false>;
  return m.roundedMinSum ? dotScalar<L::Int8, true> : dotScalar<L::Int8, false>;
}

bool amxRepackedKernels() {
  return fastSimdLevel() == SimdLevel::Avx512Vnni && amxAvailable();
}

RepackedDotFn repackedKernel(const RepackedMatrix& m, SimdLevel level) {
  if (level == SimdLevel::Avx512Vnni)
    if (RepackedDotFn f = repackedKernelAvx512(m)) return f;
  if (level >= SimdLevel::Avx2)
    if (RepackedDotFn f = repackedKernelAvx2(m)) return f;
  return repackedKernelScalar(m);
}

}  // namespace ember::cpu
