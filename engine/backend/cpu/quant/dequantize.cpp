// Scalar dequantization of every supported weight type (embedding lookup, tests). The float
// operations follow the formulas in block_formats.h in the same order as ggml's reference, so
// results match gguf-py's numpy dequantization bit for bit. This file is compiled for baseline
// x86-64: no FMA contraction can change the rounding.
#include <cstring>

#include "backend/cpu/quant/block_formats.h"
#include "backend/cpu/quant/kernels.h"
#include "ember/error.h"

namespace ember::cpu::quant {

namespace {

void dequantizeQ4_0(const BlockQ4_0* b, int64_t nb, float* out) {
  for (int64_t i = 0; i < nb; ++i, out += 32) {
    const float d = fp16ToFloat(b[i].d);
    for (int j = 0; j < 16; ++j) {
      out[j] = d * float((b[i].qs[j] & 0x0f) - 8);
      out[j + 16] = d * float((b[i].qs[j] >> 4) - 8);
    }
  }
}

void dequantizeMxfp4(const BlockMxfp4* b, int64_t nb, float* out) {
  for (int64_t i = 0; i < nb; ++i, out += 32) {
    const float d = e8m0Half(b[i].e);
    for (int j = 0; j < 16; ++j) {
      out[j] = float(kFp4Values[b[i].qs[j] & 0x0f]) * d;
      out[j + 16] = float(kFp4Values[b[i].qs[j] >> 4]) * d;
    }
  }
}

void dequantizeQ4_1(const BlockQ4_1* b, int64_t nb, float* out) {
  for (int64_t i = 0; i < nb; ++i, out += 32) {
    const float d = fp16ToFloat(b[i].d), m = fp16ToFloat(b[i].m);
    for (int j = 0; j < 16; ++j) {
      out[j] = d * float(b[i].qs[j] & 0x0f) + m;
      out[j + 16] = d * float(b[i].qs[j] >> 4) + m;
    }
  }
}

// Element j of a 5-bit block: its nibble and bit j of qh.
inline int fiveBit(const uint8_t* qs, uint32_t qh, int j) {
  const int nibble = j < 16 ? (qs[j] & 0x0f) : (qs[j - 16] >> 4);
  return nibble | int((qh >> j) & 1u) << 4;
}

void dequantizeQ5_0(const BlockQ5_0* b, int64_t nb, float* out) {
  for (int64_t i = 0; i < nb; ++i, out += 32) {
    const float d = fp16ToFloat(b[i].d);
    const uint32_t qh = loadU32(b[i].qh);
    for (int j = 0; j < 32; ++j) out[j] = d * float(fiveBit(b[i].qs, qh, j) - 16);
  }
}

void dequantizeQ5_1(const BlockQ5_1* b, int64_t nb, float* out) {
  for (int64_t i = 0; i < nb; ++i, out += 32) {
    const float d = fp16ToFloat(b[i].d), m = fp16ToFloat(b[i].m);
    const uint32_t qh = loadU32(b[i].qh);
    for (int j = 0; j < 32; ++j) out[j] = d * float(fiveBit(b[i].qs, qh, j)) + m;
  }
}

void dequantizeQ8_0(const BlockQ8_0* b, int64_t nb, float* out) {
  for (int64_t i = 0; i < nb; ++i, out += 32) {
    const float d = fp16ToFloat(b[i].d);
    for (int j = 0; j < 32; ++j) out[j] = float(b[i].qs[j]) * d;
  }
}

// Q4_K and Q5_K: sub-block s (32 elements) is d * scale[s] * q - dmin * min[s].
template <class Block, bool kFifthBit>
void dequantizeQ45_K(const Block* b, int64_t nb, float* out) {
  for (int64_t i = 0; i < nb; ++i) {
    const float d = fp16ToFloat(b[i].d), dmin = fp16ToFloat(b[i].dmin);
    const ScalesMins sm = unpackScalesMins(b[i].scales);
    for (int chunk = 0; chunk < 4; ++chunk) {
      const uint8_t* qs = b[i].qs + 32 * chunk;
      for (int half = 0; half < 2; ++half, out += 32) {
        const int s = 2 * chunk + half;
        const float scale = d * float(sm.scale[s]);
        const float offset = dmin * float(sm.min[s]);
        for (int l = 0; l < 32; ++l) {
          int q = half ? qs[l] >> 4 : qs[l] & 0x0f;
          if constexpr (kFifthBit) q |= ((b[i].qh[l] >> s) & 1) << 4;
          out[l] = scale * float(q) - offset;
        }
      }
    }
  }
}

void dequantizeQ6_K(const BlockQ6_K* b, int64_t nb, float* out) {
  for (int64_t i = 0; i < nb; ++i) {
    const float d = fp16ToFloat(b[i].d);
    for (int half = 0; half < 2; ++half, out += 128) {
      const uint8_t* ql = b[i].ql + 64 * half;
      const uint8_t* qh = b[i].qh + 32 * half;
      const int8_t* sc = b[i].scales + 8 * half;
      for (int l = 0; l < 32; ++l) {
        const int q[4] = {
            (ql[l] & 0x0f) | ((qh[l] >> 0) & 3) << 4, (ql[l + 32] & 0x0f) | ((qh[l] >> 2) & 3) << 4,
            (ql[l] >> 4) | ((qh[l] >> 4) & 3) << 4, (ql[l + 32] >> 4) | ((qh[l] >> 6) & 3) << 4};
        for (int g = 0; g < 4; ++g) {
          const int element = 32 * g + l;
          out[element] = d * float(sc[element / 16]) * float(q[g] - 32);
        }
      }
    }
  }
}

template <class Block>
const Block* blocksOf(const uint8_t* p) {
  return reinterpret_cast<const Block*>(p);
}

}  // namespace

void dequantizeScalar(gguf::GgmlType type, const uint8_t* p, int64_t count, float* out) {
  using gguf::GgmlType;
  switch (type) {
    case GgmlType::F32:
      std::memcpy(out, p, size_t(count) * 4);
      return;
    case GgmlType::F16:
      for (int64_t i = 0; i < count; ++i) out[i] = fp16ToFloat(loadU16(p + 2 * i));
      return;
    case GgmlType::BF16:
      for (int64_t i = 0; i < count; ++i) out[i] = bf16ToFloat(loadU16(p + 2 * i));
      return;
    case GgmlType::Q4_0:
      return dequantizeQ4_0(blocksOf<BlockQ4_0>(p), count / 32, out);
    case GgmlType::Q4_1:
      return dequantizeQ4_1(blocksOf<BlockQ4_1>(p), count / 32, out);
    case GgmlType::Q5_0:
      return dequantizeQ5_0(blocksOf<BlockQ5_0>(p), count / 32, out);
    case GgmlType::Q5_1:
      return dequantizeQ5_1(blocksOf<BlockQ5_1>(p), count / 32, out);
    case GgmlType::Q8_0:
      return dequantizeQ8_0(blocksOf<BlockQ8_0>(p), count / 32, out);
    case GgmlType::MXFP4:
      return dequantizeMxfp4(blocksOf<BlockMxfp4>(p), count / 32, out);
    case GgmlType::Q4_K:
      return dequantizeQ45_K<BlockQ4_K, false>(blocksOf<BlockQ4_K>(p), count / 256, out);
    case GgmlType::Q5_K:
      return dequantizeQ45_K<BlockQ5_K, true>(blocksOf<BlockQ5_K>(p), count / 256, out);
    case GgmlType::Q6_K:
      return dequantizeQ6_K(blocksOf<BlockQ6_K>(p), count / 256, out);
    default:
      throw Error("dequantize: unsupported tensor type " + std::string(gguf::ggmlTypeName(type)));
  }
}

}  // namespace ember::cpu::quant
