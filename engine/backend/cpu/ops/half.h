#pragma once
// fp16 for the CPU ops: the KV cache stores keys and values in fp16, as llama.cpp's default cache
// does, and attention rounds its operands the way llama.cpp's does. The conversions are
// gguf/fp16.h's (round to nearest even, as the F16C instructions).
#include <cstdint>

#include "gguf/fp16.h"

namespace ember::cpu::ops {

EMBER_FP16_INLINE uint16_t floatToHalf(float f) { return gguf::floatToFp16(f); }
EMBER_FP16_INLINE float halfToFloat(uint16_t h) { return gguf::fp16ToFloat(h); }
// x rounded to the nearest fp16 value, as a float.
EMBER_FP16_INLINE float roundToHalf(float x) { return gguf::roundThroughFp16(x); }

}  // namespace ember::cpu::ops
