// attendHeadsQueryLanes (attention_query_lanes.h): compiled with AVX-512 (engine/CMakeLists.txt's
// *_avx512.cpp rule), called only after queryLanesAvailable(). Register lane j of "query vector"
// v holds query 16 v + j; every operation below is elementwise across the lanes, so each lane
// performs, in order, the float operations attendHead performs for its query.
#include <immintrin.h>

// GCC 12 warns that the intrinsics' own undefined pass-through operands may be used
// uninitialized (a false positive of its headers at -O3).
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

#include <algorithm>
#include <cstdlib>
#include <limits>
#include <memory>
#include <new>

#include "backend/cpu/ops/attention_query_lanes.h"
#include "backend/cpu/ops/avx512_attention_math.h"
#include "backend/cpu/ops/reference_order.h"

namespace ember::cpu::ops {
namespace {

using avx512::expPolynomial16;
using avx512::convertF16x16;
using avx512::loadF16x16;
using avx512::sumPairwise16;

constexpr int kMaxVectors = kMaxTileQueries / kLanes;  // query vectors per tile
// Floats per batch of converted keys or values: 256 KiB, which stays in L2 while the tile's
// queries pass over it. Larger batches mean fewer loads and stores of the value sums' lanes,
// which stay in registers over a batch (measured: 256 KiB 5% faster than 64 KiB on SmolLM2's
// shape). The batch's positions are a multiple of 16, so that its lanes are the positions'.
constexpr int64_t kBatchFloats = 64 * 1024;
int32_t batchPositions(int64_t rowFloats) {
  return int32_t(std::max<int64_t>(kLanes, kBatchFloats / rowFloats / kLanes * kLanes));
}

// Per-thread scratch floats, 64-byte aligned, grown on demand and kept for the next tile. It at
// least doubles when it grows: a chat's turns grow the span a little at a time, and a new block
// each time left the heap fragmented (30 MB more peak memory on Gemma-3-270M's 512-token prompt).
struct Scratch {
  struct Free {
    void operator()(float* p) const { std::free(p); }
  };
  std::unique_ptr<float[], Free> data;
  int64_t floats = 0;
  float* get(int64_t n) {
    if (n > floats) {
      const int64_t rounded = (std::max(n, 2 * floats) + 15) / 16 * 16;
      data.reset(static_cast<float*>(std::aligned_alloc(64, size_t(rounded) * sizeof(float))));
      if (!data) throw std::bad_alloc();
      floats = rounded;
    }
    return data.get();
  }
};

// q.k for K keys (rows of n floats, `keys`) and the 16 queries of qt (n, 16), in the 16-lane
// order: lane l of a key's sum takes the elements l, l + 16, ... (the first an exact product,
// then FMAs), and the lanes are added as sumLanes16 adds them: c_i = (l_i + l_{i+8}) +
// (l_{i+4} + l_{i+12}), then (c_0 + c_2) + (c_1 + c_3). Evaluated depth first so that few sums
// are live at once.
// N: the head size when it is one of the common ones (the lane loops unrolled), else 0 and n.
// The partial sums go by value (arrays behind pointers left GCC storing every lane's sums).
template <int K, int N>
inline void dotKeys(const float* qt, const float* keys, int64_t n, __m512* out) {
  if constexpr (N > 0) n = N;
  struct Sums {
    __m512 k[K];
  };
  auto lane = [&](int l) {
    Sums s;
    const __m512 q = _mm512_load_ps(qt + 16 * l);
#pragma GCC unroll 4
    for (int k = 0; k < K; ++k) s.k[k] = _mm512_mul_ps(q, _mm512_set1_ps(keys[k * n + l]));
#pragma GCC unroll 16
    for (int64_t d = l + 16; d < n; d += 16) {
      const __m512 qd = _mm512_load_ps(qt + 16 * d);
#pragma GCC unroll 4
      for (int k = 0; k < K; ++k)
        s.k[k] = _mm512_fmadd_ps(qd, _mm512_set1_ps(keys[k * n + d]), s.k[k]);
    }
    return s;
  };
  auto add = [](const Sums& a, const Sums& b) {
    Sums s;
#pragma GCC unroll 4
    for (int k = 0; k < K; ++k) s.k[k] = _mm512_add_ps(a.k[k], b.k[k]);
    return s;
  };
  auto pair = [&](int l) { return add(lane(l), lane(l + 8)); };  // l_i + l_{i+8}
  auto quad = [&](int l) { return add(pair(l), pair(l + 4)); };  // c_i
  const Sums half = add(quad(0), quad(2));
  const Sums sum = add(half, add(quad(1), quad(3)));
  for (int k = 0; k < K; ++k) out[k] = sum.k[k];
}

// The tile's shape: positions [lo, end) in whole 16-position chunks, of which [minFirst,
// maxLast] are read; query vector v's lanes see [first[j], last[j]] each.
struct Tile {
  int32_t lo = 0, end = 0, minFirst = 0, maxLast = 0;
  int vectors = 0;
  __m512i first[kMaxVectors], last[kMaxVectors];
};

// scores (end - lo, 16 vectors) = q.k * scale for every position and query of the tile, -inf
// where the query does not see the position (attendHead's mask).
constexpr int kKeys = 4;  // keys per dotKeys call (of 2, 3 and 4 the fastest, measured)
template <int N>
void scoreKeys(const Tile& tile, const float* qt, const KvLayerView& kv,
               std::span<const int32_t> blockTable, int32_t kvHead, float scale, float* keys,
               float* scores) {
  const int64_t n = kv.headDim, stride = int64_t(tile.vectors) * kLanes;
  const __m512 vscale = _mm512_set1_ps(scale);
  const __m512 masked = _mm512_set1_ps(-std::numeric_limits<float>::infinity());
  auto maskRow = [&](int32_t p) {
    for (int v = 0; v < tile.vectors; ++v)
      _mm512_store_ps(scores + (p - tile.lo) * stride + 16 * v, masked);
  };
  for (int32_t p = tile.lo; p < tile.minFirst; ++p) maskRow(p);
  for (int32_t p = tile.maxLast + 1; p < tile.end; ++p) maskRow(p);
  const int32_t batch = batchPositions(n);
  for (int32_t b0 = tile.minFirst; b0 <= tile.maxLast; b0 += batch) {
    const int32_t count = std::min<int32_t>(batch, tile.maxLast + 1 - b0);
    for (int32_t i = 0; i < count; ++i) {  // the batch's keys as floats, (count, n)
      const int32_t p = b0 + i;
      const uint16_t* row =
          kv.keyAt(blockTable[size_t(p / kv.blockSize)], kvHead, p % kv.blockSize);
      for (int64_t d = 0; d < n; d += 16) _mm512_store_ps(keys + i * n + d, loadF16x16(row + d));
    }
    for (int v = 0; v < tile.vectors; ++v) {
      const float* q = qt + int64_t(v) * n * kLanes;
      auto store = [&](int32_t p, __m512 dot) {
        const __m512i at = _mm512_set1_epi32(p);
        const __mmask16 sees = _mm512_cmp_epi32_mask(tile.first[v], at, _MM_CMPINT_LE) &
                               _mm512_cmp_epi32_mask(at, tile.last[v], _MM_CMPINT_LE);
        _mm512_store_ps(scores + (p - tile.lo) * stride + 16 * v,
                        _mm512_mask_blend_ps(sees, masked, _mm512_mul_ps(dot, vscale)));
      };
      int32_t i = 0;
      for (; i + kKeys <= count; i += kKeys) {
        __m512 dot[kKeys];
        dotKeys<kKeys, N>(q, keys + i * n, n, dot);
        for (int k = 0; k < kKeys; ++k) store(b0 + i + k, dot[k]);
      }
      for (; i < count; ++i) {
        __m512 dot[1];
        dotKeys<1, N>(q, keys + i * n, n, dot);
        store(b0 + i, dot[0]);
      }
    }
  }
}

// attendHead's softmax for each lane: the maximum over its positions, exp(s - max) over its
// 16-position chunks with the chunks' 16-lane sums added in double, in chunk order (a chunk it
// does not see adds exp(-inf) = +0, which leaves a double sum as it is), then each weight
// rounded to fp16 after scaling by float(1 / sum).
void softmax(const Tile& tile, float* scores) {
  const int64_t stride = int64_t(tile.vectors) * kLanes;
  const int64_t rows = tile.end - tile.lo;
  for (int v = 0; v < tile.vectors; ++v) {
    float* s = scores + 16 * v;
    // Four independent chains (rows is a multiple of 16): the maximum is the same in any order,
    // a NaN score never enters it (vmaxps keeps its second operand), and a +0 or -0 maximum
    // gives the same exp(s - max) for every s.
    __m512 m[4];
    for (__m512& x : m) x = _mm512_set1_ps(-std::numeric_limits<float>::infinity());
    for (int64_t r = 0; r < rows; r += 4)
      for (int k = 0; k < 4; ++k) m[k] = _mm512_max_ps(_mm512_load_ps(s + (r + k) * stride), m[k]);
    const __m512 max = _mm512_max_ps(_mm512_max_ps(m[0], m[1]), _mm512_max_ps(m[2], m[3]));
    __m512d sumLo = _mm512_setzero_pd(), sumHi = _mm512_setzero_pd();
    for (int64_t c = 0; c < rows; c += kLanes) {
      __m512 e[kLanes];
      for (int l = 0; l < kLanes; ++l) {
        float* at = s + (c + l) * stride;
        e[l] = expPolynomial16(_mm512_sub_ps(_mm512_load_ps(at), max));
        _mm512_store_ps(at, e[l]);
      }
      const __m512 chunk = sumPairwise16(e);
      sumLo = _mm512_add_pd(sumLo, _mm512_cvtps_pd(_mm512_castps512_ps256(chunk)));
      sumHi = _mm512_add_pd(sumHi, _mm512_cvtps_pd(_mm512_extractf32x8_ps(chunk, 1)));
    }
    const __m512d one = _mm512_set1_pd(1.0);
    const __m512 inverse = _mm512_insertf32x8(
        _mm512_castps256_ps512(_mm512_cvtpd_ps(_mm512_div_pd(one, sumLo))),
        _mm512_cvtpd_ps(_mm512_div_pd(one, sumHi)), 1);
    for (int64_t r = 0; r < rows; ++r) {
      float* at = s + r * stride;
      const __m256i h =
          _mm512_cvtps_ph(_mm512_mul_ps(_mm512_load_ps(at), inverse), _MM_FROUND_TO_NEAREST_INT);
      _mm512_store_ps(at, _mm512_cvtph_ps(h));
    }
  }
}

// lanes (16, width, 16 V) += for each lane l and column c, the products weight x value of the
// positions p == l (mod 16) of one batch, in position order (one FMA per product, as the
// reference's axpy). values: the batch's rows, lane-major (lane l's rows one after the other,
// rowsPerLane of them, width floats each); weights: the scores rows of the batch's first
// position on. C columns at a time, with the V query vectors' accumulators in registers.
template <int V, int C>
void accumulateValues(const float* weights, int64_t stride, const float* values,
                      int64_t rowsPerLane, int64_t batchRows, int64_t width, float* lanes) {
  for (int64_t c0 = 0; c0 < width; c0 += C)
    for (int l = 0; l < kLanes; ++l) {
      float* laneRow = lanes + (int64_t(l) * width + c0) * V * kLanes;  // (C, V, 16)
      __m512 acc[C][V];
      for (int c = 0; c < C; ++c)
        for (int v = 0; v < V; ++v) acc[c][v] = _mm512_load_ps(laneRow + (c * V + v) * kLanes);
      const float* row = values + int64_t(l) * rowsPerLane * width + c0;
      for (int64_t i = l; i < batchRows; i += kLanes, row += width) {
        __m512 w[V];
        for (int v = 0; v < V; ++v) w[v] = _mm512_load_ps(weights + i * stride + v * kLanes);
#pragma GCC unroll 16
        for (int c = 0; c < C; ++c) {
          const __m512 x = _mm512_set1_ps(row[c]);
          for (int v = 0; v < V; ++v) acc[c][v] = _mm512_fmadd_ps(w[v], x, acc[c][v]);
        }
      }
      for (int c = 0; c < C; ++c)
        for (int v = 0; v < V; ++v) _mm512_store_ps(laneRow + (c * V + v) * kLanes, acc[c][v]);
    }
}

// The weighted value sums of every query: false (nothing written to the outputs) when a value
// row of [minFirst, maxLast] is not finite.
bool sumValues(const Tile& tile, std::span<const AttentionQuery> queries, const KvLayerView& kv,
               std::span<const int32_t> blockTable, int32_t kvHead, const float* scores,
               float* values, float* lanes) {
  const int64_t width = kv.valueDim, stride = int64_t(tile.vectors) * kLanes;
  std::fill(lanes, lanes + kLanes * width * stride, 0.0f);
  const int32_t batch = batchPositions(width);
  for (int32_t b0 = tile.lo; b0 < tile.end; b0 += batch) {
    const int32_t rows = std::min<int32_t>(batch, tile.end - b0);
    const int64_t rowsPerLane = rows / kLanes;
    __mmask16 nonFinite = 0;
    for (int32_t i = 0; i < rows; ++i) {
      float* slot = values + (i % kLanes * rowsPerLane + i / kLanes) * width;
      const int32_t p = b0 + i;
      if (p < tile.minFirst || p > tile.maxLast) {  // weight 0 for every query; not read
        std::fill(slot, slot + width, 0.0f);
        continue;
      }
      const uint16_t* row =
          kv.valueAt(blockTable[size_t(p / kv.blockSize)], kvHead, p % kv.blockSize);
      for (int64_t c = 0; c < width; c += 16) {
        convertF16x16(row + c, slot + c, nonFinite);
      }
    }
    if (nonFinite != 0) return false;
    const float* w = scores + (b0 - tile.lo) * stride;
    switch (tile.vectors) {
      case 1: accumulateValues<1, 16>(w, stride, values, rowsPerLane, rows, width, lanes); break;
      case 2: accumulateValues<2, 8>(w, stride, values, rowsPerLane, rows, width, lanes); break;
      case 3: accumulateValues<3, 8>(w, stride, values, rowsPerLane, rows, width, lanes); break;
      default: accumulateValues<4, 4>(w, stride, values, rowsPerLane, rows, width, lanes); break;
    }
  }
  // Each column's 16 lanes added as sumLanes16 does, then handed to the queries.
  alignas(64) float sums[kLanes];
  for (int64_t c = 0; c < width; ++c)
    for (int v = 0; v < tile.vectors; ++v) {
      __m512 a[kLanes];
      for (int l = 0; l < kLanes; ++l)
        a[l] = _mm512_load_ps(lanes + ((int64_t(l) * width + c) * stride) + v * kLanes);
      _mm512_store_ps(sums, sumPairwise16(a));
      for (int j = 0; j < kLanes && v * kLanes + j < int(queries.size()); ++j)
        queries[size_t(v * kLanes + j)].out[c] = sums[j];
    }
  return true;
}

}  // namespace

bool attendHeadsQueryLanes(std::span<const AttentionQuery> queries, const KvLayerView& kv,
                           std::span<const int32_t> blockTable, int32_t kvHead, float scale) {
  const int n = int(queries.size());
  if (n == 0 || n > kMaxTileQueries || kv.headDim % kLanes != 0 || kv.valueDim % kLanes != 0)
    return false;
  Tile tile;
  tile.vectors = (n + kLanes - 1) / kLanes;
  tile.minFirst = queries[0].first;
  tile.maxLast = queries[0].last;
  alignas(64) int32_t first[kMaxTileQueries], last[kMaxTileQueries];
  for (int j = 0; j < tile.vectors * kLanes; ++j) {
    // Lanes past the last query repeat query 0 (their results are dropped).
    const AttentionQuery& query = queries[size_t(j < n ? j : 0)];
    first[j] = query.first;
    last[j] = query.last;
    tile.minFirst = std::min(tile.minFirst, query.first);
    tile.maxLast = std::max(tile.maxLast, query.last);
  }
  for (int v = 0; v < tile.vectors; ++v) {
    tile.first[v] = _mm512_load_si512(first + kLanes * v);
    tile.last[v] = _mm512_load_si512(last + kLanes * v);
  }
  tile.lo = tile.minFirst - tile.minFirst % kLanes;
  tile.end = (tile.maxLast / kLanes + 1) * kLanes;

  const int64_t headDim = kv.headDim, width = kv.valueDim;
  const int64_t stride = int64_t(tile.vectors) * kLanes;
  const int64_t qtFloats = headDim * stride, scoreFloats = (tile.end - tile.lo) * stride;
  const int64_t batchFloats = std::max(int64_t(batchPositions(headDim)) * headDim,
                                       int64_t(batchPositions(width)) * width);
  const int64_t laneFloats = kLanes * width * stride;
  thread_local Scratch scratch;
  float* qt = scratch.get(qtFloats + scoreFloats + batchFloats + laneFloats);
  float* scores = qt + qtFloats;  // (end - lo, V, 16)
  float* rows = scores + scoreFloats;  // a batch of keys or values as floats
  float* lanes = rows + batchFloats;  // (16, width, V, 16) the value sums' lanes
  for (int v = 0; v < tile.vectors; ++v)  // (headDim, 16) per query vector
    for (int j = 0; j < kLanes; ++j) {
      const float* q = queries[size_t(v * kLanes + j < n ? v * kLanes + j : 0)].q;
      for (int64_t d = 0; d < headDim; ++d) qt[(v * headDim + d) * kLanes + j] = q[d];
    }
  switch (headDim) {
    case 64: scoreKeys<64>(tile, qt, kv, blockTable, kvHead, scale, rows, scores); break;
    case 128: scoreKeys<128>(tile, qt, kv, blockTable, kvHead, scale, rows, scores); break;
    case 256: scoreKeys<256>(tile, qt, kv, blockTable, kvHead, scale, rows, scores); break;
    default: scoreKeys<0>(tile, qt, kv, blockTable, kvHead, scale, rows, scores); break;
  }
  softmax(tile, scores);
  return sumValues(tile, queries, kv, blockTable, kvHead, scores, rows, lanes);
}

}  // namespace ember::cpu::ops
