// AMX bf16 attention for several-token steps (attention_amx.h). Compiled with AMX and AVX-512 BF16;
// runs only after amxAttentionAvailable() said yes.
#include "backend/cpu/ops/attention_amx.h"

#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "backend/cpu/amx_tiles.h"
#include "backend/cpu/ops/vector_math.h"

// GCC 12 reports the _mm512_undefined_* operand inside its own intrinsic wrappers as "may be used
// uninitialized" once they are inlined at -O3; the operand is masked off by design.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

namespace ember::cpu::ops {
namespace {

constexpr int kTile = 16;      // tile rows, and fp32 columns of a result tile
constexpr int kPairs = 32;     // bf16 values along the inner dimension of one tile product
constexpr int kTileBf16 = kTile * kPairs;  // bf16 values in one operand tile (1 KiB)

// This file's tile configuration: eight 16 x 64-byte tiles; tmm0-3: fp32 results, tmm4-7 (and 2-3
// in the values' pass): bf16 operands. The scope loads it and puts back the thread's previous one
// (another kernel's, or none) when it ends, so kernels with other tile shapes can share the thread.
class TileConfigScope {
 public:
  TileConfigScope() {
    storeTileConfig(previous_);  // all zero when the thread had none
    TileConfig mine;
    for (int t = 0; t < 8; ++t) {
      mine.bytesPerRow[t] = 64;
      mine.rows[t] = kTile;
    }
    loadTileConfig(mine);
  }
  ~TileConfigScope() {
    if (previous_.palette != 0)
      loadTileConfig(previous_);
    else
      _tile_release();
  }
  TileConfigScope(const TileConfigScope&) = delete;
  TileConfigScope& operator=(const TileConfigScope&) = delete;

 private:
  TileConfig previous_;
};

// Per-thread buffers, grown as needed.
struct AmxScratch {
  std::vector<uint16_t> qHi, qLo;  // (query blocks * 16, headDim): the queries' parts, row major
  std::vector<float> scores;       // (query blocks * 16, span): scores, then weights
  std::vector<uint16_t> pHi, pLo;  // (query blocks * 16, span): the weights' parts, 0 unseen
  std::vector<float> out;          // (query blocks * 16, valueDim)
};

template <class T>
T* grown(std::vector<T>& v, size_t n) {
  if (v.size() < n) v.resize(n);
  return v.data();
}

inline __m512 widenBf16(__m256i bf) {
  return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(bf), 16));
}

// hi = bf16(x), lo = bf16(x - hi): exact (hi + lo == x) for fp16-representable x.
inline void splitBf16(__m512 x, __m256i& hi, __m256i& lo) {
  hi = (__m256i)_mm512_cvtneps_pbh(x);
  lo = (__m256i)_mm512_cvtneps_pbh(_mm512_sub_ps(x, widenBf16(hi)));
}

// Lanes of 16 fp16 bit patterns that are inf or NaN.
inline __mmask16 nonFiniteHalves(__m256i h) {
  const __m256i exponent = _mm256_set1_epi16(0x7C00);
  return _mm256_cmpeq_epi16_mask(_mm256_and_si256(h, exponent), exponent);
}

const uint16_t* keyRow(const KvLayerView& kv, std::span<const int32_t> table, int32_t kvHead,
                       int32_t p) {
  return kv.keyAt(table[size_t(p / kv.blockSize)], kvHead, p % kv.blockSize);
}
const uint16_t* valueRow(const KvLayerView& kv, std::span<const int32_t> table, int32_t kvHead,
                         int32_t p) {
  return kv.valueAt(table[size_t(p / kv.blockSize)], kvHead, p % kv.blockSize);
}

