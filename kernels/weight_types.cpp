// Byte sizes of the GGUF weight types the CUDA backend reads: elements per block and bytes per
// block as GGML defines them (the same numbers as engine/gguf/quant_blocks.h).
#include "ember/kernels/kernels.h"

namespace ember::kernels {
namespace {

struct BlockGeometry {
  int64_t elements = 0;  // values per block (0: unsupported type)
  int64_t bytes = 0;     // bytes per block
};

BlockGeometry blockGeometry(WeightType type) {
  switch (type) {
    case WeightType::F32: return {1, 4};
    case WeightType::F16: return {1, 2};
    case WeightType::BF16: return {1, 2};
    case WeightType::Q4_0: return {32, 18};    // fp16 scale + 16 bytes of nibbles
    case WeightType::Q4_1: return {32, 20};    // fp16 scale, fp16 min + 16 bytes of nibbles
    case WeightType::Q5_0: return {32, 22};    // fp16 scale + 4 bytes high bits + 16 nibbles
    case WeightType::Q5_1: return {32, 24};    // fp16 scale, fp16 min + 4 + 16
    case WeightType::Q8_0: return {32, 34};    // fp16 scale + 32 int8
    case WeightType::Q4_K: return {256, 144};  // d, dmin, 12 bytes scales, 128 bytes nibbles
    case WeightType::Q5_K: return {256, 176};  // as Q4_K + 32 bytes of high bits
    case WeightType::Q6_K: return {256, 210};  // 128 low + 64 high + 16 scales + fp16 d
    case WeightType::MXFP4: return {32, 17};   // E8M0 scale + 16 bytes of E2M1 nibbles
  }
  return {};
}

}  // namespace

size_t weightRowBytes(WeightType type, int64_t cols) {
  const BlockGeometry g = blockGeometry(type);
  if (g.elements == 0 || cols < 0 || cols % g.elements != 0) return 0;
  return size_t(cols / g.elements * g.bytes);
}

bool isSupportedWeightType(WeightType type) { return blockGeometry(type).elements != 0; }

}  // namespace ember::kernels
