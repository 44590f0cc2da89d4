#pragma once
// Device-side GGUF weight formats. The byte layouts are ggml's (see the CPU backend's
// engine/gguf/quant_blocks.h for the table); here each format is read in "units":
// the kUnitElems consecutive elements of a row one thread decodes at once (a whole 32-block for
// the legacy formats, a pair of sub-blocks for Q4_K/Q5_K, a 128-element half for Q6_K, 8 values
// for the float formats). A unit is decoded 8 elements ("group") at a time into
//   value_k = scale * q_k (+ offset, when kHasOffset)
// where q_k are exact small integers held as floats (or the weights themselves for F16/BF16/F32).
//
// Loads: quantized rows are only 2-byte aligned (18-, 22-, 34-, 210-byte blocks), so byte runs are
// read as aligned 32-bit words and funnel-shifted into place; a load never touches an aligned
// word that holds none of the wanted bytes. F16/BF16/F32 units are read with 16-byte loads (the
// launchers require 16-byte aligned weights and cols % 8 == 0 for them).
//
// Bit-exactness: dequantizeGroup() performs the same float operations, in the same order, as the
// CPU's dequantize.cpp (explicit __fmul_rn/__fadd_rn so nvcc cannot contract them into an FMA).
#include <cstdint>

#include <cuda_fp16.h>

#include "ember/kernels/kernels.h"

