// AMX bf16 attention for several-token steps (attention_amx.h). Compiled with AMX and AVX-512 BF16;
// runs only after amxAttentionAvailable() said yes.
#include "backend/cpu/ops/attention_amx.h"

#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "backend/cpu/ops/vector_math.h"

// GCC 12 reports the _mm512_undefined_* operand inside its own intrinsic wrappers as "may be used
// uninitialized" once they are inlined at -O3; the operand is masked off by design.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

namespace ember::cpu::ops {
namespace {

constexpr int kTile = 16;      // tile rows, and fp32 columns of a result tile
constexpr int kPairs = 32;     // bf16 values along the inner dimension of one tile product
constexpr int kTileBf16 = kTile * kPairs;  // bf16 values in one operand tile (1 KiB)

// The tile configuration (Intel SDM, LDTILECFG): palette 1, eight 16 x 64-byte tiles.
// tmm0-3: fp32 results; tmm4-7: bf16 operands.
struct alignas(64) TileConfig {
  uint8_t palette = 0;
  uint8_t startRow = 0;
  uint8_t reserved[14] = {};
  uint16_t bytesPerRow[16] = {};
  uint8_t rows[16] = {};
};
static_assert(sizeof(TileConfig) == 64);

// Loads this file's configuration and puts back the thread's previous one (another kernel's, or
// none) when it goes out of scope, so kernels with other tile shapes can share the thread.
class TileConfigScope {
 public:
  TileConfigScope() {
    _tile_storeconfig(&previous_);
    TileConfig mine;
    mine.palette = 1;
    for (int t = 0; t < 8; ++t) {
      mine.bytesPerRow[t] = 64;
      mine.rows[t] = kTile;
    }
    _tile_loadconfig(&mine);
  }
  ~TileConfigScope() {
    if (previous_.palette != 0)
      _tile_loadconfig(&previous_);
    else
      _tile_release();
  }
  TileConfigScope(const TileConfigScope&) = delete;
  TileConfigScope& operator=(const TileConfigScope&) = delete;

 private:
  TileConfig previous_;
};

// Per-thread buffers, grown as needed (shapes in the comments; "pair layout" = the tile unit's
// B operand: row r holds, for each of 16 columns, the two bf16 values of inner indices 2r, 2r+1).
struct AmxScratch {
  std::vector<uint16_t> qHi, qLo;  // (query blocks, headDim / 32) tiles in pair layout, queries
                                   // as columns
  std::vector<uint16_t> kHi, kLo;  // (16 keys, headDim): 16 positions' keys, row major
  std::vector<float> scores;       // (queries, span): scores, then weights, at position - base
  std::vector<uint16_t> pHi, pLo;  // (query blocks * 16, span): the weights' parts, 0 unseen
  std::vector<uint16_t> vHi, vLo;  // (span / 32, valueDim / 16) tiles in pair layout, dims as
                                   // columns
  std::vector<float> out;          // (query blocks * 16, valueDim)
  alignas(64) float tile[kTile * kTile];
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

// Splits n (a multiple of 16) fp16 values into bf16 parts; returns false if one is not finite.
bool splitHalfRow(const uint16_t* h, int64_t n, uint16_t* hi, uint16_t* lo) {
  __mmask16 bad = 0;
  for (int64_t i = 0; i < n; i += 16) {
    const __m256i x = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(h + i));
    bad |= nonFiniteHalves(x);
    __m256i a, b;
    splitBf16(_mm512_cvtph_ps(x), a, b);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(hi + i), a);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(lo + i), b);
  }
  return bad == 0;
}

const uint16_t* keyRow(const KvLayerView& kv, std::span<const int32_t> table, int32_t kvHead,
                       int32_t p) {
  return kv.keyAt(table[size_t(p / kv.blockSize)], kvHead, p % kv.blockSize);
}
const uint16_t* valueRow(const KvLayerView& kv, std::span<const int32_t> table, int32_t kvHead,
                         int32_t p) {
  return kv.valueAt(table[size_t(p / kv.blockSize)], kvHead, p % kv.blockSize);
}

