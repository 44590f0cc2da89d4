#include "backend/cpu/ops/attention_int8.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>

#include "backend/cpu/matmul.h"
#include "backend/cpu/ops/half.h"

namespace ember::cpu::ops {
namespace {

// What vcvtps2dq then signed saturation to int8 give (NaN and out-of-range floats: INT_MIN).
int8_t roundToInt8(float y) {
  if (!(std::fabs(y) < 2147483648.0f)) return -128;
  return int8_t(std::clamp(int32_t(std::nearbyint(y)), -128, 127));
}

// What vcvtps2dq then a clamp to [0, 255] give, for finite y.
uint8_t roundToUint8(float y) {
  if (!(std::fabs(y) < 2147483648.0f)) return 0;
  return uint8_t(std::clamp(int32_t(std::nearbyint(y)), 0, 255));
}

// x (n) as floats, max |x|, and the factor to int8.
float rowToFloat(const uint16_t* row, int64_t n, float* x) {
  float m = 0.0f;
  for (int64_t e = 0; e < n; ++e) {
    x[e] = halfToFloat(row[e]);
    m = std::max(m, std::fabs(x[e]));
  }
  return m;
}

void quantizeKeysScalar(const uint16_t* const* rows, int64_t count, int64_t n, int8_t* out,
                        float* scales, int32_t* sums) {
  std::vector<float> x(static_cast<size_t>(n));
  for (int64_t i = 0; i < count; ++i) {
    const float m = rowToFloat(rows[i], n, x.data());
    const float inverse = m > 0.0f ? 127.0f / m : 0.0f;
    int32_t sum = 0;
    for (int64_t e = 0; e < n; ++e) {
      const int8_t q = roundToInt8(x[size_t(e)] * inverse);
      out[i * n + e] = q;
      sum += q;
    }
    scales[i] = m / 127.0f;
    sums[i] = sum;
  }
}

void quantizeValuesScalar(const uint16_t* const* rows, int64_t count, int64_t n, int8_t* out,
                          float* scales) {
  std::vector<float> x(static_cast<size_t>(n));
  for (int64_t i = 0; i < count; ++i) {
    const float m = rowToFloat(rows[i], n, x.data());
    const float inverse = m > 0.0f ? 127.0f / m : 0.0f;
    int8_t* group = out + (i / kKeyGroup) * n * kKeyGroup + i % kKeyGroup;
    for (int64_t e = 0; e < n; ++e) group[e * kKeyGroup] = roundToInt8(x[size_t(e)] * inverse);
    scales[i] = m / 127.0f;
  }
}

void quantizeQueriesScalar(const float* const* qs, int lanes, int64_t n, float scale, uint8_t* qt,
                           float* queryScales) {
  for (int lane = 0; lane < kQueryLanes; ++lane) {
    float m = 0.0f;
    if (lane < lanes)
      for (int64_t e = 0; e < n; ++e) m = std::max(m, std::fabs(qs[lane][e]));
    const float inverse = m > 0.0f ? 127.0f / m : 0.0f;
    for (int64_t e = 0; e < n; ++e) {
      const int8_t q8 = lane < lanes ? std::max<int8_t>(roundToInt8(qs[lane][e] * inverse), -127) : 0;
      qt[(e / 4) * 64 + lane * 4 + e % 4] = uint8_t(int32_t(q8) + 128);
    }
    queryScales[lane] = m / 127.0f * scale;
  }
}

void scoreKeysScalar(const uint8_t* qt, const float* queryScales, const int8_t* keys,
                     const float* keyScales, const int32_t* sums, int64_t count, int64_t n,
                     float* scores) {
  for (int64_t i = 0; i < count; ++i)
    for (int lane = 0; lane < kQueryLanes; ++lane) {
      int32_t acc = 0;
      for (int64_t e = 0; e < n; ++e)
        acc += int32_t(qt[(e / 4) * 64 + lane * 4 + e % 4]) * int32_t(keys[i * n + e]);
      scores[i * kQueryLanes + lane] =
          float(acc - 128 * sums[i]) * keyScales[i] * queryScales[lane];
    }
}

void weighKeysScalar(float* scores, const int32_t* first, const int32_t* last,
                     const float* valueScales, int64_t count, uint8_t* weights, float* blockScales,
                     float* sums) {
  for (int lane = 0; lane < kQueryLanes; ++lane) {
    const auto sees = [&](int64_t k) { return first[lane] <= k && k <= last[lane]; };
    float* s = scores + lane;
    float max = -std::numeric_limits<float>::infinity();
    for (int64_t k = 0; k < count; ++k)
      if (sees(k)) max = std::max(max, s[k * kQueryLanes]);
    float sum = 0.0f;
    for (int64_t k = 0; k < count; ++k) {
      const float p = sees(k) ? expNonPositive(s[k * kQueryLanes] - max) : 0.0f;
      sum += p;
      s[k * kQueryLanes] = p * valueScales[k];
    }
    sums[lane] = sum;
    for (int64_t b = 0; b < count / kWeightBlock; ++b) {
      float m = 0.0f;
      for (int64_t k = b * kWeightBlock; k < (b + 1) * kWeightBlock; ++k)
        m = std::max(m, s[k * kQueryLanes]);
      blockScales[b * kQueryLanes + lane] = m / 255.0f;
      const float inverse = 255.0f / m;
      for (int64_t k = b * kWeightBlock; k < (b + 1) * kWeightBlock; ++k)
        weights[(k / 4) * 64 + lane * 4 + k % 4] =
            m > 0.0f ? roundToUint8(s[k * kQueryLanes] * inverse) : 0;
    }
  }
}

void accumulateValuesScalar(const uint8_t* weights, const float* blockScales,
                            const int8_t* values, int64_t count, int64_t n, float* out) {
  for (int64_t d = 0; d < n; ++d)
    for (int lane = 0; lane < kQueryLanes; ++lane) {
      float f = 0.0f;
      for (int64_t b = 0; b < count / kWeightBlock; ++b) {
        int32_t acc = 0;
        for (int64_t k = b * kWeightBlock; k < (b + 1) * kWeightBlock; ++k)
          acc += int32_t(weights[(k / 4) * 64 + lane * 4 + k % 4]) *
                 int32_t(values[(k / 4) * n * 4 + d * 4 + k % 4]);
        f = std::fma(float(acc), blockScales[b * kQueryLanes + lane], f);
      }
      out[d * kQueryLanes + lane] = f;
    }
}

bool cpuHasAvx512Vnni() {
  return simdLevelSupported(SimdLevel::Avx512Vnni) && fastSimdLevel() == SimdLevel::Avx512Vnni;
}

constexpr int64_t align64(int64_t bytes) { return (bytes + 63) / 64 * 64; }

// Hands out consecutive pieces of a buffer, each rounded up to 64 bytes (base nullptr: counts).
struct Carver {
  uint8_t* base;
  int64_t at = 0;
  template <class T>
  T* take(int64_t elements) {
    T* p = base ? reinterpret_cast<T*>(base + at) : nullptr;
    at += align64(elements * int64_t(sizeof(T)));
    return p;
  }
};

// One tile's scratch, per group of 16 queries.
struct TileScratch {
  uint8_t* qt;          // (D / 4, 16, 4)
  float* queryScales;   // (16)
  float* scores;        // (S, 16)
  uint8_t* weights;     // (S / 4, 16, 4)
  float* blockScales;   // (S / 64, 16)
  float* sums;          // (16)
  float* out;           // (V, 16)
  int64_t bytes;

