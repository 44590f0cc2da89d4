// Kernels compiled for AVX2 + FMA + F16C (CMake adds -mavx2 -mfma -mf16c to *_avx2.cpp). Only
// called after the dispatcher has checked the CPU. 16 vector registers: 4 rows x 2 tokens.
#include "backend/cpu/quant/kernels.h"

#if defined(__x86_64__) && defined(__AVX2__)
#include "backend/cpu/quant/x86_kernel_table.h"

namespace ember::cpu::quant {
const TypeKernels* avx2Kernels(gguf::GgmlType type) { return x86Kernels<2>(type); }
}  // namespace ember::cpu::quant

#else
namespace ember::cpu::quant {
const TypeKernels* avx2Kernels(gguf::GgmlType) { return nullptr; }
}  // namespace ember::cpu::quant
#endif