// The queries' parts in pair layout: tile (block c, step st) row r column col = dims 32 st + 2r
// and + 1 of query 16 c + col. Padding queries are zero. False if a query is not finite.
bool prepareQueries(std::span<const AttentionQuery> queries, int32_t headDim, int qBlocks,
                    uint16_t* qHi, uint16_t* qLo) {
  const int dSteps = headDim / kPairs;
  std::fill(qHi, qHi + int64_t(qBlocks) * dSteps * kTileBf16, uint16_t(0));
  std::fill(qLo, qLo + int64_t(qBlocks) * dSteps * kTileBf16, uint16_t(0));
  alignas(32) uint16_t hi[16], lo[16];
  for (size_t j = 0; j < queries.size(); ++j) {
    const float* q = queries[j].q;
    const int c = int(j) / kTile, col = int(j) % kTile;
    for (int32_t d = 0; d < headDim; d += 16) {
      const __m512 x = _mm512_loadu_ps(q + d);
      // |x| < inf (false for NaN too)
      if (_mm512_cmp_ps_mask(_mm512_abs_ps(x), _mm512_set1_ps(INFINITY), _CMP_LT_OQ) != 0xFFFF)
        return false;
      __m256i a, b;
      splitBf16(x, a, b);
      _mm256_store_si256(reinterpret_cast<__m256i*>(hi), a);
      _mm256_store_si256(reinterpret_cast<__m256i*>(lo), b);
      for (int i = 0; i < 16; ++i) {
        const int dim = d + i;
        const int64_t at = (int64_t(c) * dSteps + dim / kPairs) * kTileBf16 +
                           (dim % kPairs) / 2 * kPairs + col * 2 + dim % 2;
        qHi[at] = hi[i];
        qLo[at] = lo[i];
      }
    }
  }
  return true;
}

// scores[j][p - base] = scale * q_j . k_p for p in [first_j, last_j], keys 16 at a time.
#define EMBER_SCORE_BLOCK(C)                                                  \
  do {                                                                        \
    _tile_loadd(6, qHi + (int64_t(C) * dSteps + st) * kTileBf16, 64);         \
    _tile_loadd(7, qLo + (int64_t(C) * dSteps + st) * kTileBf16, 64);         \
    _tile_dpbf16ps(C, 4, 6);                                                  \
    _tile_dpbf16ps(C, 4, 7);                                                  \
    _tile_dpbf16ps(C, 5, 6);                                                  \
    _tile_dpbf16ps(C, 5, 7);                                                  \
  } while (0)

bool computeScores(std::span<const AttentionQuery> queries, const KvLayerView& kv,
                   std::span<const int32_t> table, int32_t kvHead, float scale, int qBlocks,
                   int32_t minFirst, int32_t maxLast, int32_t base, int64_t span,
                   AmxScratch& s) {
  const int32_t headDim = kv.headDim;
  const int dSteps = headDim / kPairs;
  const uint16_t* qHi = s.qHi.data();
  const uint16_t* qLo = s.qLo.data();
  uint16_t* kHi = grown(s.kHi, size_t(kTile) * headDim);
  uint16_t* kLo = grown(s.kLo, size_t(kTile) * headDim);
  float* scores = s.scores.data();
  const int n = int(queries.size());
  for (int32_t g = minFirst - minFirst % kTile; g <= maxLast; g += kTile) {
    for (int m = 0; m < kTile; ++m) {
      const int32_t p = g + m;
      if (p < minFirst || p > maxLast) {  // rows no query sees: zero, not read from the cache
        std::fill(kHi + m * headDim, kHi + (m + 1) * headDim, uint16_t(0));
        std::fill(kLo + m * headDim, kLo + (m + 1) * headDim, uint16_t(0));
      } else if (!splitHalfRow(keyRow(kv, table, kvHead, p), headDim, kHi + m * headDim,
                               kLo + m * headDim)) {
        return false;
      }
    }
    for (int c = 0; c < qBlocks; ++c) switch (c) {
        case 0: _tile_zero(0); break;
        case 1: _tile_zero(1); break;
        case 2: _tile_zero(2); break;
        default: _tile_zero(3); break;
      }
    for (int st = 0; st < dSteps; ++st) {
      _tile_loadd(4, kHi + st * kPairs, headDim * 2);
      _tile_loadd(5, kLo + st * kPairs, headDim * 2);
      EMBER_SCORE_BLOCK(0);
      if (qBlocks > 1) EMBER_SCORE_BLOCK(1);
      if (qBlocks > 2) EMBER_SCORE_BLOCK(2);
      if (qBlocks > 3) EMBER_SCORE_BLOCK(3);
    }
    for (int c = 0; c < qBlocks; ++c) {
      switch (c) {
        case 0: _tile_stored(0, s.tile, 64); break;
        case 1: _tile_stored(1, s.tile, 64); break;
        case 2: _tile_stored(2, s.tile, 64); break;
        default: _tile_stored(3, s.tile, 64); break;
      }
      // s.tile: (16 keys, 16 queries)
      for (int col = 0; col < kTile && c * kTile + col < n; ++col) {
        const AttentionQuery& query = queries[size_t(c * kTile + col)];
        float* row = scores + int64_t(c * kTile + col) * span - base;
        const int32_t from = std::max(g, query.first), to = std::min(g + kTile - 1, query.last);
        for (int32_t p = from; p <= to; ++p) row[p] = s.tile[(p - g) * kTile + col] * scale;
      }
    }
  }
  return true;
}
#undef EMBER_SCORE_BLOCK

