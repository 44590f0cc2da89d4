#include "model/synthetic_quantize.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>

#include "backend/cpu/quant/block_formats.h"
#include "ember/error.h"

namespace ember::model {
namespace {

using cpu::quant::floatToFp16;
constexpr int kBlock = 32;

void quantizeQ4_0Block(const float* x, uint8_t* out) {
  float extreme = 0, magnitude = 0;  // the element of largest magnitude, with its sign
  for (int j = 0; j < kBlock; ++j) {
    if (std::fabs(x[j]) > magnitude) {
      magnitude = std::fabs(x[j]);
      extreme = x[j];
    }
  }
  // d maps the extreme element to q = 0 (value -8 * d), so the other side reaches 7 * |d| only.
  const float d = extreme / -8.0f;
  const float inverse = d != 0 ? 1.0f / d : 0.0f;
  const uint16_t dHalf = floatToFp16(d);
  std::memcpy(out, &dHalf, 2);
  for (int j = 0; j < kBlock / 2; ++j) {
    const auto code = [&](float v) {
      return uint8_t(std::min(15, int(std::floor(v * inverse + 8.5f))));
    };
    out[2 + j] = uint8_t(code(x[j]) | code(x[j + kBlock / 2]) << 4);
  }
}

void quantizeQ8_0Block(const float* x, uint8_t* out) {
  float magnitude = 0;
  for (int j = 0; j < kBlock; ++j) magnitude = std::max(magnitude, std::fabs(x[j]));
  const float d = magnitude / 127.0f;
  const float inverse = d != 0 ? 1.0f / d : 0.0f;
  const uint16_t dHalf = floatToFp16(d);
  std::memcpy(out, &dHalf, 2);
  for (int j = 0; j < kBlock; ++j) out[2 + j] = uint8_t(int8_t(std::lround(x[j] * inverse)));
}

// MXFP4 as gguf-py quantizes it: the shared scale e = floor(log2(max|x|)) - 2 + 127 (0 for an
// all-zero block), each element the nearest of the doubled E2M1 values times 2^(e - 128), the
// first of equally near ones.
void quantizeMxfp4Block(const float* x, uint8_t* out) {
  const int8_t* kValues = cpu::quant::kFp4Values;
  float magnitude = 0;
  for (int j = 0; j < kBlock; ++j) magnitude = std::max(magnitude, std::fabs(x[j]));
  const uint8_t e =
      magnitude > 0 ? uint8_t(int(std::floor(std::log2(magnitude))) - 2 + 127) : uint8_t(0);
  const float half = cpu::quant::e8m0Half(e);
  const auto code = [&](float v) {
    int best = 0;
    for (int k = 1; k < 16; ++k)
      if (std::fabs(half * float(kValues[k]) - v) < std::fabs(half * float(kValues[best]) - v))
        best = k;
    return uint8_t(best);
  };
  out[0] = e;
  for (int j = 0; j < kBlock / 2; ++j)
    out[1 + j] = uint8_t(code(x[j]) | code(x[j + kBlock / 2]) << 4);
}

}  // namespace

uint64_t rowBytes(gguf::GgmlType type, int64_t count) {
  const auto traits = gguf::ggmlTypeTraits(static_cast<uint32_t>(type));
  if (!traits) throw Error("synthetic model: unknown tensor type");
  return uint64_t(count) / traits->blockSize * traits->typeSize;
}

void quantizeRow(gguf::GgmlType type, const float* x, int64_t count, uint8_t* out) {
  using gguf::GgmlType;
  switch (type) {
    case GgmlType::F32:
      std::memcpy(out, x, size_t(count) * sizeof(float));
      return;
    case GgmlType::F16:
      for (int64_t i = 0; i < count; ++i) {
        const uint16_t h = floatToFp16(x[i]);
        std::memcpy(out + 2 * i, &h, 2);
      }
      return;
    case GgmlType::Q4_0:
    case GgmlType::Q8_0:
    case GgmlType::MXFP4: {
      if (count % kBlock != 0)
        throw Error("synthetic model: a row of " + std::to_string(count) +
                    " elements is not a whole number of 32-element blocks");
      const int64_t blockBytes = int64_t(rowBytes(type, kBlock));
      for (int64_t b = 0; b < count / kBlock; ++b) {
        if (type == GgmlType::Q4_0)
          quantizeQ4_0Block(x + b * kBlock, out + b * blockBytes);
        else if (type == GgmlType::Q8_0)
          quantizeQ8_0Block(x + b * kBlock, out + b * blockBytes);
        else
          quantizeMxfp4Block(x + b * kBlock, out + b * blockBytes);
      }
      return;
    }
    default:
      throw Error("synthetic model: cannot write tensors of type " +
                  std::string(gguf::ggmlTypeName(type)) + " (expected q4_0, q8_0, mxfp4, f16 or f32)");
  }
}

}  // namespace ember::model
