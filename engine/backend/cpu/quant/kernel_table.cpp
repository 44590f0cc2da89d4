// Run-time choice of the kernels: the default level (see defaultSimdLevel), the best level
// the CPU supports (checked once with __builtin_cpu_supports, which also checks that the OS
// saves the vector registers) when asked for, or the level a test forced.
#include <atomic>
#include <cstdlib>
#include <string>
#include <string_view>

#include "backend/cpu/quant/kernels.h"
#include "ember/error.h"

namespace ember::cpu {

namespace {

std::atomic<int> forcedLevel{-1};

SimdLevel probeSimdLevel() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_cpu_init();
  const bool avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") &&
                    __builtin_cpu_supports("f16c");
  const bool avx512 = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                      __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq") &&
                      __builtin_cpu_supports("avx512vnni");
  // A level counts only if its kernels were compiled in (they are on x86-64 with GCC/Clang).
  if (avx2 && avx512 && quant::avx512Kernels(gguf::GgmlType::F32)) return SimdLevel::Avx512Vnni;
  if (avx2 && quant::avx2Kernels(gguf::GgmlType::F32)) return SimdLevel::Avx2;
#endif
  return SimdLevel::Scalar;
}

}  // namespace

const char* simdLevelName(SimdLevel level) {
  switch (level) {
    case SimdLevel::Avx512Vnni:
      return "avx512-vnni";
    case SimdLevel::Avx2:
      return "avx2";
    case SimdLevel::Scalar:
      break;
  }
  return "scalar";
}

const char* simdLevelName() { return simdLevelName(simdLevel()); }

SimdLevel detectedSimdLevel() {
  static const SimdLevel level = probeSimdLevel();
  return level;
}

// The level used unless a test forces one. The AVX2 kernels sum in the same order as
// llama.cpp's x86 kernels, so they reproduce its logits bit for bit on Q4_1/Q8_0/Q6_K models;
// the AVX-512 ones reorder the sums, which these small models turn into different greedy
// answers. So AVX-512 is opt-in (EMBER_SIMD=avx512) until its kernels keep the same order.
SimdLevel defaultSimdLevel() {
  static const SimdLevel level = [] {
    const SimdLevel best = detectedSimdLevel();
    const char* wanted = std::getenv("EMBER_SIMD");
    if (wanted && std::string_view(wanted) == "avx512") return best;
    if (wanted && std::string_view(wanted) == "scalar") return SimdLevel::Scalar;
    return best == SimdLevel::Avx512Vnni ? SimdLevel::Avx2 : best;
  }();
  return level;
}

SimdLevel simdLevel() {
  const int forced = forcedLevel.load(std::memory_order_relaxed);
  return forced >= 0 ? SimdLevel(forced) : defaultSimdLevel();
}

SimdLevel fastSimdLevel() {
  const int forced = forcedLevel.load(std::memory_order_relaxed);
  if (forced >= 0) return SimdLevel(forced);
  static const SimdLevel level = [] {
    const SimdLevel best = detectedSimdLevel();
    const char* wanted = std::getenv("EMBER_SIMD");
    if (wanted && std::string_view(wanted) == "scalar") return SimdLevel::Scalar;
    if (wanted && std::string_view(wanted) == "avx2" && best >= SimdLevel::Avx2)
      return SimdLevel::Avx2;
    return best;
  }();
  return level;
}

bool simdLevelSupported(SimdLevel level) { return int(level) <= int(detectedSimdLevel()); }

void setSimdLevelForTesting(SimdLevel level) {
  if (!simdLevelSupported(level))
    throw Error(std::string("SIMD level ") + simdLevelName(level) +
                " is not supported by this CPU");
  forcedLevel.store(int(level), std::memory_order_relaxed);
}

namespace quant {

const TypeKernels* kernelsFor(gguf::GgmlType type, SimdLevel level) {
  if (!simdLevelSupported(level)) return nullptr;
  if (level == SimdLevel::Avx512Vnni)
    if (const TypeKernels* k = avx512Kernels(type)) return k;
  if (level >= SimdLevel::Avx2)
    if (const TypeKernels* k = avx2Kernels(type)) return k;
  return scalarKernels(type);
}

}  // namespace quant
}  // namespace ember::cpu
