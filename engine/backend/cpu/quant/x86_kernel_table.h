#pragma once
// The kernel table of one x86 build (AVX2 or AVX-512): the tiles of x86_dot_tiles.h and
// x86_dot_kquants.h wrapped as DotFn, with T tokens per tile. Included once per build; the
// AVX-512 build defines EMBER_X86_BLOCK_PAIRS to run the 32-element types two blocks per vector.
#include "backend/cpu/quant/scalar_kernels.h"
#include "backend/cpu/quant/x86_dot_kquants.h"
#include "backend/cpu/quant/x86_dot_q4k_llama_order.h"
#include "backend/cpu/quant/x86_dot_tiles.h"
#include "backend/cpu/quant/x86_quantize.h"
#if defined(EMBER_X86_BLOCK_PAIRS)
#include "backend/cpu/quant/x86_dot_pairs_avx512.h"
#define EMBER_TILE32 tile32Pairs
#else
#define EMBER_TILE32 tile32
#endif

namespace ember::cpu::quant {
namespace {

constexpr int kTileRows = 4;  // weight rows sharing each activation load

template <GgmlType kType, int T>
void dot32(const DotTask& k) {
  runTiles<EMBER_TILE32<kType, kTileRows, T>, EMBER_TILE32<kType, kTileRows, 1>,
           EMBER_TILE32<kType, 1, T>, EMBER_TILE32<kType, 1, 1>, kTileRows, T>(k);
}
template <GgmlType kType, int T>
void dotFloat(const DotTask& k) {
  runTiles<tileFloat<kType, kTileRows, T>, tileFloat<kType, kTileRows, 1>, tileFloat<kType, 1, T>,
           tileFloat<kType, 1, 1>, kTileRows, T>(k);
}
template <GgmlType kType, int T>
void dotQ45K(const DotTask& k) {
  runTiles<tileQ45K<kType, kTileRows, T>, tileQ45K<kType, kTileRows, 1>, tileQ45K<kType, 1, T>,
           tileQ45K<kType, 1, 1>, kTileRows, T>(k);
}
template <int T>
void dotQ6K(const DotTask& k) {
  runTiles<tileQ6K<kTileRows, T>, tileQ6K<kTileRows, 1>, tileQ6K<1, T>, tileQ6K<1, 1>, kTileRows,
           T>(k);
}

template <int T>
void dotQ6KTiledOrder(const DotTask& k) {
  runTiles<tileQ6K<kTileRows, T, true>, tileQ6K<kTileRows, 1, true>, tileQ6K<1, T, true>,
           tileQ6K<1, 1, true>, kTileRows, T>(k);
}
template <int kChunks, int T>
void dotQ4KLlamaOrder(const DotTask& k) {
  runTiles<tileQ4KLlamaOrder<kChunks, kTileRows, T>, tileQ4KLlamaOrder<kChunks, kTileRows, 1>,
           tileQ4KLlamaOrder<kChunks, 1, T>, tileQ4KLlamaOrder<kChunks, 1, 1>, kTileRows, T>(k);
}

template <int T>
const TypeKernels* x86Kernels(GgmlType type) {
  static constexpr TypeKernels kF32{ActivationFormat::Float, prepareF32,
                                    dotFloat<GgmlType::F32, T>};
  static constexpr TypeKernels kF16{ActivationFormat::Float, prepareF16RoundedSimd,
                                    dotFloat<GgmlType::F16, T>};
  static constexpr TypeKernels kBF16{ActivationFormat::Float, prepareBf16Rounded,
                                     dotFloat<GgmlType::BF16, T>};
  static constexpr TypeKernels kQ4_0{ActivationFormat::Q8x32, prepareQ8x32Simd,
                                     dot32<GgmlType::Q4_0, T>};
  static constexpr TypeKernels kQ4_1{ActivationFormat::Q8x32, prepareQ8x32Simd,
                                     dot32<GgmlType::Q4_1, T>};
  static constexpr TypeKernels kQ5_0{ActivationFormat::Q8x32, prepareQ8x32Simd,
                                     dot32<GgmlType::Q5_0, T>};
  static constexpr TypeKernels kQ5_1{ActivationFormat::Q8x32, prepareQ8x32Simd,
                                     dot32<GgmlType::Q5_1, T>};
  static constexpr TypeKernels kQ8_0{ActivationFormat::Q8x32, prepareQ8x32Simd,
                                     dot32<GgmlType::Q8_0, T>};
  static constexpr TypeKernels kQ4_K{ActivationFormat::Q8xK, prepareQ8xKSimd,
                                     dotQ45K<GgmlType::Q4_K, T>, dotQ4KLlamaOrder<4, T>,
                                     dotQ4KLlamaOrder<1, T>};
  static constexpr TypeKernels kQ5_K{ActivationFormat::Q8xK, prepareQ8xKSimd,
                                     dotQ45K<GgmlType::Q5_K, T>};
  static constexpr TypeKernels kQ6_K{
      ActivationFormat::Q8xK, prepareQ8xKSimd, dotQ6K<T>, nullptr, nullptr, dotQ6KTiledOrder<T>};
  switch (type) {
    case GgmlType::F32:
      return &kF32;
    case GgmlType::F16:
      return &kF16;
    case GgmlType::BF16:
      return &kBF16;
    case GgmlType::Q4_0:
      return &kQ4_0;
    case GgmlType::Q4_1:
      return &kQ4_1;
    case GgmlType::Q5_0:
      return &kQ5_0;
    case GgmlType::Q5_1:
      return &kQ5_1;
    case GgmlType::Q8_0:
      return &kQ8_0;
    case GgmlType::Q4_K:
      return &kQ4_K;
    case GgmlType::Q5_K:
      return &kQ5_K;
    case GgmlType::Q6_K:
      return &kQ6_K;
    default:
      return nullptr;
  }
}

}  // namespace
}  // namespace ember::cpu::quant