// The queries' parts, row major (the A operand); padding rows zero. False if one is not finite.
bool prepareQueries(std::span<const AttentionQuery> queries, int32_t headDim, int qBlocks,
                    uint16_t* qHi, uint16_t* qLo) {
  for (size_t j = 0; j < size_t(qBlocks) * kTile; ++j) {
    uint16_t* hi = qHi + int64_t(j) * headDim;
    uint16_t* lo = qLo + int64_t(j) * headDim;
    if (j >= queries.size()) {
      std::fill(hi, hi + headDim, uint16_t(0));
      std::fill(lo, lo + headDim, uint16_t(0));
      continue;
    }
    const float* q = queries[j].q;
    for (int32_t d = 0; d < headDim; d += 16) {
      const __m512 x = _mm512_loadu_ps(q + d);
      // |x| < inf (false for NaN too)
      if (_mm512_cmp_ps_mask(_mm512_abs_ps(x), _mm512_set1_ps(INFINITY), _CMP_LT_OQ) != 0xFFFF)
        return false;
      __m256i a, b;
      splitBf16(x, a, b);
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(hi + d), a);
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(lo + d), b);
    }
  }
  return true;
}

// scores[j][p - base] = q_j . k_p (unscaled) for 16 keys at a time, all query rows.
#define EMBER_SCORE_BLOCK(C)                                                        \
  do {                                                                              \
    _tile_loadd(4, qHi + int64_t(C) * kTile * headDim + st * kPairs, headDim * 2);  \
    if (products > 1)                                                               \
      _tile_loadd(5, qLo + int64_t(C) * kTile * headDim + st * kPairs, headDim * 2);  \
    _tile_dpbf16ps(C, 4, 6);                                                        \
    if (products > 1) {                                                             \
      _tile_dpbf16ps(C, 4, 7);                                                      \
      _tile_dpbf16ps(C, 5, 6);                                                      \
      if (products > 3) _tile_dpbf16ps(C, 5, 7);                                    \
    }                                                                               \
  } while (0)
#define EMBER_STORE_BLOCK(C) \
  _tile_stored(C, scores + int64_t(C) * kTile * span + (g - base), int(span * 4))

void computeScores(const AmxKv& rows, int32_t headDim, int qBlocks, int32_t maxLast,
                   int32_t base, int64_t span, int products, AmxScratch& s) {
  const int dSteps = headDim / kPairs;
  const uint16_t* qHi = s.qHi.data();
  const uint16_t* qLo = s.qLo.data();
  float* scores = s.scores.data();
  for (int32_t g = base; g <= maxLast; g += kTile) {
    _tile_zero(0);
    if (qBlocks > 1) _tile_zero(1);
    if (qBlocks > 2) _tile_zero(2);
    if (qBlocks > 3) _tile_zero(3);
    const int64_t group = (g - rows.first) / kTile;
    for (int st = 0; st < dSteps; ++st) {
      _tile_loadd(6, rows.keyHi + (group * dSteps + st) * kTileBf16, 64);
      if (products > 1) _tile_loadd(7, rows.keyLo + (group * dSteps + st) * kTileBf16, 64);
      EMBER_SCORE_BLOCK(0);
      if (qBlocks > 1) EMBER_SCORE_BLOCK(1);
      if (qBlocks > 2) EMBER_SCORE_BLOCK(2);
      if (qBlocks > 3) EMBER_SCORE_BLOCK(3);
    }
    EMBER_STORE_BLOCK(0);
    if (qBlocks > 1) EMBER_STORE_BLOCK(1);
    if (qBlocks > 2) EMBER_STORE_BLOCK(2);
    if (qBlocks > 3) EMBER_STORE_BLOCK(3);
  }
}
#undef EMBER_SCORE_BLOCK
#undef EMBER_STORE_BLOCK

// Lanes [i, i + 16) of a row that fall inside [first, last] (row offsets).
inline __mmask16 lanesInside(int64_t i, int64_t first, int64_t last) {
  if (i >= first && i + 15 <= last) return 0xFFFF;
  if (i > last || i + 15 < first) return 0;
  const int64_t lowLanes = std::clamp<int64_t>(first - i, 0, 16);
  const int64_t highLanes = std::clamp<int64_t>(last - i + 1, 0, 16);
  return __mmask16(((1u << highLanes) - 1u) & ~((1u << lowLanes) - 1u));
}

