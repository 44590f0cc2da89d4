#pragma once
// Dequantizes whole rows of a weight matrix, unit by unit (quant_blocks.cuh), into fp32 or fp16:
// the kernel behind embedRows (selected rows, scaled) and dequantizeToHalf (every row). The
// values are bit-identical to the CPU's dequantize.cpp (then rounded to nearest-even for fp16).
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

#include "quant_blocks.cuh"

namespace ember::kernels::quant {

__device__ __forceinline__ void storeGroup(float* dst, const float (&v)[8]) {
  reinterpret_cast<float4*>(dst)[0] = make_float4(v[0], v[1], v[2], v[3]);
  reinterpret_cast<float4*>(dst)[1] = make_float4(v[4], v[5], v[6], v[7]);
}
__device__ __forceinline__ void storeGroup(__half* dst, const float (&v)[8]) {
  __half2 h[4];
#pragma unroll
  for (int i = 0; i < 4; ++i) h[i] = __floats2half2_rn(v[2 * i], v[2 * i + 1]);
  uint4 bits;
  bits.x = *reinterpret_cast<const uint32_t*>(&h[0]);
  bits.y = *reinterpret_cast<const uint32_t*>(&h[1]);
  bits.z = *reinterpret_cast<const uint32_t*>(&h[2]);
  bits.w = *reinterpret_cast<const uint32_t*>(&h[3]);
  *reinterpret_cast<uint4*>(dst) = bits;
}

// out (rows, cols) = scale * W[rowIds[i]] (rowIds null: row i; a negative id gives zeros). One
// thread per unit, grid-stride. out must be 16-byte aligned and cols a multiple of
// requiredColumnMultiple(type).
template <class Format, class Out>
__global__ void dequantizeRowsKernel(const uint8_t* __restrict__ weight, size_t rowBytes,
                                     const int32_t* __restrict__ rowIds, int64_t rows,
                                     int64_t cols, float scale, Out* __restrict__ out) {
  const int64_t unitsPerRow = cols / Format::kUnitElems;
  const int64_t total = rows * unitsPerRow;
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t index = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; index < total;
       index += stride) {
    const int64_t row = index / unitsPerRow;
    const int64_t unit = index - row * unitsPerRow;
    const int64_t source = rowIds ? int64_t(rowIds[row]) : row;
    Out* dst = out + row * cols + unit * Format::kUnitElems;
    if (source < 0) {
      const float zeros[8] = {};
#pragma unroll
      for (int g = 0; g < Format::kUnitElems / 8; ++g) storeGroup(dst + 8 * g, zeros);
      continue;
    }
    const typename Format::Unit u = Format::load(weight + size_t(source) * rowBytes, unit);
#pragma unroll
    for (int g = 0; g < Format::kUnitElems / 8; ++g) {
      float v[8];
      dequantizeGroup<Format>(u, g, v);
      if (scale != 1.f) {
#pragma unroll
        for (int k = 0; k < 8; ++k) v[k] = __fmul_rn(v[k], scale);
      }
      storeGroup(dst + 8 * g, v);
    }
  }
}

// Checks the arguments and launches dequantizeRowsKernel for `type`.
template <class Out>
cudaError_t launchDequantizeRows(WeightType type, const void* weight, const int32_t* rowIds,
                                 int64_t rows, int64_t cols, float scale, Out* out,
                                 cudaStream_t stream) {
  const int32_t multiple = requiredColumnMultiple(type);
  if (multiple == 0 || rows < 0 || cols <= 0 || cols % multiple != 0) return cudaErrorInvalidValue;
  if (rows == 0) return cudaSuccess;
  if (!weight || !out || !isAligned16(weight) || !isAligned16(out)) return cudaErrorInvalidValue;
  const size_t rowBytes = weightRowBytes(type, cols);
  if (rowBytes == 0) return cudaErrorInvalidValue;
  return visitFormat(type, [&](auto format) -> cudaError_t {
    using Format = decltype(format);
    constexpr int kThreads = 256;
    const int64_t units = rows * (cols / Format::kUnitElems);
    // Grid-stride: at most 64k blocks, plenty to fill the device.
    const int64_t blocks = std::min<int64_t>((units + kThreads - 1) / kThreads, 65536);
    dequantizeRowsKernel<Format, Out><<<unsigned(blocks), kThreads, 0, stream>>>(
        static_cast<const uint8_t*>(weight), rowBytes, rowIds, rows, cols, scale, out);
    return cudaGetLastError();
  });
}

}  // namespace ember::kernels::quant
