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
      const float c = m / 255.0f;
      blockScales[b * kQueryLanes + lane] = c;
      for (int64_t k = b * kWeightBlock; k < (b + 1) * kWeightBlock; ++k)
        weights[(k / 4) * 64 + lane * 4 + k % 4] =
            c > 0.0f ? roundToUint8(s[k * kQueryLanes] / c) : 0;
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

// The scratch of one call, carved from one buffer (byte offsets rounded to 64).
struct TileScratch {
  const uint16_t** keyRows;
  const uint16_t** valueRows;
  uint16_t* zeroRow;
  int8_t* keys;         // (S, D)
  float* keyScales;     // (S)
  int32_t* keySums;     // (S)
  int8_t* values;       // (S / 4, V, 4)
  float* valueScales;   // (S)
  uint8_t* qt;          // (D / 4, 16, 4)
  float* queryScales;   // (16)
  float* scores;        // (S, 16)
  uint8_t* weights;     // (S / 4, 16, 4)
  float* blockScales;   // (S / 64, 16)
  float* sums;          // (16)
  float* out;           // (V, 16)
  int64_t bytes;

  TileScratch(uint8_t* base, int64_t s, int32_t d, int32_t v) {
    int64_t at = 0;
    const auto take = [&](int64_t size) {
      uint8_t* p = base ? base + at : nullptr;
      at += align64(size);
      return p;
    };
    keyRows = reinterpret_cast<const uint16_t**>(take(s * int64_t(sizeof(void*))));
    valueRows = reinterpret_cast<const uint16_t**>(take(s * int64_t(sizeof(void*))));
    zeroRow = reinterpret_cast<uint16_t*>(take(2 * int64_t(std::max(d, v))));
    keys = reinterpret_cast<int8_t*>(take(s * d));
    keyScales = reinterpret_cast<float*>(take(4 * s));
    keySums = reinterpret_cast<int32_t*>(take(4 * s));
    values = reinterpret_cast<int8_t*>(take(s * v));
    valueScales = reinterpret_cast<float*>(take(4 * s));
    qt = take(int64_t(d) * kQueryLanes);
    queryScales = reinterpret_cast<float*>(take(4 * kQueryLanes));
    scores = reinterpret_cast<float*>(take(4 * s * kQueryLanes));
    weights = take(s * kQueryLanes);
    blockScales = reinterpret_cast<float*>(take(4 * (s / kWeightBlock) * kQueryLanes));
    sums = reinterpret_cast<float*>(take(4 * kQueryLanes));
    out = reinterpret_cast<float*>(take(4 * int64_t(v) * kQueryLanes));
    bytes = at;
  }
};

// Positions a call covers: [minFirst, maxLast] widened to whole blocks of 64.
int64_t tilePositions(int64_t span) { return (span + 2 * kWeightBlock - 2) / kWeightBlock * kWeightBlock; }

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
                                                 scoreKeysScalar, weighKeysScalar,
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

int64_t quantizedAttentionScratchBytes(int queries, int64_t span, int32_t headDim,
                                       int32_t valueDim) {
  (void)queries;  // the query groups take turns in the same buffers
  return TileScratch(nullptr, tilePositions(span), headDim, valueDim).bytes;
}

void attendHeadsQuantized(const QuantizedAttentionKernels& kernels,
                          std::span<const AttentionQuery> queries, const KvLayerView& kv,
                          std::span<const int32_t> blockTable, int32_t kvHead, float scale,
                          uint8_t* scratch) {
  if (queries.empty()) return;
  int32_t minFirst = queries[0].first, maxLast = queries[0].last;
  for (const AttentionQuery& query : queries) {
    minFirst = std::min(minFirst, query.first);
    maxLast = std::max(maxLast, query.last);
  }
  const int32_t d = kv.headDim, v = kv.valueDim;
  const int32_t base = minFirst - minFirst % kWeightBlock;
  const int64_t s = (int64_t(maxLast) + 1 - base + kWeightBlock - 1) / kWeightBlock * kWeightBlock;
  TileScratch t(scratch, s, d, v);

  // The tile's keys and values once for all its queries; positions no query sees read zeros.
  std::fill(t.zeroRow, t.zeroRow + std::max(d, v), uint16_t(0));
  for (int64_t i = 0; i < s; ++i) {
    const int64_t p = base + i;
    if (p < minFirst || p > maxLast) {
      t.keyRows[i] = t.valueRows[i] = t.zeroRow;
      continue;
    }
    const int32_t block = blockTable[size_t(p / kv.blockSize)];
    t.keyRows[i] = kv.keyAt(block, kvHead, int32_t(p % kv.blockSize));
    t.valueRows[i] = kv.valueAt(block, kvHead, int32_t(p % kv.blockSize));
  }
  kernels.quantizeKeys(t.keyRows, s, d, t.keys, t.keyScales, t.keySums);
  kernels.quantizeValues(t.valueRows, s, v, t.values, t.valueScales);

  for (size_t g0 = 0; g0 < queries.size(); g0 += kQueryLanes) {
    const int lanes = int(std::min<size_t>(kQueryLanes, queries.size() - g0));
    int32_t first[kQueryLanes], last[kQueryLanes];
    for (int lane = 0; lane < kQueryLanes; ++lane) {
      if (lane >= lanes) {  // an empty lane: q = 0, sees nothing
        first[lane] = 1;
        last[lane] = 0;
        t.queryScales[lane] = 0.0f;
        for (int32_t e = 0; e < d; ++e) t.qt[(e / 4) * 64 + lane * 4 + e % 4] = 128;
        continue;
      }
      const AttentionQuery& query = queries[g0 + size_t(lane)];
      first[lane] = query.first - base;
      last[lane] = query.last - base;
      float m = 0.0f;
      for (int32_t e = 0; e < d; ++e) m = std::max(m, std::fabs(query.q[e]));
      const float inverse = m > 0.0f ? 127.0f / m : 0.0f;
      for (int32_t e = 0; e < d; ++e) {
        const float y = query.q[e] * inverse;
        const int32_t q8 = std::fabs(y) < 2147483648.0f
                               ? std::clamp(int32_t(std::nearbyint(y)), -127, 127)
                               : 0;
        t.qt[(e / 4) * 64 + lane * 4 + e % 4] = uint8_t(q8 + 128);
      }
      t.queryScales[lane] = m / 127.0f * scale;
    }
    kernels.scoreKeys(t.qt, t.queryScales, t.keys, t.keyScales, t.keySums, s, d, t.scores);
    kernels.weighKeys(t.scores, first, last, t.valueScales, s, t.weights, t.blockScales, t.sums);
    kernels.accumulateValues(t.weights, t.blockScales, t.values, s, v, t.out);
    for (int lane = 0; lane < lanes; ++lane) {
      float* out = queries[g0 + size_t(lane)].out;
      for (int32_t e = 0; e < v; ++e) out[e] = t.out[e * kQueryLanes + lane] / t.sums[lane];
    }
  }
}

}  // namespace ember::cpu::ops
