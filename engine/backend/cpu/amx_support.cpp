#include "backend/cpu/amx_support.h"

#include <cstdlib>
#include <cstring>

#if defined(__x86_64__) && defined(__linux__)
#include <cpuid.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

namespace ember::cpu {

namespace {

struct AmxProbe {
  bool available = false;
  const char* reason = "";
};

AmxProbe probeAmx() {
  const char* env = std::getenv("EMBER_CPU_AMX");
  if (env && std::strcmp(env, "0") == 0) return {false, "turned off by EMBER_CPU_AMX=0"};
#if defined(__x86_64__) && defined(__linux__)
  unsigned a = 0, b = 0, c = 0, d = 0;
  if (!__get_cpuid_count(7, 0, &a, &b, &c, &d)) return {false, "no CPUID leaf 7"};
  constexpr unsigned kAmxBf16 = 1u << 22, kAmxTile = 1u << 24, kAmxInt8 = 1u << 25;
  if ((d & (kAmxBf16 | kAmxTile | kAmxInt8)) != (kAmxBf16 | kAmxTile | kAmxInt8))
    return {false, "the CPU has no AMX"};
  constexpr unsigned kOsxsave = 1u << 27;
  if (!__get_cpuid(1, &a, &b, &c, &d) || !(c & kOsxsave)) return {false, "no XSAVE enabled"};
  unsigned lo = 0, hi = 0;
  __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
  constexpr unsigned kTileCfg = 1u << 17, kTileData = 1u << 18;
  if ((lo & (kTileCfg | kTileData)) != (kTileCfg | kTileData))
    return {false, "the OS does not enable the tile state"};
  constexpr long kArchReqXcompPerm = 0x1023, kXfeatureXtiledata = 18;
  if (syscall(SYS_arch_prctl, kArchReqXcompPerm, kXfeatureXtiledata) != 0)
    return {false, "the kernel refused the tile data (arch_prctl)"};
  return {true, ""};
#else
  return {false, "AMX is x86-64 Linux only"};
#endif
}

const AmxProbe& amxProbe() {
  static const AmxProbe probe = probeAmx();
  return probe;
}

}  // namespace

bool amxAvailable() { return amxProbe().available; }

const char* amxUnavailableReason() { return amxProbe().reason; }

}  // namespace ember::cpu
