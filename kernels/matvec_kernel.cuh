#pragma once
// The decode matrix-vector product y (batch, rows) = x (batch, cols) W^T, templated on the weight
// format (quant_blocks.cuh) and on a batch bucket (1, 2, 4, 8). Shared by matvec_legacy.cu,
// matvec_kquants.cu and matvec_float.cu (split so the instantiations compile in parallel);
// matvec.cu validates the arguments and dispatches.
//
// Work split: a thread block owns kMatVecRows consecutive rows; its threads (32..128, a multiple
// of 32) stride over the rows' units (quant_blocks.cuh), so consecutive threads read consecutive
// blocks. Each thread loads the unit of every owned row first (several loads in flight), then for
// each 8-element group reads x once per batch column (two 16-byte loads, L1/L2 resident) and
// applies it to every owned row: each weight byte is read once per step, each x value is reused
// kMatVecRows times from registers. Arithmetic is fp32 FMA on the decoded integers; the scale is
// applied once per group (acc += scale * sum(q x) + offset * sum(x)). The block then reduces
// with warp shuffles and shared memory.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

#include "ember/kernels/kernels.h"
#include "quant_blocks.cuh"

namespace ember::kernels::matvec {

constexpr int kMatVecRows = 2;        // rows per thread block
constexpr int kMatVecMaxThreads = 128;

template <class Format, int kBatch>
__global__ void __launch_bounds__(kMatVecMaxThreads)
    quantMatVecKernel(const uint8_t* __restrict__ weight, size_t rowBytes, int32_t rows,
                      int32_t cols, const float* __restrict__ x, int32_t batch,
                      float* __restrict__ y) {
  const int32_t firstRow = int32_t(blockIdx.x) * kMatVecRows;
  // Rows past the end (rows not a multiple of kMatVecRows) and batch columns past `batch`
  // (batch below the bucket) re-read the last valid one; their results are never written.
  const uint8_t* rowData[kMatVecRows];
#pragma unroll
  for (int r = 0; r < kMatVecRows; ++r)
    rowData[r] = weight + size_t(min(firstRow + r, rows - 1)) * rowBytes;
  const float* xColumn[kBatch];
#pragma unroll
  for (int b = 0; b < kBatch; ++b) xColumn[b] = x + size_t(min(b, batch - 1)) * size_t(cols);

  float acc[kMatVecRows][kBatch];
#pragma unroll
  for (int r = 0; r < kMatVecRows; ++r)
#pragma unroll
    for (int b = 0; b < kBatch; ++b) acc[r][b] = 0.f;

  const int32_t units = cols / Format::kUnitElems;
  for (int32_t unit = int32_t(threadIdx.x); unit < units; unit += int32_t(blockDim.x)) {
    typename Format::Unit w[kMatVecRows];
#pragma unroll
    for (int r = 0; r < kMatVecRows; ++r) w[r] = Format::load(rowData[r], unit);
    const int32_t first = unit * Format::kUnitElems;
#pragma unroll
    for (int g = 0; g < Format::kUnitElems / 8; ++g) {
      float xv[kBatch][8];
      float xSum[kBatch];
#pragma unroll
      for (int b = 0; b < kBatch; ++b) {
        const float4* p = reinterpret_cast<const float4*>(xColumn[b] + first + 8 * g);
        const float4 lo = __ldg(p), hi = __ldg(p + 1);
        xv[b][0] = lo.x; xv[b][1] = lo.y; xv[b][2] = lo.z; xv[b][3] = lo.w;
        xv[b][4] = hi.x; xv[b][5] = hi.y; xv[b][6] = hi.z; xv[b][7] = hi.w;
        xSum[b] = 0.f;
        if constexpr (Format::kHasOffset) {
#pragma unroll
          for (int k = 0; k < 8; ++k) xSum[b] += xv[b][k];
        }
      }
#pragma unroll
      for (int r = 0; r < kMatVecRows; ++r) {
        float q[8], scale, offset;
        Format::group(w[r], g, q, scale, offset);
#pragma unroll
        for (int b = 0; b < kBatch; ++b) {
          float dot = 0.f;
#pragma unroll
          for (int k = 0; k < 8; ++k) dot = fmaf(q[k], xv[b][k], dot);
          acc[r][b] = Format::kScaled ? fmaf(scale, dot, acc[r][b]) : acc[r][b] + dot;
          if constexpr (Format::kHasOffset) acc[r][b] = fmaf(offset, xSum[b], acc[r][b]);
        }
      }
    }
  }

  // Sum over the block: shuffles within each warp, then one partial per warp in shared memory.
  __shared__ float partial[kMatVecMaxThreads / 32][kMatVecRows * kBatch];
  const int lane = int(threadIdx.x) & 31, warp = int(threadIdx.x) >> 5;
#pragma unroll
  for (int r = 0; r < kMatVecRows; ++r)
#pragma unroll
    for (int b = 0; b < kBatch; ++b) {
      float v = acc[r][b];
#pragma unroll
      for (int delta = 16; delta > 0; delta >>= 1) v += __shfl_xor_sync(0xffffffffu, v, delta);
      if (lane == 0) partial[warp][r * kBatch + b] = v;
    }
  __syncthreads();
  const int slot = int(threadIdx.x);
  if (slot < kMatVecRows * kBatch) {
    const int r = slot / kBatch, b = slot % kBatch;
    const int32_t row = firstRow + r;
    if (row < rows && b < batch) {
      float sum = 0.f;
      for (int i = 0; i < int(blockDim.x) / 32; ++i) sum += partial[i][slot];
      y[size_t(b) * size_t(rows) + size_t(row)] = sum;
    }
  }
}

template <class Format, int kBatch>
cudaError_t launchMatVecBucket(const void* weight, size_t rowBytes, int32_t rows, int32_t cols,
                               const float* x, int32_t batch, float* y, cudaStream_t stream) {
  const int32_t units = cols / Format::kUnitElems;
  // Enough warps to cover a row's units once, at most 4: short rows get small blocks.
  const int threads = std::min(kMatVecMaxThreads, std::max(32, (units + 31) / 32 * 32));
  const unsigned blocks = unsigned((int64_t(rows) + kMatVecRows - 1) / kMatVecRows);
  quantMatVecKernel<Format, kBatch><<<blocks, threads, 0, stream>>>(
      static_cast<const uint8_t*>(weight), rowBytes, rows, cols, x, batch, y);
  return cudaGetLastError();
}

// Picks the batch bucket (the smallest of 1, 2, 4, 8 that holds `batch`). Arguments are already
// validated by quantMatVec.
template <class Format>
cudaError_t launchMatVec(const void* weight, size_t rowBytes, int32_t rows, int32_t cols,
                         const float* x, int32_t batch, float* y, cudaStream_t stream) {
  if (batch <= 1) return launchMatVecBucket<Format, 1>(weight, rowBytes, rows, cols, x, batch, y, stream);
  if (batch <= 2) return launchMatVecBucket<Format, 2>(weight, rowBytes, rows, cols, x, batch, y, stream);
  if (batch <= 4) return launchMatVecBucket<Format, 4>(weight, rowBytes, rows, cols, x, batch, y, stream);
  return launchMatVecBucket<Format, 8>(weight, rowBytes, rows, cols, x, batch, y, stream);
}

// Per-family dispatchers (one .cu each); cudaErrorInvalidValue for a type not in the family.
cudaError_t launchLegacyMatVec(WeightType type, const void* weight, size_t rowBytes, int32_t rows,
                               int32_t cols, const float* x, int32_t batch, float* y,
                               cudaStream_t stream);
cudaError_t launchKQuantMatVec(WeightType type, const void* weight, size_t rowBytes, int32_t rows,
                               int32_t cols, const float* x, int32_t batch, float* y,
                               cudaStream_t stream);
cudaError_t launchFloatMatVec(WeightType type, const void* weight, size_t rowBytes, int32_t rows,
                              int32_t cols, const float* x, int32_t batch, float* y,
                              cudaStream_t stream);

}  // namespace ember::kernels::matvec
