#pragma once
// The CPU kernels' view of the GGUF weight blocks: the layouts and conversions themselves live
// in gguf/quant_blocks.h and gguf/fp16.h (shared with the other backends); here they are named in
// the kernels' namespace, with the unaligned loads the kernels use.
#include <cstdint>
#include <cstring>

#include "gguf/fp16.h"
#include "gguf/quant_blocks.h"

// Helpers here are always inlined: the AVX2/AVX-512 files include this header too, and an
// out-of-line copy compiled for AVX-512 must never be the one a baseline caller links to.
#define EMBER_INLINE inline __attribute__((always_inline))

namespace ember::cpu::quant {

using gguf::BlockMxfp4;
using gguf::BlockQ4_0;
using gguf::BlockQ4_1;
using gguf::BlockQ4_K;
using gguf::BlockQ5_0;
using gguf::BlockQ5_1;
using gguf::BlockQ5_K;
using gguf::BlockQ6_K;
using gguf::BlockQ8_0;
using gguf::bf16ToFloat;
using gguf::e8m0Half;
using gguf::floatToBf16;
using gguf::floatToFp16;
using gguf::fp16ToFloat;
using gguf::kBlock32;
using gguf::kFp4Values;
using gguf::kSuperBlock;
using gguf::roundThroughBf16;
using gguf::roundThroughFp16;
using gguf::ScalesMins;
using gguf::unpackScalesMins;

EMBER_INLINE uint16_t loadU16(const void* p) {
  uint16_t v;
  std::memcpy(&v, p, 2);
  return v;
}
EMBER_INLINE uint32_t loadU32(const void* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}

}  // namespace ember::cpu::quant