namespace ember::kernels::quant {

__device__ __forceinline__ float halfBitsToFloat(uint16_t bits) {
  return __half2float(__ushort_as_half(bits));
}
__device__ __forceinline__ float bf16BitsToFloat(uint32_t bits) {
  return __uint_as_float(bits << 16);
}
__device__ __forceinline__ uint16_t loadU16(const uint8_t* p) {
  return __ldg(reinterpret_cast<const unsigned short*>(p));
}

// float(q) - bias for 0 <= q < 2^23 and an integer bias < 2^23, exactly, with one integer OR and
// one float subtraction (no int->float conversion instruction): 0x4B000000 | q is 2^23 + q.
template <int kBias>
__device__ __forceinline__ float smallUintToFloat(uint32_t q) {
  return __uint_as_float(0x4B000000u | q) - (8388608.f + float(kBias));
}

// out = kBytes bytes starting at p (any alignment), little-endian words; the high bytes of the
// last word past kBytes are unspecified. Reads the aligned words that hold at least one wanted
// byte, and only those.
template <int kBytes, int kWords = (kBytes + 3) / 4>
__device__ __forceinline__ void loadBytes(const uint8_t* p, uint32_t (&out)[kWords]) {
  const uintptr_t address = reinterpret_cast<uintptr_t>(p);
  const uint32_t* base = reinterpret_cast<const uint32_t*>(address & ~uintptr_t(3));
  const int misalignment = int(address & 3);
  uint32_t raw[kWords + 1];
#pragma unroll
  for (int i = 0; i < kWords; ++i) raw[i] = __ldg(base + i);
  raw[kWords] = misalignment + kBytes > 4 * kWords ? __ldg(base + kWords) : 0u;
#pragma unroll
  for (int i = 0; i < kWords; ++i)
    out[i] = __funnelshift_r(raw[i], raw[i + 1], uint32_t(misalignment) * 8u);
}

// Byte i of a little-endian word array (i known after unrolling).
__device__ __forceinline__ uint32_t byteOf(const uint32_t* words, int i) {
  return (words[i >> 2] >> (8 * (i & 3))) & 0xffu;
}

// ---- 32-element formats (one unit = one block) ----

struct FormatQ4_0 {  // f16 d; u8 qs[16]          x = d * (q - 8)
  static constexpr int kBlockElems = 32, kBlockBytes = 18, kUnitElems = 32;
  static constexpr bool kHasOffset = false, kScaled = true;
  struct Unit { float d; uint32_t qs[4]; };
  __device__ static Unit load(const uint8_t* row, int64_t unit) {
    const uint8_t* block = row + unit * kBlockBytes;
    Unit u;
    u.d = halfBitsToFloat(loadU16(block));
    loadBytes<16>(block + 2, u.qs);
    return u;
  }
  // Elements 8g .. 8g+7: g < 2 low nibbles of bytes 8g.., g >= 2 high nibbles of bytes 8(g-2)..
  __device__ static void group(const Unit& u, int g, float (&q)[8], float& scale, float& offset) {
#pragma unroll
    for (int k = 0; k < 8; ++k)
      q[k] = smallUintToFloat<8>((byteOf(u.qs, 8 * (g & 1) + k) >> (4 * (g >> 1))) & 0xfu);
    scale = u.d;
    offset = 0.f;
  }
};

struct FormatQ4_1 {  // f16 d, m; u8 qs[16]       x = d * q + m
  static constexpr int kBlockElems = 32, kBlockBytes = 20, kUnitElems = 32;
  static constexpr bool kHasOffset = true, kScaled = true;
  struct Unit { float d, m; uint32_t qs[4]; };
  __device__ static Unit load(const uint8_t* row, int64_t unit) {
    const uint8_t* block = row + unit * kBlockBytes;
    Unit u;
    u.d = halfBitsToFloat(loadU16(block));
    u.m = halfBitsToFloat(loadU16(block + 2));
    loadBytes<16>(block + 4, u.qs);
    return u;
  }
  __device__ static void group(const Unit& u, int g, float (&q)[8], float& scale, float& offset) {
#pragma unroll
    for (int k = 0; k < 8; ++k)
      q[k] = smallUintToFloat<0>((byteOf(u.qs, 8 * (g & 1) + k) >> (4 * (g >> 1))) & 0xfu);
    scale = u.d;
    offset = u.m;
  }
};

// Element e of a 5-bit block: its nibble and bit e of qh (little-endian uint32).
__device__ __forceinline__ uint32_t fiveBitQuant(const uint32_t* qs, uint32_t qh, int e) {
  const uint32_t nibble = (byteOf(qs, e & 15) >> (4 * (e >> 4))) & 0xfu;
  return nibble | ((qh >> e) & 1u) << 4;
}

struct FormatQ5_0 {  // f16 d; u8 qh[4]; u8 qs[16]     x = d * (q - 16)
  static constexpr int kBlockElems = 32, kBlockBytes = 22, kUnitElems = 32;
  static constexpr bool kHasOffset = false, kScaled = true;
  struct Unit { float d; uint32_t qh; uint32_t qs[4]; };
  __device__ static Unit load(const uint8_t* row, int64_t unit) {
    const uint8_t* block = row + unit * kBlockBytes;
    Unit u;
    u.d = halfBitsToFloat(loadU16(block));
    uint32_t qh[1];
    loadBytes<4>(block + 2, qh);
    u.qh = qh[0];
    loadBytes<16>(block + 6, u.qs);
    return u;
  }
  __device__ static void group(const Unit& u, int g, float (&q)[8], float& scale, float& offset) {
#pragma unroll
    for (int k = 0; k < 8; ++k) q[k] = smallUintToFloat<16>(fiveBitQuant(u.qs, u.qh, 8 * g + k));
    scale = u.d;
    offset = 0.f;
  }
};

struct FormatQ5_1 {  // f16 d, m; u8 qh[4]; u8 qs[16]  x = d * q + m
  static constexpr int kBlockElems = 32, kBlockBytes = 24, kUnitElems = 32;
  static constexpr bool kHasOffset = true, kScaled = true;
  struct Unit { float d, m; uint32_t qh; uint32_t qs[4]; };
  __device__ static Unit load(const uint8_t* row, int64_t unit) {
    const uint8_t* block = row + unit * kBlockBytes;
    Unit u;
    u.d = halfBitsToFloat(loadU16(block));
    u.m = halfBitsToFloat(loadU16(block + 2));
    uint32_t qh[1];
    loadBytes<4>(block + 4, qh);
    u.qh = qh[0];
    loadBytes<16>(block + 8, u.qs);
    return u;
  }
  __device__ static void group(const Unit& u, int g, float (&q)[8], float& scale, float& offset) {
#pragma unroll
    for (int k = 0; k < 8; ++k) q[k] = smallUintToFloat<0>(fiveBitQuant(u.qs, u.qh, 8 * g + k));
    scale = u.d;
    offset = u.m;
  }
};

struct FormatQ8_0 {  // f16 d; i8 qs[32]           x = q * d
  static constexpr int kBlockElems = 32, kBlockBytes = 34, kUnitElems = 32;
  static constexpr bool kHasOffset = false, kScaled = true;
  struct Unit { float d; uint32_t qs[8]; };
  __device__ static Unit load(const uint8_t* row, int64_t unit) {
    const uint8_t* block = row + unit * kBlockBytes;
    Unit u;
    u.d = halfBitsToFloat(loadU16(block));
    loadBytes<32>(block + 2, u.qs);
    return u;
  }
  // A signed byte b is (b ^ 0x80) - 128 read as unsigned.
  __device__ static void group(const Unit& u, int g, float (&q)[8], float& scale, float& offset) {
#pragma unroll
    for (int k = 0; k < 8; ++k) q[k] = smallUintToFloat<128>(byteOf(u.qs, 8 * g + k) ^ 0x80u);
    scale = u.d;
    offset = 0.f;
  }
};

// MXFP4 (gpt-oss's experts): u8 e; u8 qs[16], nibbles placed as in Q4_0;
// x = 2^(e - 128) * v[q] with v ggml's doubled E2M1 values {0, 1, 2, 3, 4, 6, 8, 12} and their
// negatives for q >= 8 (the CPU's kFp4Values and e8m0Half). Rows of 17-byte blocks need not be
// even 2-byte aligned: every byte run goes through loadBytes.
struct FormatMxfp4 {
  static constexpr int kBlockElems = 32, kBlockBytes = 17, kUnitElems = 32;
  static constexpr bool kHasOffset = false, kScaled = true;
  struct Unit { float d; uint32_t qs[4]; };
  __device__ static Unit load(const uint8_t* row, int64_t unit) {
    const uint8_t* block = row + unit * kBlockBytes;
    Unit u;
    uint32_t e[1];
    loadBytes<1>(block, e);
    const uint32_t exponent = e[0] & 0xffu;
    // 2^(e - 128); e < 2 gives the subnormals 2^-128 and 2^-127 (ggml_e8m0_to_fp32_half).
    u.d = __uint_as_float(exponent < 2 ? 0x00200000u << exponent : (exponent - 1) << 23);
    loadBytes<16>(block + 1, u.qs);
    return u;
  }
  // The doubled E2M1 value of a 4-bit code: magnitudes 0, 1, 2, 3, then 4, 6, 8, 12.
  __device__ static float fp4Value(uint32_t code) {
    const uint32_t m = code & 7u;
    const uint32_t magnitude = m < 4 ? m : (4u + 2u * (m & 1u)) << ((m >> 1) & 1u);
    const float v = float(magnitude);
    return code & 8u ? -v : v;
  }
  __device__ static void group(const Unit& u, int g, float (&q)[8], float& scale, float& offset) {
#pragma unroll
    for (int k = 0; k < 8; ++k)
      q[k] = fp4Value((byteOf(u.qs, 8 * (g & 1) + k) >> (4 * (g >> 1))) & 0xfu);
    scale = u.d;
    offset = 0.f;
  }
};

// ---- K-quants (256-element super-blocks) ----

// The six-bit scale and min of sub-block s (0..7) from the 12 packed bytes (as 3 words a, b, c):
// s < 4: low six bits of byte s of a (scale) and b (min); s >= 4: the low (scale) or high (min)
// nibble of byte s-4 of c, with the top two bits of byte s-4 of a (scale) or b (min) above it.
__device__ __forceinline__ void kQuantScaleMin(const uint32_t (&packed)[3], int s, uint32_t& scale,
                                               uint32_t& min) {
  if (s < 4) {
    scale = (packed[0] >> (8 * s)) & 63u;
    min = (packed[1] >> (8 * s)) & 63u;
  } else {
    const int j = 8 * (s - 4);
    scale = ((packed[2] >> j) & 0xfu) | ((packed[0] >> (j + 6)) & 3u) << 4;
    min = ((packed[2] >> (j + 4)) & 0xfu) | ((packed[1] >> (j + 6)) & 3u) << 4;
  }
}

// Q4_K / Q5_K: a unit is chunk c (elements 64c .. 64c+63) of a super-block: sub-blocks 2c (low
// nibbles of qs[32c + l]) and 2c+1 (high nibbles); x = d*scale[s] * q - dmin*min[s].
template <bool kFifthBit>
struct FormatQ45_K {
  static constexpr int kBlockElems = 256, kBlockBytes = kFifthBit ? 176 : 144, kUnitElems = 64;
  static constexpr int kQsOffset = kFifthBit ? 48 : 16;
  static constexpr bool kHasOffset = true, kScaled = true;
  struct Unit {
    float scale[2], offset[2];  // for sub-blocks 2c and 2c+1; offset = -(dmin * min)
    uint32_t qs[8];
    uint32_t qh[8];             // Q5_K only: the 32 bytes of fifth bits
    int sub;                    // 2c: the first sub-block's index (its bit in qh)
  };
  __device__ static Unit load(const uint8_t* row, int64_t unit) {
    const uint8_t* block = row + (unit >> 2) * kBlockBytes;
    const int chunk = int(unit & 3);
    Unit u;
    const float d = halfBitsToFloat(loadU16(block));
    const float dmin = halfBitsToFloat(loadU16(block + 2));
    uint32_t packed[3];
    loadBytes<12>(block + 4, packed);
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      uint32_t scale, min;
      kQuantScaleMin(packed, 2 * chunk + h, scale, min);
      u.scale[h] = __fmul_rn(d, float(scale));
      u.offset[h] = -__fmul_rn(dmin, float(min));
    }
    loadBytes<32>(block + kQsOffset + 32 * chunk, u.qs);
    if constexpr (kFifthBit) loadBytes<32>(block + 16, u.qh);
    u.sub = 2 * chunk;
    return u;
  }
  __device__ static void group(const Unit& u, int g, float (&q)[8], float& scale, float& offset) {
    const int h = g >> 2;  // which sub-block of the pair
    const int l0 = 8 * (g & 3);
#pragma unroll
    for (int k = 0; k < 8; ++k) {
      uint32_t v = (byteOf(u.qs, l0 + k) >> (4 * h)) & 0xfu;
      if constexpr (kFifthBit) v |= ((byteOf(u.qh, l0 + k) >> (u.sub + h)) & 1u) << 4;
      q[k] = smallUintToFloat<0>(v);
    }
    scale = u.scale[h];
    offset = u.offset[h];
  }
};
using FormatQ4_K = FormatQ45_K<false>;
using FormatQ5_K = FormatQ45_K<true>;

