#pragma once
// The tile configuration of Intel AMX (Intel SDM, LDTILECFG): a 64-byte record of the palette
// and, per tile, its bytes per row and rows. Palette 1 has eight tiles of up to 16 rows of 64
// bytes. Shared by the AMX kernels (*_amx.cpp); the loads are inline assembly, so including this
// needs no AMX compiler flags.
#include <cstdint>

namespace ember::cpu {

struct alignas(64) TileConfig {
  uint8_t palette = 1;
  uint8_t startRow = 0;
  uint8_t reserved[14] = {};
  uint16_t bytesPerRow[16] = {};
  uint8_t rows[16] = {};
};
static_assert(sizeof(TileConfig) == 64);

// Not _tile_loadconfig / _tile_storeconfig: GCC 12 declares their memory operand as 8 bytes, so
// the compiler may drop the stores of the shapes before a load as dead, or keep stale copies of
// the fields after a store. These operands are the whole record.
inline void loadTileConfig(const TileConfig& config) { asm volatile("ldtilecfg %0" ::"m"(config)); }
inline void storeTileConfig(TileConfig& config) { asm volatile("sttilecfg %0" : "=m"(config)); }

}  // namespace ember::cpu