// The weights' parts (queries as rows, positions along the row, zero where a query does not look)
// and the values' parts in pair layout (tile (step st, block vb) row r column col = dims 16 vb +
// col of positions base + 32 st + 2r and + 1).
bool prepareWeightsAndValues(std::span<const AttentionQuery> queries, const KvLayerView& kv,
                             std::span<const int32_t> table, int32_t kvHead, int qBlocks,
                             int32_t minFirst, int32_t maxLast, int32_t base, int64_t span,
                             AmxScratch& s) {
  uint16_t* pHi = grown(s.pHi, size_t(qBlocks) * kTile * span);
  uint16_t* pLo = grown(s.pLo, size_t(qBlocks) * kTile * span);
  const int n = int(queries.size());
  for (int j = 0; j < qBlocks * kTile; ++j) {
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
      // lanes inside [first, last]
      const int64_t lowLanes = std::clamp<int64_t>(first - i, 0, 16);
      const int64_t highLanes = std::clamp<int64_t>(last - i + 1, 0, 16);
      const __mmask16 seen =
          __mmask16(((1u << highLanes) - 1u) & ~((1u << lowLanes) - 1u));
      __m256i a, b;
      splitBf16(_mm512_maskz_loadu_ps(seen, w + i), a, b);
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(hi + i), a);
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(lo + i), b);
    }
  }

  const int32_t valueDim = kv.valueDim;
  const int vBlocks = valueDim / kTile;
  const int64_t tiles = span / kPairs * vBlocks;
  uint16_t* vHi = grown(s.vHi, size_t(tiles) * kTileBf16);
  uint16_t* vLo = grown(s.vLo, size_t(tiles) * kTileBf16);
  __mmask16 bad = 0;
  const __m256i zero = _mm256_setzero_si256();
  for (int64_t pair = 0; pair < span / 2; ++pair) {
    const int32_t p0 = base + int32_t(2 * pair), p1 = p0 + 1;
    const uint16_t* r0 = p0 >= minFirst && p0 <= maxLast ? valueRow(kv, table, kvHead, p0) : nullptr;
    const uint16_t* r1 = p1 >= minFirst && p1 <= maxLast ? valueRow(kv, table, kvHead, p1) : nullptr;
    const int64_t st = pair / (kPairs / 2), r = pair % (kPairs / 2);
    for (int vb = 0; vb < vBlocks; ++vb) {
      const __m256i h0 = r0 ? _mm256_loadu_si256(reinterpret_cast<const __m256i*>(r0 + vb * 16))
                            : zero;
      const __m256i h1 = r1 ? _mm256_loadu_si256(reinterpret_cast<const __m256i*>(r1 + vb * 16))
                            : zero;
      bad |= nonFiniteHalves(h0) | nonFiniteHalves(h1);
      __m256i hi0, lo0, hi1, lo1;
      splitBf16(_mm512_cvtph_ps(h0), hi0, lo0);
      splitBf16(_mm512_cvtph_ps(h1), hi1, lo1);
      const int64_t at = (st * vBlocks + vb) * kTileBf16 + r * kPairs;
      _mm512_storeu_si512(vHi + at, _mm512_or_si512(_mm512_cvtepu16_epi32(hi0),
                                                    _mm512_slli_epi32(_mm512_cvtepu16_epi32(hi1), 16)));
      _mm512_storeu_si512(vLo + at, _mm512_or_si512(_mm512_cvtepu16_epi32(lo0),
                                                    _mm512_slli_epi32(_mm512_cvtepu16_epi32(lo1), 16)));
    }
  }
  return bad == 0;
}

