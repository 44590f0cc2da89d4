#pragma once
// The kernel table behind matmul: for each weight type and SIMD level, how the activations are
// prepared (quantized) and the dot-product kernel that consumes them.
//
// Activation rows live in the matmul scratch in our own layouts (not GGUF blocks), one row per
// token, each row starting on a 64-byte boundary:
//   Float      float[cols]; for F16/BF16 weights the values are first rounded to F16/BF16, as
//              llama.cpp does (its vec_dot_type for those weights is F16/BF16).
//   Q8x32      int8 qs[cols] | float d[nb] | int32 sum[nb] | float s[nb]    (nb = cols / 32)
//              ggml's Q8_0/Q8_1: d = amax / 127 rounded to F16, qs = round-half-even(x * 127 /
//              amax), s = F16(d * sum) (Q8_1's "s", for Q4_1/Q5_1); sum = the exact integer sum,
//              which lets unsigned-weight kernels subtract an offset (8, 16, 128) exactly.
//   Q8xK       int8 qs[cols] | float d[nb] | int16 bsums[16 * nb]               (nb = cols / 256)
//              ggml's Q8_K: d = max / -127 (max: the signed value of largest magnitude),
//              bsums = sums of each 16 quants.
#include <cstddef>
#include <cstdint>

#include "backend/cpu/matmul.h"
#include "backend/cpu/quant/block_formats.h"
#include "gguf/ggml_types.h"

namespace ember::cpu::quant {

enum class ActivationFormat { Float, Q8x32, Q8xK };

// Where the parts of one quantized activation row are.
struct Q8x32Row {
  const int8_t* qs;
  const float* d;
  const int32_t* sum;
  const float* s;
};
struct Q8xKRow {
  const int8_t* qs;
  const float* d;
  const int16_t* bsums;
};
EMBER_INLINE Q8x32Row q8x32Row(const uint8_t* row, int64_t cols) {
  const int64_t nb = cols / 32;
  const auto* d = reinterpret_cast<const float*>(row + cols);
  return {reinterpret_cast<const int8_t*>(row), d, reinterpret_cast<const int32_t*>(d + nb),
          d + 2 * nb};
}
EMBER_INLINE Q8xKRow q8xKRow(const uint8_t* row, int64_t cols) {
  const int64_t nb = cols / 256;
  const auto* d = reinterpret_cast<const float*>(row + cols);
  return {reinterpret_cast<const int8_t*>(row), d, reinterpret_cast<const int16_t*>(d + nb)};
}
size_t activationRowBytes(ActivationFormat format, int64_t cols);  // a multiple of 64

// y[t * yStride + r] = dot(weight row r, activation row t) for r < rows, t < tokens.
struct DotTask {
  const uint8_t* w;
  size_t wStride;  // bytes per weight row
  int64_t rows;
  const uint8_t* x;
  size_t xStride;  // bytes per activation row
  int64_t tokens;
  int64_t cols;
  float* y;
  int64_t yStride;
};
using DotFn = void (*)(const DotTask&);
// Prepares one activation row (cols floats) in the type's activation format.
using PrepareFn = void (*)(const float* x, int64_t cols, uint8_t* out);

struct TypeKernels {
  ActivationFormat format = ActivationFormat::Float;
  PrepareFn prepare = nullptr;
  DotFn dot = nullptr;
  // llama.cpp's x86 backend repacks some weight types (Q4_K) at load when the row count is a
  // multiple of kRepackRowMultiple, and runs them in another float order: one for the tokens
  // of a product that fall in whole groups of kRepackTokenGroup (when there are at least that
  // many) and one for the tokens left over. When set, matmul uses these for such matrices.
  DotFn dotRepackedGroups = nullptr;
  DotFn dotRepackedSingles = nullptr;
  // llama.cpp runs products of at least kTiledMinTokens tokens on K-quant matrices it does not
  // repack through its tiled matmul, in another float order. When set, matmul uses this then.
  DotFn dotTiled = nullptr;
};
constexpr int64_t kTiledMinTokens = 8;
constexpr int64_t kRepackRowMultiple = 8;
constexpr int64_t kRepackTokenGroup = 4;
// How many leading tokens of an n-token product llama.cpp runs in groups (the rest singly).
constexpr int64_t repackedGroupTokens(int64_t n) {
  return n >= kRepackTokenGroup ? n - n % kRepackTokenGroup : 0;
}

// The kernels of `type` at `level`; null when the type is not supported. A level the CPU lacks
// is never requested (kernelsFor checks).
const TypeKernels* kernelsFor(gguf::GgmlType type, SimdLevel level);

// Per-level tables, filled by the files compiled for that instruction set. Each returns null
// for types it has no kernel for (the scalar table has them all).
const TypeKernels* scalarKernels(gguf::GgmlType type);
const TypeKernels* avx2Kernels(gguf::GgmlType type);
const TypeKernels* avx512Kernels(gguf::GgmlType type);

// Scalar dequantization of `count` elements (a whole number of blocks) of `type`.
void dequantizeScalar(gguf::GgmlType type, const uint8_t* blocks, int64_t count, float* out);

}  // namespace ember::cpu::quant
