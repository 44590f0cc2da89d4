// The repacked kernels built for AVX-512 F/BW/VL/DQ/VNNI (CMake adds the flags to *_avx512.cpp);
// only called after the dispatcher has checked the CPU.
#include "backend/cpu/repacked_kernels.h"

#if defined(__x86_64__) && defined(__AVX512VNNI__) && defined(__AVX512BW__)
#include "backend/cpu/x86_repacked_kernels.h"

namespace ember::cpu {
RepackedDotFn repackedKernelAvx512(const RepackedMatrix& m) { return x86RepackedKernel(m); }
}  // namespace ember::cpu

#else
namespace ember::cpu {
RepackedDotFn repackedKernelAvx512(const RepackedMatrix&) { return nullptr; }
}  // namespace ember::cpu
#endif
