// Kernels compiled for AVX-512 F/BW/VL/DQ/VNNI (CMake adds the flags to *_avx512.cpp): the
// 32-element block types two blocks per 512-bit vector (x86_dot_pairs_avx512.h); K-quants and
// float types with the AVX2 tiles on 256-bit vectors, using vpdpbusd/vpdpwssd for the integer
// sums. 32 vector registers hold 4 rows x 4 tokens. Only called after the dispatcher has
// checked the CPU.
#include "backend/cpu/quant/kernels.h"

#if defined(__x86_64__) && defined(__AVX512VNNI__) && defined(__AVX512VL__)
#define EMBER_X86_BLOCK_PAIRS 1
#include "backend/cpu/quant/x86_kernel_table.h"

namespace ember::cpu::quant {
const TypeKernels* avx512Kernels(gguf::GgmlType type) { return x86Kernels<4>(type); }
}  // namespace ember::cpu::quant

#else
namespace ember::cpu::quant {
const TypeKernels* avx512Kernels(gguf::GgmlType) { return nullptr; }
}  // namespace ember::cpu::quant
#endif