// The weights' parts: queries as rows, positions along the row, zero where a query does not look.
void prepareWeights(std::span<const AttentionQuery> queries, int qBlocks, int32_t base,
                    int64_t span, bool paddingOnly, AmxScratch& s) {
  uint16_t* pHi = s.pHi.data();
  uint16_t* pLo = s.pLo.data();
  const int n = int(queries.size());
  for (int j = paddingOnly ? n : 0; j < qBlocks * kTile; ++j) {
    uint16_t* hi = pHi + int64_t(j) * span;
    uint16_t* lo = pLo + int64_t(j) * span;
    if (j >= n) {
      std::fill(hi, hi + span, uint16_t(0));
      std::fill(lo, lo + span, uint16_t(0));
      continue;
    }
    const float* w = s.scores.data() + int64_t(j) * span;
    const int64_t first = queries[size_t(j)].first - base, last = queries[size_t(j)].last - base;
    for (int64_t i = 0; i < span; i += 16) {
      const __mmask16 seen = lanesInside(i, first, last);
      __m256i a, b;
      splitBf16(_mm512_maskz_loadu_ps(seen, w + i), a, b);
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(hi + i), a);
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(lo + i), b);
    }
  }
}

// out (query blocks * 16, valueDim) = weights . values, two 16-dim blocks per pass.
void computeValues(const AmxKv& rows, int qBlocks, int32_t valueDim, int32_t base, int64_t span,
                   int products, AmxScratch& s) {
  const int vBlocks = valueDim / kTile;
  const int64_t steps = span / kPairs, firstStep = (base - rows.first) / kPairs;
  float* out = grown(s.out, size_t(qBlocks) * kTile * valueDim);
  for (int c = 0; c < qBlocks; ++c) {
    const uint16_t* pHi = s.pHi.data() + int64_t(c) * kTile * span;
    const uint16_t* pLo = s.pLo.data() + int64_t(c) * kTile * span;
    for (int vb = 0; vb < vBlocks; vb += 2) {
      _tile_zero(0);
      _tile_zero(1);
      for (int64_t st = 0; st < steps; ++st) {
        const int64_t at = ((firstStep + st) * vBlocks + vb) * kTileBf16;
        _tile_loadd(4, pHi + st * kPairs, span * 2);
        _tile_loadd(6, rows.valueHi + at, 64);
        _tile_loadd(2, rows.valueHi + at + kTileBf16, 64);
        _tile_dpbf16ps(0, 4, 6);
        _tile_dpbf16ps(1, 4, 2);
        if (products > 1) {
          _tile_loadd(5, pLo + st * kPairs, span * 2);
          _tile_loadd(7, rows.valueLo + at, 64);
          _tile_loadd(3, rows.valueLo + at + kTileBf16, 64);
          _tile_dpbf16ps(0, 4, 7);
          _tile_dpbf16ps(0, 5, 6);
          _tile_dpbf16ps(1, 4, 3);
          _tile_dpbf16ps(1, 5, 2);
          if (products > 3) {
            _tile_dpbf16ps(0, 5, 7);
            _tile_dpbf16ps(1, 5, 3);
          }
        }
      }
      _tile_stored(0, out + int64_t(c) * kTile * valueDim + vb * kTile, valueDim * 4);
      _tile_stored(1, out + int64_t(c) * kTile * valueDim + (vb + 1) * kTile, valueDim * 4);
    }
  }
}

