#pragma once
// Intel AMX (the tile registers and their int8 / bf16 dot-product units, Sapphire Rapids and
// later) for the fast kernels. Linux hands a process the tile state only after it asks for it
// (arch_prctl ARCH_REQ_XCOMP_PERM); a tile instruction before that dies with SIGILL, so every
// AMX kernel runs only after amxAvailable() said yes. Kernels for AMX live in files named
// *_amx.cpp (compiled with -mamx-tile -mamx-int8 -mamx-bf16 and AVX-512 BF16); each thread loads
// its own tile configuration (_tile_loadconfig) before its first tile instruction.

namespace ember::cpu {

// Whether the CPU has AMX-TILE, AMX-INT8 and AMX-BF16, the OS enables their state (XCR0 bits 17
// and 18), the kernel granted this process the tile data, and EMBER_CPU_AMX is not "0". Checked
// once; the permission request is made at most once per process.
bool amxAvailable();

// Why AMX is not used ("" when it is): for the backend's description and the tests' skips.
const char* amxUnavailableReason();

}  // namespace ember::cpu