  TileScratch(uint8_t* base, int64_t s, int32_t d, int32_t v) {
    Carver c{base};
    qt = c.take<uint8_t>(int64_t(d) * kQueryLanes);
    queryScales = c.take<float>(kQueryLanes);
    scores = c.take<float>(s * kQueryLanes);
    weights = c.take<uint8_t>(s * kQueryLanes);
    blockScales = c.take<float>(s / kWeightBlock * kQueryLanes);
    sums = c.take<float>(kQueryLanes);
    out = c.take<float>(int64_t(v) * kQueryLanes);
    bytes = c.at;
  }
};

// Positions a tile covers at most: a span widened to whole blocks of 64 on both sides.
int64_t tilePositions(int64_t span) {
  return (span + 2 * kWeightBlock - 2) / kWeightBlock * kWeightBlock;
}

}  // namespace

float expNonPositive(float x) {
  x = std::max(x, -87.0f);
  const float n = std::nearbyint(x * 1.44269504088896341f);
  float r = std::fma(n, -0.693359375f, x);
  r = std::fma(n, 2.12194440e-4f, r);
  float p = 1.9875691500e-4f;
  p = std::fma(p, r, 1.3981999507e-3f);
  p = std::fma(p, r, 8.3334519073e-3f);
  p = std::fma(p, r, 4.1665795894e-2f);
  p = std::fma(p, r, 1.6666665459e-1f);
  p = std::fma(p, r, 5.0000001201e-1f);
  float y = std::fma(p, r * r, r);
  y = y + 1.0f;
  return y * std::bit_cast<float>((int32_t(n) + 127) << 23);
}

const QuantizedAttentionKernels& scalarQuantizedAttentionKernels() {
  static const QuantizedAttentionKernels kernels{quantizeKeysScalar, quantizeValuesScalar,
                                                 quantizeQueriesScalar, scoreKeysScalar, weighKeysScalar,
                                                 accumulateValuesScalar};
  return kernels;
}

const QuantizedAttentionKernels* quantizedAttentionKernels() {
  static const QuantizedAttentionKernels* chosen =
      cpuHasAvx512Vnni() ? &avx512QuantizedAttentionKernels() : nullptr;
  return chosen;
}

std::vector<const QuantizedAttentionKernels*> supportedQuantizedAttentionKernels() {
  std::vector<const QuantizedAttentionKernels*> tables{&scalarQuantizedAttentionKernels()};
  if (simdLevelSupported(SimdLevel::Avx512Vnni))
    tables.push_back(&avx512QuantizedAttentionKernels());
  return tables;
}

int64_t quantizedKvBytes(int32_t count, int32_t headDim, int32_t valueDim) {
  Carver c{nullptr};
  c.take<int8_t>(int64_t(count) * headDim);
  c.take<float>(count);
  c.take<int32_t>(count);
  c.take<int8_t>(int64_t(count) * valueDim);
  c.take<float>(count);
  return c.at;
}

QuantizedKv carveQuantizedKv(uint8_t* buffer, int32_t first, int32_t count, int32_t headDim,
                             int32_t valueDim) {
  Carver c{buffer};
  QuantizedKv rows;
  rows.keys = c.take<int8_t>(int64_t(count) * headDim);
  rows.keyScales = c.take<float>(count);
  rows.keySums = c.take<int32_t>(count);
  rows.values = c.take<int8_t>(int64_t(count) * valueDim);
  rows.valueScales = c.take<float>(count);
  rows.first = first;
  rows.count = count;
  return rows;
}

void fillQuantizedKv(const QuantizedAttentionKernels& kernels, const KvLayerView& kv,
                     std::span<const int32_t> blockTable, int32_t kvHead, int32_t lastValid,
                     const QuantizedKv& rows, int32_t from, int32_t to) {
  constexpr int32_t kChunk = 64;
  const uint16_t* keyRows[kChunk];
  const uint16_t* valueRows[kChunk];
  uint16_t zeros[512] = {};  // a zero row for positions past the sequence (dims up to 512)
  std::vector<uint16_t> wideZeros;
  const uint16_t* zero = zeros;
  if (std::max(kv.headDim, kv.valueDim) > 512) {
    wideZeros.assign(size_t(std::max(kv.headDim, kv.valueDim)), 0);
    zero = wideZeros.data();
  }
  for (int32_t p0 = from; p0 < to; p0 += kChunk) {
    const int32_t n = std::min(kChunk, to - p0);
    for (int32_t i = 0; i < n; ++i) {
      const int32_t p = p0 + i;
      if (p > lastValid) {
        keyRows[i] = valueRows[i] = zero;
        continue;
      }
      const int32_t block = blockTable[size_t(p / kv.blockSize)];
      keyRows[i] = kv.keyAt(block, kvHead, p % kv.blockSize);
      valueRows[i] = kv.valueAt(block, kvHead, p % kv.blockSize);
    }
    const int64_t at = p0 - rows.first;
    kernels.quantizeKeys(keyRows, n, kv.headDim, rows.keys + at * kv.headDim,
                         rows.keyScales + at, rows.keySums + at);
    kernels.quantizeValues(valueRows, n, kv.valueDim, rows.values + at * kv.valueDim,
                           rows.valueScales + at);
  }
}

int64_t quantizedAttentionScratchBytes(int64_t span, int32_t headDim, int32_t valueDim) {
  return TileScratch(nullptr, tilePositions(span), headDim, valueDim).bytes;
}

void attendHeadsQuantized(const QuantizedAttentionKernels& kernels,
                          std::span<const AttentionQuery> queries, const QuantizedKv& rows,
                          int32_t headDim, int32_t valueDim, float scale, uint8_t* scratch) {
  if (queries.empty()) return;
  int32_t minFirst = queries[0].first, maxLast = queries[0].last;
  for (const AttentionQuery& query : queries) {
    minFirst = std::min(minFirst, query.first);
    maxLast = std::max(maxLast, query.last);
  }
  const int32_t d = headDim, v = valueDim;
  const int32_t base = minFirst - minFirst % kWeightBlock;
  const int64_t s = (int64_t(maxLast) + 1 - base + kWeightBlock - 1) / kWeightBlock * kWeightBlock;
  TileScratch t(scratch, s, d, v);
  const int64_t at = base - rows.first;  // the tile's first row in `rows`
  const int8_t* keys = rows.keys + at * d;
  const float* keyScales = rows.keyScales + at;
  const int32_t* keySums = rows.keySums + at;
  const int8_t* values = rows.values + at * v;
  const float* valueScales = rows.valueScales + at;
  for (size_t g0 = 0; g0 < queries.size(); g0 += kQueryLanes) {
    const int lanes = int(std::min<size_t>(kQueryLanes, queries.size() - g0));
    int32_t first[kQueryLanes], last[kQueryLanes];
    const float* qs[kQueryLanes];
    for (int lane = 0; lane < kQueryLanes; ++lane) {
      first[lane] = lane < lanes ? queries[g0 + size_t(lane)].first - base : 1;  // empty: 1 > 0
      last[lane] = lane < lanes ? queries[g0 + size_t(lane)].last - base : 0;
      qs[lane] = lane < lanes ? queries[g0 + size_t(lane)].q : nullptr;
    }
    kernels.quantizeQueries(qs, lanes, d, scale, t.qt, t.queryScales);
    kernels.scoreKeys(t.qt, t.queryScales, keys, keyScales, keySums, s, d, t.scores);
    kernels.weighKeys(t.scores, first, last, valueScales, s, t.weights, t.blockScales, t.sums);
    kernels.accumulateValues(t.weights, t.blockScales, values, s, v, t.out);
    for (int lane = 0; lane < lanes; ++lane) {
      float* out = queries[g0 + size_t(lane)].out;
      for (int32_t e = 0; e < v; ++e) out[e] = t.out[e * kQueryLanes + lane] / t.sums[lane];
    }
  }
}

}  // namespace ember::cpu::ops
