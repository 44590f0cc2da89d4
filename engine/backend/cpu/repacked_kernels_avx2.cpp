// The repacked kernels built for AVX2 + FMA + F16C (CMake adds the flags to *_avx2.cpp).
#include "backend/cpu/repacked_kernels.h"

#if defined(__x86_64__) && defined(__AVX2__) && defined(__FMA__) && defined(__F16C__)
#include "backend/cpu/x86_repacked_kernels.h"

namespace ember::cpu {
RepackedDotFn repackedKernelAvx2(const RepackedMatrix& m) { return x86RepackedKernel(m); }
}  // namespace ember::cpu

#else
namespace ember::cpu {
RepackedDotFn repackedKernelAvx2(const RepackedMatrix&) { return nullptr; }
}  // namespace ember::cpu
#endif
