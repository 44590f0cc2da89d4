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

int64_t amxKvBytes(int32_t count, int32_t headDim, int32_t valueDim) {
  return int64_t(count) * (headDim + valueDim) * 2 * int64_t(sizeof(uint16_t)) + count / 32;
}

AmxKv carveAmxKv(uint8_t* bytes, int32_t first, int32_t count, int32_t headDim,
                 int32_t valueDim) {
  AmxKv rows;
  rows.first = first;
  rows.count = count;
  auto* halves = reinterpret_cast<uint16_t*>(bytes);  // callers pass 2-byte aligned storage
  rows.keyHi = halves;
  rows.keyLo = rows.keyHi + int64_t(count) * headDim;
  rows.valueHi = rows.keyLo + int64_t(count) * headDim;
  rows.valueLo = rows.valueHi + int64_t(count) * valueDim;
  rows.nonFinite = reinterpret_cast<uint8_t*>(rows.valueLo + int64_t(count) * valueDim);
  return rows;
}

}  // namespace ember::cpu::ops