// out (query blocks * 16, valueDim) = weights . values, two 16-dim blocks per pass.
void computeValues(int qBlocks, int32_t valueDim, int64_t span, AmxScratch& s) {
  const int vBlocks = valueDim / kTile;
  const int64_t steps = span / kPairs;
  float* out = grown(s.out, size_t(qBlocks) * kTile * valueDim);
  const uint16_t* vHi = s.vHi.data();
  const uint16_t* vLo = s.vLo.data();
  for (int c = 0; c < qBlocks; ++c) {
    const uint16_t* pHi = s.pHi.data() + int64_t(c) * kTile * span;
    const uint16_t* pLo = s.pLo.data() + int64_t(c) * kTile * span;
    for (int vb = 0; vb < vBlocks; vb += 2) {
      _tile_zero(0);
      _tile_zero(1);
      for (int64_t st = 0; st < steps; ++st) {
        _tile_loadd(4, pHi + st * kPairs, span * 2);
        _tile_loadd(5, pLo + st * kPairs, span * 2);
        const int64_t at = (st * vBlocks + vb) * kTileBf16;
        _tile_loadd(6, vHi + at, 64);
        _tile_loadd(7, vLo + at, 64);
        _tile_loadd(2, vHi + at + kTileBf16, 64);
        _tile_loadd(3, vLo + at + kTileBf16, 64);
        _tile_dpbf16ps(0, 4, 6);
        _tile_dpbf16ps(0, 4, 7);
        _tile_dpbf16ps(0, 5, 6);
        _tile_dpbf16ps(0, 5, 7);
        _tile_dpbf16ps(1, 4, 2);
        _tile_dpbf16ps(1, 4, 3);
        _tile_dpbf16ps(1, 5, 2);
        _tile_dpbf16ps(1, 5, 3);
      }
      _tile_stored(0, out + int64_t(c) * kTile * valueDim + vb * kTile, valueDim * 4);
      _tile_stored(1, out + int64_t(c) * kTile * valueDim + (vb + 1) * kTile, valueDim * 4);
    }
  }
}

}  // namespace

bool attendHeadsAmx(std::span<const AttentionQuery> queries, const KvLayerView& kv,
                    std::span<const int32_t> blockTable, int32_t kvHead, float scale,
                    float softcap) {
  if (queries.empty()) return true;
  if (queries.size() > size_t(kMaxTileQueries)) {
    for (size_t i = 0; i < queries.size(); i += kMaxTileQueries)
      if (!attendHeadsAmx(queries.subspan(i, std::min<size_t>(kMaxTileQueries, queries.size() - i)),
                          kv, blockTable, kvHead, scale, softcap))
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
  const int dSteps = kv.headDim / kPairs;
  if (!prepareQueries(queries, kv.headDim, qBlocks,
                      grown(s.qHi, size_t(qBlocks) * dSteps * kTileBf16),
                      grown(s.qLo, size_t(qBlocks) * dSteps * kTileBf16)))
    return false;
  float* scores = grown(s.scores, size_t(n) * span);
  const float masked = -std::numeric_limits<float>::infinity();
  for (int j = 0; j < n; ++j) {  // as attendHead: the query's chunk positions it does not see
    const AttentionQuery& query = queries[size_t(j)];
    float* row = scores + int64_t(j) * span - base;
    std::fill(row + (query.first - query.first % kTile), row + query.first, masked);
    std::fill(row + query.last + 1, row + (query.last / kTile + 1) * kTile, masked);
  }

  TileConfigScope tileConfig;
  if (!computeScores(queries, kv, blockTable, kvHead, softcap > 0.0f ? 1.0f : scale, qBlocks,
                     minFirst, maxLast, base, span, s))
    return false;

  // Each query's softmax: attendHeads' code on these scores.
  const VectorKernels& vk = vectorKernels();
  for (int j = 0; j < n; ++j) {
    const AttentionQuery& query = queries[size_t(j)];
    float* row = scores + int64_t(j) * span - base;
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

  if (!prepareWeightsAndValues(queries, kv, blockTable, kvHead, qBlocks, minFirst, maxLast, base,
                               span, s))
    return false;
  computeValues(qBlocks, kv.valueDim, span, s);
  for (int j = 0; j < n; ++j)
    std::copy(s.out.data() + int64_t(j) * kv.valueDim, s.out.data() + int64_t(j + 1) * kv.valueDim,
              queries[size_t(j)].out);
  return true;
}

}  // namespace ember::cpu::ops
