#pragma once
// Byte layouts of the quantized GGUF weight blocks, written once for every backend's host code
// (the CPU kernels, the CUDA backend's uploads and checks). The layouts are ggml's
// (ggml-common.h); every block starts with 2-byte fields, so a row of blocks only needs 2-byte
// alignment. Device code reads the same bytes through its own loads.
//
//   type  elements bytes  layout
//   Q4_0  32       18     f16 d; u8 qs[16]            x = d * (q - 8)
//   Q4_1  32       20     f16 d, m; u8 qs[16]         x = d * q + m
//   Q5_0  32       22     f16 d; u8 qh[4]; u8 qs[16]  x = d * (q - 16), q = nibble | bit << 4
//   Q5_1  32       24     f16 d, m; u8 qh[4]; qs[16]  x = d * q + m
//   Q8_0  32       34     f16 d; i8 qs[32]            x = d * q
//   Q4_K  256      144    f16 d, dmin; u8 scales[12]; u8 qs[128]
//   Q5_K  256      176    f16 d, dmin; u8 scales[12]; u8 qh[32]; u8 qs[128]
//   Q6_K  256      210    u8 ql[128]; u8 qh[64]; i8 scales[16]; f16 d
//   MXFP4 32       17     u8 e; u8 qs[16]             x = 2^(e - 128) * kFp4Values[q] (gpt-oss)
// In the 32-element 4-bit formats byte j holds element j (low nibble) and j + 16 (high nibble);
// the fifth bit of element j is bit j of qh read as a little-endian uint32.
#include <cstdint>
#include <cstring>

#include "gguf/fp16.h"

namespace ember::gguf {

constexpr int kBlock32 = 32;      // elements per block of Q4_0 .. Q8_0
constexpr int kSuperBlock = 256;  // elements per K-quant super-block

struct BlockQ4_0 {
  uint16_t d;
  uint8_t qs[16];
};
struct BlockQ4_1 {
  uint16_t d, m;
  uint8_t qs[16];
};
struct BlockQ5_0 {
  uint16_t d;
  uint8_t qh[4];
  uint8_t qs[16];
};
struct BlockQ5_1 {
  uint16_t d, m;
  uint8_t qh[4];
  uint8_t qs[16];
};
struct BlockQ8_0 {
  uint16_t d;
  int8_t qs[32];
};
// K-quants: 8 sub-blocks of 32 with 6-bit scales and mins packed into 12 bytes (see
// unpackScalesMins). Element 64*j + l is the low nibble of qs[32*j + l], element 64*j + 32 + l
// the high nibble; Q5_K's fifth bits: element 64*j + l is bit 2j of qh[l], + 32 is bit 2j + 1.
struct BlockQ4_K {
  uint16_t d, dmin;
  uint8_t scales[12];
  uint8_t qs[128];
};
struct BlockQ5_K {
  uint16_t d, dmin;
  uint8_t scales[12];
  uint8_t qh[32];
  uint8_t qs[128];
};
// Q6_K: 16 sub-blocks of 16 with signed 8-bit scales; q = 6 bits - 32. For half h (elements
// 128h ..) with L = ql + 64h, H = qh + 32h and l < 32: element 128h + l is L[l] low | H[l] bits
// 0-1, + 32 is L[l + 32] low | bits 2-3, + 64 is L[l] high | bits 4-5, + 96 is L[l + 32] high |
// bits 6-7 (the two high bits shifted up by 4).
struct BlockQ6_K {
  uint8_t ql[128];
  uint8_t qh[64];
  int8_t scales[16];
  uint16_t d;
};

// MXFP4 (OCP microscaling FP4): a shared power-of-two scale (E8M0) and 16 bytes of 4-bit E2M1
// codes, nibbles placed as in Q4_0. ggml stores the E2M1 values doubled, as integers, and halves
// the scale instead, so the dot products stay integer sums.
struct BlockMxfp4 {
  uint8_t e;
  uint8_t qs[16];
};
// The E2M1 code points, doubled (ggml's kvalues_mxfp4).
inline constexpr int8_t kFp4Values[16] = {0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12};
// 2^(e - 128): half of the block's E8M0 scale 2^(e - 127), as ggml_e8m0_to_fp32_half computes it
// (e < 2 gives the subnormals 2^-128 and 2^-127).
EMBER_FP16_INLINE float e8m0Half(uint8_t e) {
  const uint32_t bits = e < 2 ? uint32_t(0x00200000) << e : uint32_t(e - 1) << 23;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

static_assert(sizeof(BlockMxfp4) == 17);
static_assert(sizeof(BlockQ4_0) == 18 && sizeof(BlockQ4_1) == 20 && sizeof(BlockQ5_0) == 22 &&
              sizeof(BlockQ5_1) == 24 && sizeof(BlockQ8_0) == 34);
static_assert(sizeof(BlockQ4_K) == 144 && sizeof(BlockQ5_K) == 176 && sizeof(BlockQ6_K) == 210);

// The 8 six-bit scales and mins of a Q4_K/Q5_K super-block. Bytes 0-3 hold scales 0-3 (low six
// bits) and the top two bits of scales 4-7; bytes 4-7 the same for mins; bytes 8-11 the low
// four bits of scale 4+i (low nibble) and min 4+i (high nibble).
struct ScalesMins {
  uint8_t scale[8];
  uint8_t min[8];
};
EMBER_FP16_INLINE ScalesMins unpackScalesMins(const uint8_t* packed) {
  uint32_t a, b, c;
  std::memcpy(&a, packed, 4);
  std::memcpy(&b, packed + 4, 4);
  std::memcpy(&c, packed + 8, 4);
  const uint32_t scaleLow = a & 0x3f3f3f3fu;
  const uint32_t minLow = b & 0x3f3f3f3fu;
  const uint32_t scaleHigh = (c & 0x0f0f0f0fu) | ((a >> 2) & 0x30303030u);
  const uint32_t minHigh = ((c >> 4) & 0x0f0f0f0fu) | ((b >> 2) & 0x30303030u);
  ScalesMins out;
  std::memcpy(out.scale, &scaleLow, 4);
  std::memcpy(out.scale + 4, &scaleHigh, 4);
  std::memcpy(out.min, &minLow, 4);
  std::memcpy(out.min + 4, &minHigh, 4);
  return out;
}

}  // namespace ember::gguf