// exp(x) for x <= 0 in 16 lanes: Cephes' single-precision polynomial after the reduction
// x = n ln 2 + r (ln 2 in two parts), scaled by 2^n in one rounding; inputs below -87 give
// exp(-87) (~1.6e-38, a weight nothing sees next to the maximum's 1).
__m512 expNonPositiveLanes(__m512 x) {
  x = _mm512_max_ps(x, _mm512_set1_ps(-87.0f));
  const __m512 n = _mm512_roundscale_ps(_mm512_mul_ps(x, _mm512_set1_ps(1.44269504088896341f)),
                                        _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m512 r = _mm512_fmadd_ps(n, _mm512_set1_ps(-0.693359375f), x);
  r = _mm512_fmadd_ps(n, _mm512_set1_ps(2.12194440e-4f), r);
  __m512 p = _mm512_set1_ps(1.9875691500e-4f);
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.3981999507e-3f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(8.3334519073e-3f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(4.1665795894e-2f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.6666665459e-1f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(5.0000001201e-1f));
  const __m512 y = _mm512_add_ps(_mm512_fmadd_ps(p, _mm512_mul_ps(r, r), r), _mm512_set1_ps(1.0f));
  return _mm512_scalef_ps(y, n);
}


// The lighter softmax: dots (span) times scale, max, exp, float sum, the weights' bf16 parts
// straight into hi/lo (span, zero outside [first, last]), no fp16 rounding of the weights.
void lightSoftmax(float* row, int64_t first, int64_t last, int64_t span, float scale,
                  uint16_t* hi, uint16_t* lo) {
  const __m512 s = _mm512_set1_ps(scale);
  __m512 m = _mm512_set1_ps(-INFINITY);
  const int64_t begin = first - first % 16;
  for (int64_t i = begin; i <= last; i += 16) {
    const __mmask16 k = lanesInside(i, first, last);
    m = _mm512_mask_max_ps(m, k, m, _mm512_mul_ps(_mm512_maskz_loadu_ps(k, row + i), s));
  }
  const __m512 top = _mm512_set1_ps(_mm512_reduce_max_ps(m));
  __m512 sum = _mm512_setzero_ps();
  for (int64_t i = begin; i <= last; i += 16) {
    const __mmask16 k = lanesInside(i, first, last);
    const __m512 e = _mm512_maskz_mov_ps(
        k, expNonPositiveLanes(_mm512_sub_ps(_mm512_mul_ps(_mm512_maskz_loadu_ps(k, row + i), s),
                                             top)));
    sum = _mm512_add_ps(sum, e);
    _mm512_storeu_ps(row + i, e);
  }
  const __m512 inverse = _mm512_set1_ps(1.0f / _mm512_reduce_add_ps(sum));
  for (int64_t i = 0; i < span; i += 16) {
    const __mmask16 k = lanesInside(i, first, last);
    __m256i a, b;
    splitBf16(_mm512_mul_ps(_mm512_maskz_loadu_ps(k, row + i), inverse), a, b);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(hi + i), a);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(lo + i), b);
  }
}

}  // namespace

