#pragma once
// Helpers shared by the CPU backend tests: random weight matrices in any supported GGUF type,
// random activations, and reconstruction of prepared (quantized) activations as floats.
#include <QtTest>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "backend/cpu/matmul.h"
#include "backend/cpu/quant/block_formats.h"
#include "backend/cpu/quant/kernels.h"
#include "gguf/ggml_types.h"

namespace ember::test {

using gguf::GgmlType;

inline const std::vector<GgmlType>& supportedTypes() {
  static const std::vector<GgmlType> types = {GgmlType::F32,  GgmlType::F16,  GgmlType::BF16,
                                              GgmlType::Q4_0, GgmlType::Q4_1, GgmlType::Q5_0,
                                              GgmlType::Q5_1, GgmlType::Q8_0, GgmlType::Q4_K,
                                              GgmlType::Q5_K, GgmlType::Q6_K};
  return types;
}

inline uint32_t blockSizeOf(GgmlType type) {
  return gguf::ggmlTypeTraits(uint32_t(type))->blockSize;
}

inline std::vector<cpu::SimdLevel> supportedLevels() {
  std::vector<cpu::SimdLevel> levels;
  for (cpu::SimdLevel level :
       {cpu::SimdLevel::Scalar, cpu::SimdLevel::Avx2, cpu::SimdLevel::Avx512Vnni})
    if (cpu::simdLevelSupported(level)) levels.push_back(level);
  return levels;
}

// Restores the detected SIMD level when it goes out of scope.
struct SimdLevelGuard {
  explicit SimdLevelGuard(cpu::SimdLevel level) { cpu::setSimdLevelForTesting(level); }
  ~SimdLevelGuard() { cpu::setSimdLevelForTesting(cpu::detectedSimdLevel()); }
};

// A weight matrix with its own storage: random quant bytes (every bit pattern occurs, including
// Q8_0's -128) with finite F16 scales of realistic size; float types get normal values.
struct OwnedMatrix {
  std::vector<uint8_t> bytes;
  cpu::WeightMatrix view;
};

inline void putHalf(uint8_t* p, float v) {
  const uint16_t h = cpu::quant::floatToFp16(v);
  std::memcpy(p, &h, 2);
}

inline OwnedMatrix randomMatrix(GgmlType type, int64_t rows, int64_t cols, uint32_t seed) {
  const auto traits = *gguf::ggmlTypeTraits(uint32_t(type));
  OwnedMatrix m;
  m.view.type = type;
  m.view.rows = rows;
  m.view.cols = cols;
  m.view.rowBytes = size_t(cols / traits.blockSize * traits.typeSize);
  m.bytes.resize(m.view.rowBytes * size_t(rows) + 2);
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::uniform_real_distribution<float> scale(1e-4f, 0.05f), offset(-0.05f, 0.05f);
  uint8_t* data = m.bytes.data();
  const size_t count = size_t(rows * cols);
  if (type == GgmlType::F32) {
    for (size_t i = 0; i < count; ++i) {
      const float v = normal(rng) * 0.1f;
      std::memcpy(data + 4 * i, &v, 4);
    }
  } else if (type == GgmlType::F16 || type == GgmlType::BF16) {
    for (size_t i = 0; i < count; ++i) {
      const float v = normal(rng) * 0.1f;
      const uint16_t h =
          type == GgmlType::F16 ? cpu::quant::floatToFp16(v) : cpu::quant::floatToBf16(v);
      std::memcpy(data + 2 * i, &h, 2);
    }
  } else {
    for (size_t i = 0; i < m.view.rowBytes * size_t(rows); ++i) data[i] = uint8_t(rng());
    const size_t blocks = count / traits.blockSize;
    for (size_t b = 0; b < blocks; ++b) {
      uint8_t* blk = data + b * traits.typeSize;
      switch (type) {
        case GgmlType::Q6_K:
          putHalf(blk + 208, scale(rng));
          break;
        case GgmlType::Q4_1:
        case GgmlType::Q5_1:
        case GgmlType::Q4_K:
        case GgmlType::Q5_K:
          putHalf(blk, scale(rng));
          putHalf(blk + 2, offset(rng));
          break;
        default:
          putHalf(blk, scale(rng) * (rng() % 2 ? 1.0f : -1.0f));
          break;
      }
    }
  }
  m.view.data = data;
  return m;
}

// Activations: normal values with a few outliers, like hidden states.
inline std::vector<float> randomActivations(int64_t count, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> x(static_cast<size_t>(count));
  for (float& v : x) v = normal(rng);
  for (int64_t i = 0; i < count; i += 97) x[size_t(i)] *= 12.0f;
  return x;
}

inline std::vector<double> dequantizedRow(const cpu::WeightMatrix& w, int64_t row) {
  std::vector<float> f(static_cast<size_t>(w.cols));
  cpu::dequantizeRow(w, row, f.data());
  return {f.begin(), f.end()};
}

// The float values a prepared activation row stands for.
inline std::vector<double> reconstructActivations(cpu::quant::ActivationFormat format,
                                                  const uint8_t* row, int64_t cols) {
  using cpu::quant::ActivationFormat;
  std::vector<double> x(static_cast<size_t>(cols));
  if (format == ActivationFormat::Float) {
    const auto* f = reinterpret_cast<const float*>(row);
    for (int64_t i = 0; i < cols; ++i) x[size_t(i)] = f[i];
  } else if (format == ActivationFormat::Q8x32) {
    const auto r = cpu::quant::q8x32Row(row, cols);
    for (int64_t i = 0; i < cols; ++i) x[size_t(i)] = double(r.qs[i]) * r.d[i / 32];
  } else {
    const auto r = cpu::quant::q8xKRow(row, cols);
    for (int64_t i = 0; i < cols; ++i) x[size_t(i)] = double(r.qs[i]) * r.d[i / 256];
  }
  return x;
}

// A 64-byte aligned buffer for prepared activation rows.
struct AlignedBytes {
  explicit AlignedBytes(size_t n) : storage(n + 64) {
    data = storage.data() + (64 - reinterpret_cast<uintptr_t>(storage.data()) % 64) % 64;
  }
  std::vector<uint8_t> storage;
  uint8_t* data;
};

}  // namespace ember::test