// Q6_K: a unit is half h (elements 128h ..) of a super-block: L = ql + 64h, H = qh + 32h,
// S = scales + 8h. Element 32j + l (j < 4, l < 32) is nibble (j >> 1) of L[l + 32 (j & 1)] with
// bits 2j, 2j+1 of H[l] above it, minus 32, times d * S[2j + l / 16].
struct FormatQ6_K {
  static constexpr int kBlockElems = 256, kBlockBytes = 210, kUnitElems = 128;
  static constexpr bool kHasOffset = false, kScaled = true;
  struct Unit {
    float scale[8];
    uint32_t ql[16];
    uint32_t qh[8];
  };
  __device__ static Unit load(const uint8_t* row, int64_t unit) {
    const uint8_t* block = row + (unit >> 1) * kBlockBytes;
    const int h = int(unit & 1);
    Unit u;
    loadBytes<64>(block + 64 * h, u.ql);
    loadBytes<32>(block + 128 + 32 * h, u.qh);
    uint32_t scales[2];
    loadBytes<8>(block + 192 + 8 * h, scales);
    const float d = halfBitsToFloat(loadU16(block + 208));
#pragma unroll
    for (int i = 0; i < 8; ++i)
      u.scale[i] = __fmul_rn(d, float(int8_t(byteOf(scales, i))));
    return u;
  }
  // Group g (elements 8g ..): j = g >> 2, l = 8 (g & 3) + k.
  __device__ static void group(const Unit& u, int g, float (&q)[8], float& scale, float& offset) {
    const int j = g >> 2;
    const int l0 = 8 * (g & 3);
#pragma unroll
    for (int k = 0; k < 8; ++k) {
      const uint32_t low = (byteOf(u.ql, l0 + k + 32 * (j & 1)) >> (4 * (j >> 1))) & 0xfu;
      const uint32_t high = (byteOf(u.qh, l0 + k) >> (2 * j)) & 3u;
      q[k] = smallUintToFloat<32>(low | high << 4);
    }
    scale = u.scale[2 * j + (l0 >> 4)];
    offset = 0.f;
  }
};