void fillAmxKv(const KvLayerView& kv, std::span<const int32_t> blockTable, int32_t kvHead,
               int32_t seenFirst, int32_t seenLast, const AmxKv& rows, int32_t from, int32_t to) {
  const int32_t headDim = kv.headDim, valueDim = kv.valueDim;
  const int dSteps = headDim / kPairs, vBlocks = valueDim / kTile;
  const __m256i zero = _mm256_setzero_si256();
  const __m512i rowOffsets = _mm512_mullo_epi32(_mm512_set_epi32(15, 14, 13, 12, 11, 10, 9, 8, 7,
                                                                  6, 5, 4, 3, 2, 1, 0),
                                                _mm512_set1_epi32(kTile));  // in dwords
  for (int32_t chunk = from; chunk < to; chunk += kPairs) {
    __mmask16 bad = 0;
    // Keys: key n's 32 dims of a step are 16 dword pairs, one per tile row: column n.
    for (int32_t p = chunk; p < chunk + kPairs; ++p) {
      const bool seen = p >= seenFirst && p <= seenLast;
      const uint16_t* k = seen ? keyRow(kv, blockTable, kvHead, p) : nullptr;
      const int64_t group = (p - rows.first) / kTile, col = (p - rows.first) % kTile;
      for (int st = 0; st < dSteps; ++st) {
        const __m256i h0 =
            seen ? _mm256_loadu_si256(reinterpret_cast<const __m256i*>(k + st * kPairs)) : zero;
        const __m256i h1 =
            seen ? _mm256_loadu_si256(reinterpret_cast<const __m256i*>(k + st * kPairs + 16))
                 : zero;
        bad |= nonFiniteHalves(h0) | nonFiniteHalves(h1);
        __m256i hi0, lo0, hi1, lo1;
        splitBf16(_mm512_cvtph_ps(h0), hi0, lo0);
        splitBf16(_mm512_cvtph_ps(h1), hi1, lo1);
        const int64_t at = (group * dSteps + st) * kTileBf16 + col * 2;
        _mm512_i32scatter_epi32(rows.keyHi + at, rowOffsets,
                                _mm512_inserti64x4(_mm512_castsi256_si512(hi0), hi1, 1), 4);
        _mm512_i32scatter_epi32(rows.keyLo + at, rowOffsets,
                                _mm512_inserti64x4(_mm512_castsi256_si512(lo0), lo1, 1), 4);
      }
    }
    // Values: positions 2r and 2r + 1 side by side in each dword.
    const int64_t st = (chunk - rows.first) / kPairs;
    for (int r = 0; r < kPairs / 2; ++r) {
      const int32_t p0 = chunk + 2 * r, p1 = p0 + 1;
      const uint16_t* r0 =
          p0 >= seenFirst && p0 <= seenLast ? valueRow(kv, blockTable, kvHead, p0) : nullptr;
      const uint16_t* r1 =
          p1 >= seenFirst && p1 <= seenLast ? valueRow(kv, blockTable, kvHead, p1) : nullptr;
      for (int vb = 0; vb < vBlocks; ++vb) {
        const __m256i h0 =
            r0 ? _mm256_loadu_si256(reinterpret_cast<const __m256i*>(r0 + vb * 16)) : zero;
        const __m256i h1 =
            r1 ? _mm256_loadu_si256(reinterpret_cast<const __m256i*>(r1 + vb * 16)) : zero;
        bad |= nonFiniteHalves(h0) | nonFiniteHalves(h1);
        __m256i hi0, lo0, hi1, lo1;
        splitBf16(_mm512_cvtph_ps(h0), hi0, lo0);
        splitBf16(_mm512_cvtph_ps(h1), hi1, lo1);
        const int64_t at = (st * vBlocks + vb) * kTileBf16 + r * kPairs;
        _mm512_storeu_si512(rows.valueHi + at,
                            _mm512_or_si512(_mm512_cvtepu16_epi32(hi0),
                                            _mm512_slli_epi32(_mm512_cvtepu16_epi32(hi1), 16)));
        _mm512_storeu_si512(rows.valueLo + at,
                            _mm512_or_si512(_mm512_cvtepu16_epi32(lo0),
                                            _mm512_slli_epi32(_mm512_cvtepu16_epi32(lo1), 16)));
      }
    }
    rows.nonFinite[(chunk - rows.first) / kPairs] = bad != 0;
  }
}

