// Scalar dot products: integer sums per block (exact), scaled and accumulated in float as
// llama.cpp's reference vec_dot does. These define the expected result of the SIMD kernels, up
// to float summation order.
#include "backend/cpu/quant/block_formats.h"
#include "backend/cpu/quant/kernels.h"
#include "backend/cpu/quant/scalar_kernels.h"

namespace ember::cpu::quant {

namespace {

using gguf::GgmlType;

// Weight block -> 32 integer quants (unsigned for the types with a min) and their float terms.
struct Block32 {
  int q[32];
  float d;
  float m;  // Q4_1/Q5_1 only
};

inline void nibbles(const uint8_t* qs, int* q, int offset) {
  for (int j = 0; j < 16; ++j) {
    q[j] = (qs[j] & 0x0f) - offset;
    q[j + 16] = (qs[j] >> 4) - offset;
  }
}
inline void fifthBits(const uint8_t* qh, int* q, int offset) {
  const uint32_t bits = loadU32(qh);
  for (int j = 0; j < 32; ++j) q[j] += int((bits >> j) & 1u) << 4;
  for (int j = 0; j < 32; ++j) q[j] -= offset;
}

template <GgmlType kType>
Block32 decode32(const uint8_t* p) {
  Block32 b{};
  if constexpr (kType == GgmlType::Q4_0) {
    const auto* blk = reinterpret_cast<const BlockQ4_0*>(p);
    b.d = fp16ToFloat(blk->d);
    nibbles(blk->qs, b.q, 8);
  } else if constexpr (kType == GgmlType::Q4_1) {
    const auto* blk = reinterpret_cast<const BlockQ4_1*>(p);
    b.d = fp16ToFloat(blk->d);
    b.m = fp16ToFloat(blk->m);
    nibbles(blk->qs, b.q, 0);
  } else if constexpr (kType == GgmlType::Q5_0) {
    const auto* blk = reinterpret_cast<const BlockQ5_0*>(p);
    b.d = fp16ToFloat(blk->d);
    nibbles(blk->qs, b.q, 0);
    fifthBits(blk->qh, b.q, 16);
  } else if constexpr (kType == GgmlType::Q5_1) {
    const auto* blk = reinterpret_cast<const BlockQ5_1*>(p);
    b.d = fp16ToFloat(blk->d);
    b.m = fp16ToFloat(blk->m);
    nibbles(blk->qs, b.q, 0);
    fifthBits(blk->qh, b.q, 0);
  } else if constexpr (kType == GgmlType::MXFP4) {
    const auto* blk = reinterpret_cast<const BlockMxfp4*>(p);
    b.d = e8m0Half(blk->e);
    for (int j = 0; j < 16; ++j) {
      b.q[j] = kFp4Values[blk->qs[j] & 0x0f];
      b.q[j + 16] = kFp4Values[blk->qs[j] >> 4];
    }
  } else {
    const auto* blk = reinterpret_cast<const BlockQ8_0*>(p);
    b.d = fp16ToFloat(blk->d);
    for (int j = 0; j < 32; ++j) b.q[j] = blk->qs[j];
  }
  return b;
}

template <GgmlType kType>
float dotRow32(const uint8_t* w, const uint8_t* xRow, int64_t cols) {
  constexpr size_t kBytes = kType == GgmlType::Q4_0   ? 18
                            : kType == GgmlType::Q4_1 ? 20
                            : kType == GgmlType::Q5_0 ? 22
                            : kType == GgmlType::Q5_1 ? 24
                            : kType == GgmlType::MXFP4 ? 17
                                                      : 34;
  constexpr bool kHasMin = kType == GgmlType::Q4_1 || kType == GgmlType::Q5_1;
  const Q8x32Row x = q8x32Row(xRow, cols);
  float total = 0.0f;
  for (int64_t b = 0; b < cols / 32; ++b) {
    const Block32 blk = decode32<kType>(w + b * kBytes);
    int32_t sum = 0;
    for (int j = 0; j < 32; ++j) sum += blk.q[j] * x.qs[32 * b + j];
    total += blk.d * x.d[b] * float(sum);
    if constexpr (kHasMin) total += blk.m * x.s[b];
  }
  return total;
}

template <GgmlType kType>
float dotRowK(const uint8_t* w, const uint8_t* xRow, int64_t cols) {
  const Q8xKRow x = q8xKRow(xRow, cols);
  float total = 0.0f;
  for (int64_t b = 0; b < cols / 256; ++b) {
    const int8_t* xq = x.qs + 256 * b;
    const int16_t* bsums = x.bsums + 16 * b;
    if constexpr (kType == GgmlType::Q6_K) {
      const auto* blk = reinterpret_cast<const BlockQ6_K*>(w) + b;
      int32_t sum = 0;
      for (int half = 0; half < 2; ++half) {
        const uint8_t* ql = blk->ql + 64 * half;
        const uint8_t* qh = blk->qh + 32 * half;
        for (int g = 0; g < 4; ++g) {
          for (int sub = 0; sub < 2; ++sub) {  // 16-element groups share a scale
            int32_t part = 0;
            for (int i = 0; i < 16; ++i) {
              const int l = 16 * sub + i;
              const uint8_t low = g & 1 ? ql[l + 32] : ql[l];
              const int q = ((g < 2 ? low & 0x0f : low >> 4) | ((qh[l] >> (2 * g)) & 3) << 4) - 32;
              part += q * xq[128 * half + 32 * g + l];
            }
            sum += part * blk->scales[8 * half + 2 * g + sub];
          }
        }
      }
      total += fp16ToFloat(blk->d) * x.d[b] * float(sum);
    } else {
      const uint8_t* qs;
      const uint8_t* qh = nullptr;
      const uint8_t* packed;
      uint16_t d, dmin;
      if constexpr (kType == GgmlType::Q4_K) {
        const auto* blk = reinterpret_cast<const BlockQ4_K*>(w) + b;
        qs = blk->qs, packed = blk->scales, d = blk->d, dmin = blk->dmin;
      } else {
        const auto* blk = reinterpret_cast<const BlockQ5_K*>(w) + b;
        qs = blk->qs, qh = blk->qh, packed = blk->scales, d = blk->d, dmin = blk->dmin;
      }
      const ScalesMins sm = unpackScalesMins(packed);
      int32_t sum = 0, minSum = 0;
      for (int s = 0; s < 8; ++s) {
        int32_t part = 0;
        for (int l = 0; l < 32; ++l) {
          const uint8_t byte = qs[32 * (s / 2) + l];
          int q = s & 1 ? byte >> 4 : byte & 0x0f;
          if (qh) q |= ((qh[l] >> s) & 1) << 4;
          part += q * xq[32 * s + l];
        }
        sum += part * sm.scale[s];
        minSum += sm.min[s] * (bsums[2 * s] + bsums[2 * s + 1]);
      }
      total += fp16ToFloat(d) * x.d[b] * float(sum) - fp16ToFloat(dmin) * x.d[b] * float(minSum);
    }
  }
  return total;
}

template <GgmlType kType>
float dotRowFloat(const uint8_t* w, const uint8_t* xRow, int64_t cols) {
  const auto* x = reinterpret_cast<const float*>(xRow);
  float total = 0.0f;
  for (int64_t i = 0; i < cols; ++i) {
    float v;
    if constexpr (kType == GgmlType::F32)
      v = reinterpret_cast<const float*>(w)[i];
    else if constexpr (kType == GgmlType::F16)
      v = fp16ToFloat(loadU16(w + 2 * i));
    else
      v = bf16ToFloat(loadU16(w + 2 * i));
    total += v * x[i];
  }
  return total;
}

template <float (*kRowDot)(const uint8_t*, const uint8_t*, int64_t)>
void dotAll(const DotTask& task) {
  for (int64_t t = 0; t < task.tokens; ++t)
    for (int64_t r = 0; r < task.rows; ++r)
      task.y[t * task.yStride + r] =
          kRowDot(task.w + r * task.wStride, task.x + t * task.xStride, task.cols);
}

constexpr TypeKernels kF32{ActivationFormat::Float, prepareF32, dotAll<dotRowFloat<GgmlType::F32>>};
constexpr TypeKernels kF16{ActivationFormat::Float, prepareF16Rounded,
                           dotAll<dotRowFloat<GgmlType::F16>>};
constexpr TypeKernels kBF16{ActivationFormat::Float, prepareBf16Rounded,
                            dotAll<dotRowFloat<GgmlType::BF16>>};
template <GgmlType kType>
constexpr TypeKernels k32{ActivationFormat::Q8x32, prepareQ8x32Scalar, dotAll<dotRow32<kType>>};
template <GgmlType kType>
constexpr TypeKernels kK{ActivationFormat::Q8xK, prepareQ8xKScalar, dotAll<dotRowK<kType>>};

}  // namespace

const TypeKernels* scalarKernels(GgmlType type) {
  switch (type) {
    case GgmlType::F32:
      return &kF32;
    case GgmlType::F16:
      return &kF16;
    case GgmlType::BF16:
      return &kBF16;
    case GgmlType::Q4_0:
      return &k32<GgmlType::Q4_0>;
    case GgmlType::Q4_1:
      return &k32<GgmlType::Q4_1>;
    case GgmlType::Q5_0:
      return &k32<GgmlType::Q5_0>;
    case GgmlType::Q5_1:
      return &k32<GgmlType::Q5_1>;
    case GgmlType::Q8_0:
      return &k32<GgmlType::Q8_0>;
    case GgmlType::MXFP4:  // every SIMD level uses this one
      return &k32<GgmlType::MXFP4>;
    case GgmlType::Q4_K:
      return &kK<GgmlType::Q4_K>;
    case GgmlType::Q5_K:
      return &kK<GgmlType::Q5_K>;
    case GgmlType::Q6_K:
      return &kK<GgmlType::Q6_K>;
    default:
      return nullptr;
  }
}

}  // namespace ember::cpu::quant
