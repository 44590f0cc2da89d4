// Compiled with AVX-512 F/BW/VL/DQ + FMA + F16C (engine/CMakeLists.txt's *_avx512.cpp rule);
// called only after a CPU check. The AVX2 table with the attention's multi-query kernels
// (dotRowsMulti, accumulateRowsMulti, sumValueLanes64) and the softmax's exp and fp16 rounding on
// 512-bit vectors. One register holds the 16 lanes that the AVX2 kernels keep in two, and every
// lane sees the same operations in the same order, so the results are the AVX2 (and scalar)
// kernels' bit for bit (reference_order.h).
#include <immintrin.h>

// GCC 12 warns that the intrinsics' own undefined pass-through operands may be used
// uninitialized (a false positive of its headers at -O3).
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

#include <algorithm>
#include <cstdlib>
#include <memory>

#include "backend/cpu/ops/avx512_attention_math.h"
#include "backend/cpu/ops/reference_order.h"
#include "backend/cpu/ops/vector_math.h"

namespace ember::cpu::ops {
namespace {

using avx512::expPolynomial16;
using avx512::convertF16x16;
using avx512::loadF16x16;

struct AlignedFree {
  void operator()(float* p) const { std::free(p); }
};


// The (i, i+8) lane sums of dot(q, key) in the 16-lane order for n == N: lane l takes the
// elements l, l + 16, ... in order (the first an exact product, the others FMAs, as the AVX2
// kernel's lo / hi registers), then lanes l and l + 8 are added.
template <int N>
inline __m256 laneSums16(const __m512* qv, const float* key) {
  __m512 acc = _mm512_mul_ps(qv[0], _mm512_load_ps(key));
#pragma GCC unroll 16
  for (int r = 1; r < N / 16; ++r) acc = _mm512_fmadd_ps(qv[r], _mm512_load_ps(key + 16 * r), acc);
  return _mm256_add_ps(_mm512_castps512_ps256(acc), _mm512_extractf32x8_ps(acc, 1));
}

// The rest of sumLanes16 on (i, i+8) sums: (i, i+4), then (0, 2) and (1, 3), then 0 + 1.
inline float finishOneDot(__m256 b) {
  const __m128 c = _mm_add_ps(_mm256_castps256_ps128(b), _mm256_extractf128_ps(b, 1));
  const __m128 d = _mm_add_ps(c, _mm_movehl_ps(c, c));
  return _mm_cvtss_f32(_mm_add_ss(d, _mm_movehdup_ps(d)));
}

// The same for 8 dots at once (b[k]: dot k's (i, i+8) sums) through a transpose; every sum pairs
// the same two values as finishOneDot.
inline __m256 finishEightDots(const __m256* b) {
  __m256 s[4];
  for (int k = 0; k < 4; ++k)
    s[k] = _mm256_add_ps(_mm256_permute2f128_ps(b[2 * k], b[2 * k + 1], 0x20),
                         _mm256_permute2f128_ps(b[2 * k], b[2 * k + 1], 0x31));
  __m256 w[2];
  for (int k = 0; k < 2; ++k)
    w[k] = _mm256_add_ps(_mm256_shuffle_ps(s[2 * k], s[2 * k + 1], _MM_SHUFFLE(1, 0, 1, 0)),
                         _mm256_shuffle_ps(s[2 * k], s[2 * k + 1], _MM_SHUFFLE(3, 2, 3, 2)));
  const __m256 r = _mm256_add_ps(_mm256_shuffle_ps(w[0], w[1], _MM_SHUFFLE(2, 0, 2, 0)),
                                 _mm256_shuffle_ps(w[0], w[1], _MM_SHUFFLE(3, 1, 3, 1)));
  return _mm256_permutevar8x32_ps(r, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
}

// dot(q, key) in the 16-lane order for 16 keys at once, the lane sums of key k in acc[k]: the
// sums of finishOneDot, (i, i+8), (i, i+4), (0, 2) and (1, 3), then 0 + 1, taken for all 16 keys
// together through a transpose (each step adds the same two values as finishOneDot for every key),
// times scale, stored in key order.
inline void finishSixteenDots(const __m512* acc, float scale, float* out) {
  __m512 s1[8], s2[4], s3[2];
  for (int p = 0; p < 8; ++p)  // [key 2p: 8 sums | key 2p + 1: 8 sums]
    s1[p] = _mm512_add_ps(_mm512_shuffle_f32x4(acc[2 * p], acc[2 * p + 1], _MM_SHUFFLE(1, 0, 1, 0)),
                          _mm512_shuffle_f32x4(acc[2 * p], acc[2 * p + 1], _MM_SHUFFLE(3, 2, 3, 2)));
  for (int p = 0; p < 4; ++p)  // keys 4p .. 4p + 3, 4 sums each, one per 128-bit lane
    s2[p] = _mm512_add_ps(_mm512_shuffle_f32x4(s1[2 * p], s1[2 * p + 1], _MM_SHUFFLE(2, 0, 2, 0)),
                          _mm512_shuffle_f32x4(s1[2 * p], s1[2 * p + 1], _MM_SHUFFLE(3, 1, 3, 1)));
  for (int p = 0; p < 2; ++p)  // 128-bit lane j: keys 8p + j and 8p + 4 + j, 2 sums each
    s3[p] = _mm512_add_ps(_mm512_shuffle_ps(s2[2 * p], s2[2 * p + 1], _MM_SHUFFLE(1, 0, 1, 0)),
                          _mm512_shuffle_ps(s2[2 * p], s2[2 * p + 1], _MM_SHUFFLE(3, 2, 3, 2)));
  // Element 4j + m: key j + 4m.
  const __m512 r = _mm512_add_ps(_mm512_shuffle_ps(s3[0], s3[1], _MM_SHUFFLE(2, 0, 2, 0)),
                                 _mm512_shuffle_ps(s3[0], s3[1], _MM_SHUFFLE(3, 1, 3, 1)));
  const __m512i order = _mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15);
  _mm512_storeu_ps(out, _mm512_mul_ps(_mm512_permutexvar_ps(order, r), _mm512_set1_ps(scale)));
}

// Converts the key rows (count, N) from fp16 into keys (16, N) sixteen at a time and calls
// f(i) for the rows i .. i + 15 of each batch; returns the first row left (count % 16 remain).
template <int N, class F>
int64_t forEachSixteenKeys(const uint16_t* rows, int64_t count, float* keys, F&& f) {
  int64_t i = 0;
  for (; i + 16 <= count; i += 16) {
    for (int c = 0; c < 16 * N; c += 16) _mm512_store_ps(keys + c, loadF16x16(rows + i * N + c));
    f(i);
  }
  return i;
}

// dotRowsMulti in the 16-lane order for n == N: key rows converted from fp16 sixteen at a time;
// for each query, 16 lane-sum registers (one per key) take the q registers one at a time (each
// key's FMAs in the same order as laneSums16's) and finishSixteenDots reduces them together. The
// last rows go eight at a time with q in N / 16 registers, then one by one.
template <int N>
void dotRowsMulti16(const float* const* qs, int queries, const uint16_t* rows, int64_t count,
                    float scale, float* const* outs) {
  alignas(64) float keys[16 * N];  // (16, N)
  const __m256 vscale = _mm256_set1_ps(scale);
  int64_t i = forEachSixteenKeys<N>(rows, count, keys, [&](int64_t first) {
    for (int j = 0; j < queries; ++j) {
      const float* q = qs[j];
      __m512 acc[16];
      const __m512 q0 = _mm512_loadu_ps(q);
      for (int k = 0; k < 16; ++k) acc[k] = _mm512_mul_ps(q0, _mm512_load_ps(keys + k * N));
#pragma GCC unroll 16
      for (int r = 1; r < N / 16; ++r) {
        const __m512 qr = _mm512_loadu_ps(q + 16 * r);
        for (int k = 0; k < 16; ++k)
          acc[k] = _mm512_fmadd_ps(qr, _mm512_load_ps(keys + k * N + 16 * r), acc[k]);
      }
      finishSixteenDots(acc, scale, outs[j] + first);
    }
  });
  for (; i + 8 <= count; i += 8) {
    for (int c = 0; c < 8 * N; c += 16) _mm512_store_ps(keys + c, loadF16x16(rows + i * N + c));
    for (int j = 0; j < queries; ++j) {
      __m512 qv[N / 16];
      for (int r = 0; r < N / 16; ++r) qv[r] = _mm512_loadu_ps(qs[j] + 16 * r);
      __m256 b[8];
      for (int k = 0; k < 8; ++k) b[k] = laneSums16<N>(qv, keys + k * N);
      _mm256_storeu_ps(outs[j] + i, _mm256_mul_ps(finishEightDots(b), vscale));
    }
  }
  for (; i < count; ++i) {
    for (int c = 0; c < N; c += 16) _mm512_store_ps(keys + c, loadF16x16(rows + i * N + c));
    for (int j = 0; j < queries; ++j) {
      __m512 qv[N / 16];
      for (int r = 0; r < N / 16; ++r) qv[r] = _mm512_loadu_ps(qs[j] + 16 * r);
      outs[j][i] = finishOneDot(laneSums16<N>(qv, keys)) * scale;
    }
  }
}

// 16 lanes summed as sumLanes16 does: (i, i+8), (i, i+4), (0, 2) and (1, 3), then 0 + 1.
inline float sumLanes16(__m512 a) {
  const __m256 b = _mm256_add_ps(_mm512_castps512_ps256(a), _mm512_extractf32x8_ps(a, 1));
  const __m128 c = _mm_add_ps(_mm256_castps256_ps128(b), _mm256_extractf128_ps(b, 1));
  const __m128 d = _mm_add_ps(c, _mm_movehl_ps(c, c));
  return _mm_cvtss_f32(_mm_add_ss(d, _mm_movehdup_ps(d)));
}

double expChunksAvx512(float* x, int64_t chunks, float max) {
  const __m512 vmax = _mm512_set1_ps(max);
  double sum = 0.0;
  for (int64_t c = 0; c < chunks; ++c) {
    float* chunk = x + c * kLanes;
    const __m512 e = expPolynomial16(_mm512_sub_ps(_mm512_loadu_ps(chunk), vmax));
    _mm512_storeu_ps(chunk, e);
    sum += double(sumLanes16(e));
  }
  return sum;
}

void scaleToHalfAvx512(float* x, int64_t n, float scale) {
  const __m512 vs = _mm512_set1_ps(scale);
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m256i h =
        _mm512_cvtps_ph(_mm512_mul_ps(_mm512_loadu_ps(x + i), vs), _MM_FROUND_TO_NEAREST_INT);
    _mm512_storeu_ps(x + i, _mm512_cvtph_ps(h));
  }
  if (i < n) {  // the last n - i, masked
    const __mmask16 m = __mmask16((1u << (n - i)) - 1);
    const __m256i h = _mm512_cvtps_ph(_mm512_mul_ps(_mm512_maskz_loadu_ps(m, x + i), vs),
                                      _MM_FROUND_TO_NEAREST_INT);
    _mm512_mask_storeu_ps(x + i, m, _mm512_cvtph_ps(h));
  }
}

void (*avx2DotRowsMulti)(const float* const*, int, const uint16_t*, int64_t, int64_t, float, bool,
                         float* const*) = nullptr;

// dotRowsMulti in the 64-lane order (sumLanes64: the one-token step) for n == N, 16 keys at a
// time as dotRowsMulti16: accumulator g (of 4) of a key takes elements 64 c + 16 g + l, lane l,
// in order of c (the first an exact product, then FMAs); the 16-lane register finishSixteenDots
// reduces is (a0 + a2) + (a1 + a3), the first pairing of sumLanes64. For N == 64 each accumulator
// is one exact product of fp16 values, so a0 + a2 is one FMA onto a0 (one rounding of the exact
// sum, as the add). The last count % 16 rows go to the AVX2 kernel, which computes the same sums.
constexpr int kMaxTailQueries = 64;  // the shifted output pointers of the tail, on the stack

template <int N>
void dotRowsMulti64(const float* const* qs, int queries, const uint16_t* rows, int64_t count,
                    float scale, float* const* outs) {
  alignas(64) float keys[16 * N];  // (16, N)
  const int64_t i = forEachSixteenKeys<N>(rows, count, keys, [&](int64_t first) {
    for (int j = 0; j < queries; ++j) {
      const float* q = qs[j];
      __m512 acc[16];
      if constexpr (N == 64) {
        const __m512 q0 = _mm512_loadu_ps(q), q1 = _mm512_loadu_ps(q + 16),
                     q2 = _mm512_loadu_ps(q + 32), q3 = _mm512_loadu_ps(q + 48);
#pragma GCC unroll 16
        for (int k = 0; k < 16; ++k) {
          const float* key = keys + k * N;
          const __m512 even =
              _mm512_fmadd_ps(q2, _mm512_load_ps(key + 32), _mm512_mul_ps(q0, _mm512_load_ps(key)));
          const __m512 odd = _mm512_fmadd_ps(q3, _mm512_load_ps(key + 48),
                                             _mm512_mul_ps(q1, _mm512_load_ps(key + 16)));
          acc[k] = _mm512_add_ps(even, odd);
        }
      } else {
        for (int k = 0; k < 16; ++k) {
          const float* key = keys + k * N;
          __m512 a[4];
#pragma GCC unroll 4
          for (int g = 0; g < 4; ++g)
            a[g] = _mm512_mul_ps(_mm512_loadu_ps(q + 16 * g), _mm512_load_ps(key + 16 * g));
#pragma GCC unroll 16
          for (int r = 4; r < N / 16; ++r)
            a[r % 4] =
                _mm512_fmadd_ps(_mm512_loadu_ps(q + 16 * r), _mm512_load_ps(key + 16 * r), a[r % 4]);
          acc[k] = _mm512_add_ps(_mm512_add_ps(a[0], a[2]), _mm512_add_ps(a[1], a[3]));
        }
      }
      finishSixteenDots(acc, scale, outs[j] + first);
    }
  });
  if (i == count) return;
  float* tail[kMaxTailQueries];
  for (int j = 0; j < queries; ++j) tail[j] = outs[j] + i;
  avx2DotRowsMulti(qs, queries, rows + i * N, count - i, N, scale, true, tail);
}

void (*avx2AccumulateRowsMulti)(const float* const*, float* const*, int, const uint16_t* const*,
                                int64_t, int64_t, int64_t, int64_t) = nullptr;

void dotRowsMultiAvx512(const float* const* qs, int queries, const uint16_t* rows, int64_t count,
                        int64_t n, float scale, bool lanes64, float* const* outs) {
  if (!lanes64) {
    if (n == 64) return dotRowsMulti16<64>(qs, queries, rows, count, scale, outs);
    if (n == 128) return dotRowsMulti16<128>(qs, queries, rows, count, scale, outs);
    if (n == 256) return dotRowsMulti16<256>(qs, queries, rows, count, scale, outs);
  } else if (queries <= kMaxTailQueries) {
    if (n == 64) return dotRowsMulti64<64>(qs, queries, rows, count, scale, outs);
    if (n == 128) return dotRowsMulti64<128>(qs, queries, rows, count, scale, outs);
    if (n == 256) return dotRowsMulti64<256>(qs, queries, rows, count, scale, outs);
  }
  avx2DotRowsMulti(qs, queries, rows, count, n, scale, lanes64, outs);
}

// Up to kGroup queries' lane rows of one lane, 64 columns each (4 registers per query), while
// the batch's rows of that lane go by in order: each row's 64 floats are loaded once for the whole
// group, and each query adds weight * row with one FMA per element, as axpyF16 does. A zero
// weight leaves the query's registers as they are (the mask), as accumulateRows skips the row.
constexpr int kGroup = 4;

// kFinite: every row of the batch is finite, so a zero weight needs no mask: fma(0, v, y) is y
// for a finite v (y is never -0: it starts at +0, and a sum of multiples of 2^-48, products of
// fp16 values, is either exactly +0 or a normal float), and the mask's compare, move and
// register broadcast per query and row (twice the FMAs' count of other instructions) go away.
template <int Q, bool kFinite>
inline void accumulateLaneGroup(const float* const* w, float* const* laneRows, const float* x,
                                int64_t first, int64_t batch, int64_t step, int64_t width) {
  __m512 y[Q][4];
  for (int q = 0; q < Q; ++q)
    for (int r = 0; r < 4; ++r) y[q][r] = _mm512_loadu_ps(laneRows[q] + 16 * r);
  // x: this lane's rows, one after the other (width floats apart), from the lane's first row.
  const float* row = x;
  for (int64_t i = first; i < batch; i += step, row += width) {
    const __m512 v0 = _mm512_load_ps(row), v1 = _mm512_load_ps(row + 16),
                 v2 = _mm512_load_ps(row + 32), v3 = _mm512_load_ps(row + 48);
    for (int q = 0; q < Q; ++q) {
      const __m512 va = _mm512_set1_ps(w[q][i]);
      if constexpr (kFinite) {
        y[q][0] = _mm512_fmadd_ps(va, v0, y[q][0]);
        y[q][1] = _mm512_fmadd_ps(va, v1, y[q][1]);
        y[q][2] = _mm512_fmadd_ps(va, v2, y[q][2]);
        y[q][3] = _mm512_fmadd_ps(va, v3, y[q][3]);
      } else {
        const __mmask16 m = w[q][i] != 0.0f ? __mmask16(0xFFFF) : __mmask16(0);
        y[q][0] = _mm512_mask3_fmadd_ps(va, v0, y[q][0], m);
        y[q][1] = _mm512_mask3_fmadd_ps(va, v1, y[q][1], m);
        y[q][2] = _mm512_mask3_fmadd_ps(va, v2, y[q][2], m);
        y[q][3] = _mm512_mask3_fmadd_ps(va, v3, y[q][3], m);
      }
    }
  }
  for (int q = 0; q < Q; ++q)
    for (int r = 0; r < 4; ++r) _mm512_storeu_ps(laneRows[q] + 16 * r, y[q][r]);
}

// The value kernels' rows converted from fp16: 512 KiB per thread, allocated on first use.
constexpr int64_t kBufferFloats = 131072;
float* valueBuffer() {
  thread_local std::unique_ptr<float[], AlignedFree> storage{
      static_cast<float*>(std::aligned_alloc(64, kBufferFloats * sizeof(float)))};
  return storage.get();
}

// accumulateRowsMulti for a width that is a multiple of 64: the rows converted from fp16 a batch
// at a time (the buffer lives in L2, so that a lane row is loaded and stored once per many rows);
// then per 64 columns, group of up to 4 queries and lane, the group's lane registers stay loaded
// while the lane's rows are added in order (accumulateLaneGroup). Each lane element sees the same
// FMAs in the same order as in accumulateRows, so the bits are the same.
void accumulateRowsMultiWide(const float* const* weights, float* const* lanes, int queries,
                             const uint16_t* const* rows, int64_t count, int64_t width,
                             int64_t laneCount, int64_t firstLane) {
  float* buffer = valueBuffer();
  // A whole number of rows per lane (or fewer rows than lanes), so the lane-major slots below fit.
  const int64_t capacity = kBufferFloats / width;  // at least 32 rows (width <= 4096)
  const int64_t batchRows = capacity >= laneCount ? capacity / laneCount * laneCount : capacity;
  for (int64_t start = 0; start < count; start += batchRows) {
    const int64_t batch = std::min(batchRows, count - start);
    // Lane-major: batch row i goes to slot (i % laneCount) * rowsPerLane + i / laneCount, so that
    // the rows one lane row takes lie one after the other (laneCount rows apart they would map to
    // the same few L1 sets).
    const int64_t rowsPerLane = (batch + laneCount - 1) / laneCount;
    __mmask16 nonFinite = 0;
    for (int64_t i = 0; i < batch; ++i) {
      float* slot = buffer + (i % laneCount * rowsPerLane + i / laneCount) * width;
      for (int64_t c = 0; c < width; c += 16)
        convertF16x16(rows[start + i] + c, slot + c, nonFinite);
    }
    const bool finite = nonFinite == 0;
    const int64_t firstLaneOfBatch = (firstLane + start) % laneCount;
    for (int64_t c = 0; c < width; c += 64)
      for (int g = 0; g < queries; g += kGroup) {
        const int q = std::min(kGroup, queries - g);
        const float* w[kGroup];
        for (int j = 0; j < q; ++j) w[j] = weights[g + j] + start;
        // Rows k, k + laneCount, ... of the batch share one lane row.
        for (int64_t k = 0; k < std::min(batch, laneCount); ++k) {
          float* laneRows[kGroup];
          const int64_t lane = (firstLaneOfBatch + k) % laneCount;
          for (int j = 0; j < q; ++j) laneRows[j] = lanes[g + j] + lane * width + c;
          const float* x = buffer + k * rowsPerLane * width + c;
          auto group = [&]<bool kFinite>() {
            auto run = [&]<int Q>() {
              accumulateLaneGroup<Q, kFinite>(w, laneRows, x, k, batch, laneCount, width);
            };
            switch (q) {
              case 4: return run.template operator()<4>();
              case 3: return run.template operator()<3>();
              case 2: return run.template operator()<2>();
              default: return run.template operator()<1>();
            }
          };
          if (finite)
            group.template operator()<true>();
          else
            group.template operator()<false>();
        }
      }
  }
}

// sumValueLanes64's sums over the converted rows (kFinite: as accumulateLaneGroup's).
template <bool kFinite>
void sumValueLanes64Rows(const float* const* weights, float* const* outs, int queries,
                         const float* buffer, int64_t rowsPerLane, int64_t count, int64_t width,
                         int64_t firstLane) {
  constexpr int64_t kLaneCount = 4 * kLanes;
  alignas(64) float pairs[kLanes][64];  // (l, 64 columns): the first pairing of each column
  for (int64_t c = 0; c < width; c += 64)
    for (int j = 0; j < queries; ++j) {
      const float* w = weights[j];
      for (int l = 0; l < kLanes; ++l) {
        __m512 lane[4][4];  // lanes l + 16 a, 4 registers of 16 columns each
#pragma GCC unroll 4
        for (int a = 0; a < 4; ++a) {
          for (int r = 0; r < 4; ++r) lane[a][r] = _mm512_setzero_ps();
          // The batch rows of lane l + 16 a: k, k + 64, ... with k its place after firstLane.
          const int64_t k = ((l + 16 * a - firstLane) % kLaneCount + kLaneCount) % kLaneCount;
          const float* row = buffer + k * rowsPerLane * width + c;
          for (int64_t i = k; i < count; i += kLaneCount, row += width) {
            const __m512 va = _mm512_set1_ps(w[i]);
            if constexpr (kFinite) {
#pragma GCC unroll 4
              for (int r = 0; r < 4; ++r)
                lane[a][r] = _mm512_fmadd_ps(va, _mm512_load_ps(row + 16 * r), lane[a][r]);
            } else {
              const __mmask16 m = w[i] != 0.0f ? __mmask16(0xFFFF) : __mmask16(0);
#pragma GCC unroll 4
              for (int r = 0; r < 4; ++r)
                lane[a][r] =
                    _mm512_mask3_fmadd_ps(va, _mm512_load_ps(row + 16 * r), lane[a][r], m);
            }
          }
        }
#pragma GCC unroll 4
        for (int r = 0; r < 4; ++r)
          _mm512_store_ps(pairs[l] + 16 * r,
                          _mm512_add_ps(_mm512_add_ps(lane[0][r], lane[2][r]),
                                        _mm512_add_ps(lane[1][r], lane[3][r])));
      }
#pragma GCC unroll 4
      for (int r = 0; r < 4; ++r) {
        __m512 v[8];
        for (int l = 0; l < 8; ++l)
          v[l] = _mm512_add_ps(_mm512_load_ps(pairs[l] + 16 * r),
                               _mm512_load_ps(pairs[l + 8] + 16 * r));
        for (int half = 4; half >= 1; half /= 2)
          for (int l = 0; l < half; ++l) v[l] = _mm512_add_ps(v[l], v[l + half]);
        _mm512_storeu_ps(outs[j] + c + 16 * r, v[0]);
      }
    }
}

// sumValueLanes64 for a width that is a multiple of 64 and rows that fit the buffer at once. The
// rows are converted lane-major, as accumulateRowsMultiWide does (a lane's rows one after the
// other). Then per 64 columns and query, for each l < 16 the lanes l, l + 16, l + 32 and l + 48
// (16 registers) take their rows in order from zero with the FMAs of
// accumulateLaneGroup, and sumLanes64's first pairing (l + (l + 32)) + ((l + 16) + (l + 48))
// goes to a 16-row table, which sumLanes16's pairwise steps then reduce column by column. Every
// lane element and every sum sees the operations of the lane way, in its order.
bool sumValueLanes64Avx512(const float* const* weights, float* const* outs, int queries,
                           const uint16_t* const* rows, int64_t count, int64_t width,
                           int64_t firstLane) {
  constexpr int64_t kLaneCount = 4 * kLanes;
  if (width % 64 != 0 || count > kValueLanes64MaxRows || count * width > kBufferFloats)
    return false;
  float* buffer = valueBuffer();
  const int64_t rowsPerLane = (count + kLaneCount - 1) / kLaneCount;
  __mmask16 nonFinite = 0;
  for (int64_t i = 0; i < count; ++i) {
    float* slot = buffer + (i % kLaneCount * rowsPerLane + i / kLaneCount) * width;
    for (int64_t c = 0; c < width; c += 16) convertF16x16(rows[i] + c, slot + c, nonFinite);
  }
  auto sums = [&]<bool kFinite>() {
    sumValueLanes64Rows<kFinite>(weights, outs, queries, buffer, rowsPerLane, count, width,
                                 firstLane);
  };
  if (nonFinite == 0)
    sums.template operator()<true>();
  else
    sums.template operator()<false>();
  return true;
}

void accumulateRowsMultiAvx512(const float* const* weights, float* const* lanes, int queries,
                               const uint16_t* const* rows, int64_t count, int64_t width,
                               int64_t laneCount, int64_t firstLane) {
  if (width % 64 == 0 && width <= 4096)
    return accumulateRowsMultiWide(weights, lanes, queries, rows, count, width, laneCount,
                                   firstLane);
  avx2AccumulateRowsMulti(weights, lanes, queries, rows, count, width, laneCount, firstLane);
}

}  // namespace

const VectorKernels& avx512VectorKernels() {
  static const VectorKernels kernels = [] {
    VectorKernels k = avx2VectorKernels();
    avx2DotRowsMulti = k.dotRowsMulti;
    avx2AccumulateRowsMulti = k.accumulateRowsMulti;
    k.dotRowsMulti = dotRowsMultiAvx512;
    k.accumulateRowsMulti = accumulateRowsMultiAvx512;
    k.sumValueLanes64 = sumValueLanes64Avx512;
    k.expChunks = expChunksAvx512;
    k.scaleToHalf = scaleToHalfAvx512;
    return k;
  }();
  return kernels;
}

}  // namespace ember::cpu::ops
