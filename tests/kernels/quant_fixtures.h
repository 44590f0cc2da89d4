#pragma once
// Host-side fixtures for the quantized-weight kernel tests: random weight matrices of every GGUF
// type (the CPU tests' generator: random quant bytes, so every bit pattern occurs, with finite
// F16 scales of realistic size), their CPU dequantization (the reference: dequantize.cpp, bit
// exact against PyPI gguf), and the mapping to the kernels' WeightType.
#include <cstdint>
#include <cstring>
#include <vector>

#include "backend/cpu/matmul.h"
#include "backend/cpu/quant/block_formats.h"
#include "ember/kernels/kernels.h"
#include "engine/cpu/cpu_test_support.h"

namespace ember::kernels::test {

using gguf::GgmlType;

// The kernels' enum uses ggml's numbers, so the conversion is a cast.
inline WeightType weightTypeOf(GgmlType type) { return WeightType(int32_t(type)); }

// The smallest column multiple the CUDA kernels accept (block size; 8 for the float types).
inline int64_t columnMultipleOf(GgmlType type) {
  const int64_t block = ember::test::blockSizeOf(type);
  return block == 1 ? 8 : block;
}

// W (rows, cols) dequantized on the CPU, row-major.
inline std::vector<float> dequantizeOnCpu(const cpu::WeightMatrix& w) {
  std::vector<float> out(size_t(w.rows * w.cols));
  for (int64_t r = 0; r < w.rows; ++r) cpu::dequantizeRow(w, r, out.data() + r * w.cols);
  return out;
}

// The weight bytes only (randomMatrix pads its buffer by 2 bytes).
inline std::vector<uint8_t> weightBytes(const ember::test::OwnedMatrix& m) {
  return {m.bytes.begin(), m.bytes.begin() + std::ptrdiff_t(m.view.rowBytes * size_t(m.view.rows))};
}

inline uint32_t bitsOf(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

}  // namespace ember::kernels::test
