#pragma once
// Portable kernels: the reference the SIMD kernels are tested against, and the fallback on CPUs
// without AVX2. Declared here so that the SIMD tables can reuse the activation preparation that
// has no SIMD version.
#include <cstdint>

#include "backend/cpu/quant/kernels.h"

namespace ember::cpu::quant {

void prepareF32(const float* x, int64_t cols, uint8_t* out);
void prepareF16Rounded(const float* x, int64_t cols, uint8_t* out);
void prepareBf16Rounded(const float* x, int64_t cols, uint8_t* out);
void prepareQ8x32Scalar(const float* x, int64_t cols, uint8_t* out);
void prepareQ8xKScalar(const float* x, int64_t cols, uint8_t* out);

}  // namespace ember::cpu::quant