// ---- float formats: a unit is 8 values read with 16-byte loads ----

struct FormatF16 {
  static constexpr int kBlockElems = 1, kBlockBytes = 2, kUnitElems = 8;
  static constexpr bool kHasOffset = false, kScaled = false;
  struct Unit { uint4 bits; };
  __device__ static Unit load(const uint8_t* row, int64_t unit) {
    return {__ldg(reinterpret_cast<const uint4*>(row) + unit)};
  }
  __device__ static void group(const Unit& u, int, float (&q)[8], float& scale, float& offset) {
    const uint32_t words[4] = {u.bits.x, u.bits.y, u.bits.z, u.bits.w};
#pragma unroll
    for (int k = 0; k < 8; ++k)
      q[k] = halfBitsToFloat(uint16_t(words[k >> 1] >> (16 * (k & 1))));
    scale = 1.f;
    offset = 0.f;
  }
};

struct FormatBF16 {
  static constexpr int kBlockElems = 1, kBlockBytes = 2, kUnitElems = 8;
  static constexpr bool kHasOffset = false, kScaled = false;
  struct Unit { uint4 bits; };
  __device__ static Unit load(const uint8_t* row, int64_t unit) {
    return {__ldg(reinterpret_cast<const uint4*>(row) + unit)};
  }
  __device__ static void group(const Unit& u, int, float (&q)[8], float& scale, float& offset) {
    const uint32_t words[4] = {u.bits.x, u.bits.y, u.bits.z, u.bits.w};
#pragma unroll
    for (int k = 0; k < 8; ++k) q[k] = bf16BitsToFloat((words[k >> 1] >> (16 * (k & 1))) & 0xffffu);
    scale = 1.f;
    offset = 0.f;
  }
};

