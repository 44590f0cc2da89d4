// The checks before the AMX attention (attention_amx.cpp), compiled for any x86-64 CPU.
#include "backend/cpu/amx_support.h"
#include "backend/cpu/ops/attention_amx.h"

namespace ember::cpu::ops {

bool amxAttentionAvailable() {
#if defined(__x86_64__)
  static const bool available = amxAvailable() && __builtin_cpu_supports("avx512f") &&
                                __builtin_cpu_supports("avx512bw") &&
                                __builtin_cpu_supports("avx512vl") &&
                                __builtin_cpu_supports("avx512bf16");
  return available;
#else
  return false;
#endif
}

bool amxAttentionFits(int32_t headDim, int32_t valueDim) {
  return headDim > 0 && valueDim > 0 && headDim % 32 == 0 && valueDim % 32 == 0 &&
         headDim <= 512 && valueDim <= 512;
}

}  // namespace ember::cpu::ops