bool attendHeadsAmx(std::span<const AttentionQuery> queries, const AmxKv& rows, int32_t headDim,
                    int32_t valueDim, float scale, float softcap, AmxPrecision precision) {
  if (queries.empty()) return true;
  if (queries.size() > size_t(kMaxTileQueries)) {
    for (size_t i = 0; i < queries.size(); i += kMaxTileQueries)
      if (!attendHeadsAmx(queries.subspan(i, std::min<size_t>(kMaxTileQueries, queries.size() - i)),
                          rows, headDim, valueDim, scale, softcap, precision))
        return false;
    return true;
  }
  static thread_local AmxScratch scratch;
  AmxScratch& s = scratch;
  const int n = int(queries.size());
  const int qBlocks = (n + kTile - 1) / kTile;
  int32_t minFirst = queries[0].first, maxLast = queries[0].last;
  for (const AttentionQuery& query : queries) {
    minFirst = std::min(minFirst, query.first);
    maxLast = std::max(maxLast, query.last);
  }
  // Positions [base, base + span): whole 32-position steps (each query's 16-position softmax
  // chunks lie inside).
  const int32_t base = minFirst - minFirst % kPairs;
  const int64_t span = (int64_t(maxLast) / kPairs + 1) * kPairs - base;
  if (base < rows.first || base + span > int64_t(rows.first) + rows.count) return false;
  for (int64_t st = 0; st < span / kPairs; ++st)
    if (rows.nonFinite[(base - rows.first) / kPairs + st]) return false;
  if (!prepareQueries(queries, headDim, qBlocks, grown(s.qHi, size_t(qBlocks) * kTile * headDim),
                      grown(s.qLo, size_t(qBlocks) * kTile * headDim)))
    return false;
  float* scores = grown(s.scores, size_t(qBlocks) * kTile * span);

  {
    TileConfigScope tileConfig;
    computeScores(rows, headDim, qBlocks, maxLast, base, span, precision.scoreProducts, s);

    // Each query's softmax: attendHeads' code on these scores (times scale, as its dot kernels
    // multiply each sum), positions of its 16-position chunks it does not see masked.
    const VectorKernels& vk = vectorKernels();
    const float masked = -std::numeric_limits<float>::infinity();
    const float scoreScale = softcap > 0.0f ? 1.0f : scale;
    grown(s.pHi, size_t(qBlocks) * kTile * span);
    grown(s.pLo, size_t(qBlocks) * kTile * span);
    bool light = precision.lightSoftmax && softcap <= 0.0f;
    for (const AttentionQuery& query : queries) light = light && query.sink == kNoSink;
    for (int j = 0; j < n && light; ++j)
      lightSoftmax(scores + int64_t(j) * span, queries[size_t(j)].first - base,
                   queries[size_t(j)].last - base, span, scale,
                   s.pHi.data() + int64_t(j) * span, s.pLo.data() + int64_t(j) * span);
    for (int j = 0; j < n && !light; ++j) {
      const AttentionQuery& query = queries[size_t(j)];
      float* row = scores + int64_t(j) * span - base;
      for (int32_t p = query.first; p <= query.last; ++p) row[p] *= scoreScale;
      std::fill(row + (query.first - query.first % kTile), row + query.first, masked);
      std::fill(row + query.last + 1, row + (query.last / kTile + 1) * kTile, masked);
      if (softcap > 0.0f) {
        const float inverse = 1.0f / softcap;
        for (float* x = row + query.first; x <= row + query.last; ++x)
          *x = std::tanh(*x * inverse) * softcap * scale;
      }
      float maxScore = vk.maxValue(row + query.first, query.last - query.first + 1, masked);
      const bool sink = query.sink != kNoSink;
      if (sink) maxScore = std::max(maxScore, query.sink);
      const int32_t chunkStart = query.first - query.first % kTile;
      const int32_t chunkEnd = (query.last / kTile + 1) * kTile;
      double sum = vk.expChunks(row + chunkStart, (chunkEnd - chunkStart) / kTile, maxScore);
      if (sink) sum += double(std::exp(query.sink - maxScore));
      vk.scaleToHalf(row + query.first, query.last - query.first + 1, float(1.0 / sum));
    }

    prepareWeights(queries, qBlocks, base, span, light, s);
    computeValues(rows, qBlocks, valueDim, base, span, precision.valueProducts, s);
  }
  for (int j = 0; j < n; ++j)
    std::copy(s.out.data() + int64_t(j) * valueDim, s.out.data() + int64_t(j + 1) * valueDim,
              queries[size_t(j)].out);
  return true;
}

bool attendHeadsAmx(std::span<const AttentionQuery> queries, const KvLayerView& kv,
                    std::span<const int32_t> blockTable, int32_t kvHead, float scale,
                    float softcap, AmxPrecision precision) {
  if (queries.empty()) return true;
  int32_t minFirst = queries[0].first, maxLast = queries[0].last;
  for (const AttentionQuery& query : queries) {
    minFirst = std::min(minFirst, query.first);
    maxLast = std::max(maxLast, query.last);
  }
  const int32_t first = minFirst - minFirst % kPairs;
  const int32_t count = (maxLast / kPairs + 1) * kPairs - first;
  static thread_local std::vector<uint16_t> storage;  // 2-byte aligned
  const int64_t bytes = amxKvBytes(count, kv.headDim, kv.valueDim);
  storage.resize(size_t(bytes + 1) / 2);
  const AmxKv rows = carveAmxKv(reinterpret_cast<uint8_t*>(storage.data()), first, count,
                                kv.headDim, kv.valueDim);
  fillAmxKv(kv, blockTable, kvHead, minFirst, maxLast, rows, first, first + count);
  return attendHeadsAmx(queries, rows, kv.headDim, kv.valueDim, scale, softcap, precision);
}

}  // namespace ember::cpu::ops