struct FormatF32 {
  static constexpr int kBlockElems = 1, kBlockBytes = 4, kUnitElems = 8;
  static constexpr bool kHasOffset = false, kScaled = false;
  struct Unit { float4 a, b; };
  __device__ static Unit load(const uint8_t* row, int64_t unit) {
    const float4* p = reinterpret_cast<const float4*>(row) + 2 * unit;
    return {__ldg(p), __ldg(p + 1)};
  }
  __device__ static void group(const Unit& u, int, float (&q)[8], float& scale, float& offset) {
    q[0] = u.a.x; q[1] = u.a.y; q[2] = u.a.z; q[3] = u.a.w;
    q[4] = u.b.x; q[5] = u.b.y; q[6] = u.b.z; q[7] = u.b.w;
    scale = 1.f;
    offset = 0.f;
  }
};

// The 8 dequantized values of group g, bit-identical to the CPU's dequantize.cpp.
template <class Format>
__device__ __forceinline__ void dequantizeGroup(const typename Format::Unit& unit, int g,
                                                float (&values)[8]) {
  float q[8], scale, offset;
  Format::group(unit, g, q, scale, offset);
#pragma unroll
  for (int k = 0; k < 8; ++k) {
    float v = Format::kScaled ? __fmul_rn(scale, q[k]) : q[k];
    if constexpr (Format::kHasOffset) v = __fadd_rn(v, offset);
    values[k] = v;
  }
}

// Host side: the multiple `cols` must be of for these kernels (the block size, and 8 for the
// float formats, whose units are 8 values); 0 for a type they do not read.
constexpr int32_t requiredColumnMultiple(WeightType type) {
  switch (type) {
    case WeightType::F32: case WeightType::F16: case WeightType::BF16: return 8;
    case WeightType::Q4_0: case WeightType::Q4_1: case WeightType::Q5_0: case WeightType::Q5_1:
    case WeightType::Q8_0: case WeightType::MXFP4: return 32;
    case WeightType::Q4_K: case WeightType::Q5_K: case WeightType::Q6_K: return 256;
  }
  return 0;
}

// Calls visit(Format{}) with the format struct of `type`; cudaErrorInvalidValue if unsupported.
template <class Visitor>
cudaError_t visitFormat(WeightType type, Visitor&& visit) {
  switch (type) {
    case WeightType::F32: return visit(FormatF32{});
    case WeightType::F16: return visit(FormatF16{});
    case WeightType::BF16: return visit(FormatBF16{});
    case WeightType::Q4_0: return visit(FormatQ4_0{});
    case WeightType::Q4_1: return visit(FormatQ4_1{});
    case WeightType::Q5_0: return visit(FormatQ5_0{});
    case WeightType::Q5_1: return visit(FormatQ5_1{});
    case WeightType::Q8_0: return visit(FormatQ8_0{});
    case WeightType::MXFP4: return visit(FormatMxfp4{});
    case WeightType::Q4_K: return visit(FormatQ4_K{});
    case WeightType::Q5_K: return visit(FormatQ5_K{});
    case WeightType::Q6_K: return visit(FormatQ6_K{});
  }
  return cudaErrorInvalidValue;
}

inline bool isAligned16(const void* p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; }

}  // namespace ember::kernels::quant
