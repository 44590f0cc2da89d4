// Compiled with -mavx2 -mfma -mf16c (see engine/CMakeLists.txt); called only after a CPU check.
// Each kernel performs the same float operations, in the same order, as its scalar twin in
// vector_math.cpp (see reference_order.h): 16 lanes are held as two 8-float registers.
#include <immintrin.h>

#include <algorithm>

#include "backend/cpu/ops/half.h"
#include "backend/cpu/ops/reference_order.h"
#include "backend/cpu/ops/vector_math.h"
#include "backend/cpu/ops/vector_math_rows.h"

namespace ember::cpu::ops {
namespace {

__m256 loadF16(const uint16_t* p) {
  return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
}

// The 16 lanes lo (0..7) and hi (8..15) summed as sumLanes16 does.
float sumLanes(__m256 lo, __m256 hi) {
  const __m256 b = _mm256_add_ps(lo, hi);                                               // (i, i+8)
  const __m128 c = _mm_add_ps(_mm256_castps256_ps128(b), _mm256_extractf128_ps(b, 1));  // (i, i+4)
  const __m128 d = _mm_add_ps(c, _mm_movehl_ps(c, c));      // (0, 2), (1, 3)
  return _mm_cvtss_f32(_mm_add_ss(d, _mm_movehdup_ps(d)));  // 0 + 1
}

float dotF16Avx2(const float* a, const uint16_t* b, int64_t n) {
  __m256 lo = _mm256_setzero_ps(), hi = _mm256_setzero_ps();
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    lo = _mm256_fmadd_ps(_mm256_loadu_ps(a + i), loadF16(b + i), lo);
    hi = _mm256_fmadd_ps(_mm256_loadu_ps(a + i + 8), loadF16(b + i + 8), hi);
  }
  float sum = sumLanes(lo, hi);
  for (; i < n; ++i) sum += a[i] * halfToFloat(b[i]);
  return sum;
}

float dotF16Lanes64Avx2(const float* a, const uint16_t* b, int64_t n) {
  __m256 acc[8];  // group g: lanes 0..7 in acc[2g], 8..15 in acc[2g + 1]
  for (__m256& v : acc) v = _mm256_setzero_ps();
  int64_t i = 0;
  for (; i + 4 * kLanes <= n; i += 4 * kLanes)
    for (int r = 0; r < 8; ++r)
      acc[r] = _mm256_fmadd_ps(_mm256_loadu_ps(a + i + 8 * r), loadF16(b + i + 8 * r), acc[r]);
  // (g0 + g2) + (g1 + g3), lane-wise, then the 16 lanes.
  const __m256 lo = _mm256_add_ps(_mm256_add_ps(acc[0], acc[4]), _mm256_add_ps(acc[2], acc[6]));
  const __m256 hi = _mm256_add_ps(_mm256_add_ps(acc[1], acc[5]), _mm256_add_ps(acc[3], acc[7]));
  double sum = sumLanes(lo, hi);
  for (; i < n; ++i) sum += double(a[i] * halfToFloat(b[i]));
  return float(sum);
}

void axpyF16Avx2(float alpha, const uint16_t* x, float* y, int64_t n) {
  const __m256 va = _mm256_set1_ps(alpha);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    _mm256_storeu_ps(y + i, _mm256_fmadd_ps(va, loadF16(x + i), _mm256_loadu_ps(y + i)));
  for (; i < n; ++i) y[i] += alpha * halfToFloat(x[i]);
}

void toF16Avx2(const float* x, uint16_t* y, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    _mm_storeu_si128(reinterpret_cast<__m128i*>(y + i),
                     _mm256_cvtps_ph(_mm256_loadu_ps(x + i), _MM_FROUND_TO_NEAREST_INT));
  for (; i < n; ++i) y[i] = floatToHalf(x[i]);
}

// expfPolynomial on 8 floats. 2^n is applied in two exact halves so that every n in
// [-192, 192] works without overflowing the exponent field.
__m256 expPolynomial8(__m256 x) {
  const __m256 shift = _mm256_set1_ps(0x1.8p23f);
  const __m256 z = _mm256_fmadd_ps(x, _mm256_set1_ps(0x1.715476p+0f), shift);
  const __m256 n = _mm256_sub_ps(z, shift);
  const __m256 b = _mm256_fnmadd_ps(n, _mm256_set1_ps(0x1.7f7d1cp-20f),
                                    _mm256_fnmadd_ps(n, _mm256_set1_ps(0x1.62e4p-1f), x));
  const __m256 u = _mm256_mul_ps(b, b);
  const __m256 j = _mm256_fmadd_ps(
      _mm256_fmadd_ps(
          _mm256_fmadd_ps(_mm256_set1_ps(0x1.0e4020p-7f), b, _mm256_set1_ps(0x1.573e2ep-5f)), u,
          _mm256_fmadd_ps(_mm256_set1_ps(0x1.555e66p-3f), b, _mm256_set1_ps(0x1.fffdb6p-2f))),
      u, _mm256_fmadd_ps(_mm256_set1_ps(0x1.ffffecp-1f), b, _mm256_set1_ps(1.0f)));
  // Clamp n to [-192, 192] (lanes beyond are replaced below), split it into two halves whose
  // powers of two are normal floats, and scale j by each (exact unless the result is subnormal).
  const __m256 limit = _mm256_set1_ps(192.0f);
  const __m256i ni = _mm256_cvtps_epi32(_mm256_max_ps(_mm256_min_ps(n, limit), -limit));
  const __m256i n1 = _mm256_srai_epi32(ni, 1);
  const __m256i n2 = _mm256_sub_epi32(ni, n1);
  const __m256i bias = _mm256_set1_epi32(127);
  const __m256 p1 = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(n1, bias), 23));
  const __m256 p2 = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(n2, bias), 23));
  __m256 result = _mm256_mul_ps(_mm256_mul_ps(j, p1), p2);
  const __m256 absN = _mm256_andnot_ps(_mm256_set1_ps(-0.0f), n);
  const __m256 outside = _mm256_cmp_ps(absN, limit, _CMP_GT_OQ);
  if (_mm256_movemask_ps(outside) != 0) {
    const __m256 nonPositive = _mm256_cmp_ps(n, _mm256_setzero_ps(), _CMP_LE_OQ);
    const __m256 alternative =
        _mm256_blendv_ps(_mm256_set1_ps(__builtin_inff()), _mm256_setzero_ps(), nonPositive);
    result = _mm256_blendv_ps(result, alternative, outside);
  }
  return result;
}

double expChunksAvx2(float* x, int64_t chunks, float max) {
  const __m256 vmax = _mm256_set1_ps(max);
  double sum = 0.0;
  for (int64_t c = 0; c < chunks; ++c) {
    float* chunk = x + c * kLanes;
    const __m256 lo = expPolynomial8(_mm256_sub_ps(_mm256_loadu_ps(chunk), vmax));
    const __m256 hi = expPolynomial8(_mm256_sub_ps(_mm256_loadu_ps(chunk + 8), vmax));
    _mm256_storeu_ps(chunk, lo);
    _mm256_storeu_ps(chunk + 8, hi);
    sum += double(sumLanes(lo, hi));
  }
  return sum;
}

void scaleToHalfAvx2(float* x, int64_t n, float scale) {
  const __m256 vs = _mm256_set1_ps(scale);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m128i h =
        _mm256_cvtps_ph(_mm256_mul_ps(_mm256_loadu_ps(x + i), vs), _MM_FROUND_TO_NEAREST_INT);
    _mm256_storeu_ps(x + i, _mm256_cvtph_ps(h));
  }
  for (; i < n; ++i) x[i] = roundToHalf(x[i] * scale);
}

void siluGluAvx2(const float* gate, const float* up, float* out, int64_t n) {
  const __m256 one = _mm256_set1_ps(1.0f);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 g = _mm256_loadu_ps(gate + i);
    const __m256 e = expPolynomial8(_mm256_sub_ps(_mm256_setzero_ps(), g));
    const __m256 silu = _mm256_div_ps(g, _mm256_add_ps(one, e));
    _mm256_storeu_ps(out + i, _mm256_mul_ps(silu, _mm256_loadu_ps(up + i)));
  }
  for (; i < n; ++i) out[i] = gate[i] / (1.0f + expfPolynomial(0.0f - gate[i])) * up[i];
}

// The table lookup 8 at a time: vcvtps2ph rounds as floatToHalf does, a 32-bit gather at
// 2-byte steps reads each entry (and the next one, hence the table's padding), vcvtph2ps is
// exact; the products and the two clamps are the scalar version's.
void geluTableGluAvx2(const uint16_t* table, const float* gate, const float* up, float* out,
                      int64_t n) {
  const __m256 low = _mm256_set1_ps(-10.0f), high = _mm256_set1_ps(10.0f);
  const __m256i entry = _mm256_set1_epi32(0xffff);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 g = _mm256_loadu_ps(gate + i);
    const __m256 u = _mm256_loadu_ps(up + i);
    const __m256i index = _mm256_cvtepu16_epi32(_mm256_cvtps_ph(g, _MM_FROUND_TO_NEAREST_INT));
    const __m256i raw = _mm256_and_si256(
        _mm256_i32gather_epi32(reinterpret_cast<const int*>(table), index, 2), entry);
    const __m128i halves =
        _mm_packus_epi32(_mm256_castsi256_si128(raw), _mm256_extracti128_si256(raw, 1));
    __m256 y = _mm256_mul_ps(_mm256_cvtph_ps(halves), u);
    y = _mm256_blendv_ps(y, _mm256_mul_ps(g, u), _mm256_cmp_ps(g, high, _CMP_GE_OQ));
    y = _mm256_blendv_ps(y, _mm256_setzero_ps(), _mm256_cmp_ps(g, low, _CMP_LE_OQ));
    _mm256_storeu_ps(out + i, y);
  }
  for (; i < n; ++i) {
    const float g = gate[i];
    if (g <= -10.0f)
      out[i] = 0.0f;
    else if (g >= 10.0f)
      out[i] = g * up[i];
    else
      out[i] = halfToFloat(table[floatToHalf(g)]) * up[i];
  }
}

using rows::accumulateRowsWith;
using rows::dotRowsWith;

// One dot product of dotRows for n == N (a multiple of 64): qAt(r) and keyAt(r) give the r-th 8
// floats of the query and of the key row. The sums are the same as dotF16Avx2 / dotF16Lanes64Avx2
// (each product is exact, so a multiply equals an FMA into a zero accumulator).
template <int N, bool Lanes64, class Q, class K>
inline float dotFixed(Q qAt, K keyAt) {
  constexpr int kRegs = N / 8;
  __m256 acc[8];  // 64-lane order: acc[r % 8] takes register r; 16-lane: acc[r % 2]
  for (int r = 0; r < 8; ++r) acc[r] = _mm256_mul_ps(qAt(r), keyAt(r));
  if constexpr (Lanes64) {
    for (int r = 8; r < kRegs; ++r) acc[r % 8] = _mm256_fmadd_ps(qAt(r), keyAt(r), acc[r % 8]);
    const __m256 lo = _mm256_add_ps(_mm256_add_ps(acc[0], acc[4]), _mm256_add_ps(acc[2], acc[6]));
    const __m256 hi = _mm256_add_ps(_mm256_add_ps(acc[1], acc[5]), _mm256_add_ps(acc[3], acc[7]));
    return sumLanes(lo, hi);
  } else {
    __m256 lo = acc[0], hi = acc[1];
    for (int r = 2; r < 8; r += 2) {
      lo = _mm256_add_ps(lo, acc[r]);
      hi = _mm256_add_ps(hi, acc[r + 1]);
    }
    for (int r = 8; r < kRegs; r += 2) {
      lo = _mm256_fmadd_ps(qAt(r), keyAt(r), lo);
      hi = _mm256_fmadd_ps(qAt(r + 1), keyAt(r + 1), hi);
    }
    return sumLanes(lo, hi);
  }
}

// dotRows for n == N: q stays in registers across the rows.
template <int N, bool Lanes64>
void dotRowsFixed(const float* q, const uint16_t* rows, int64_t count, float scale, float* out) {
  __m256 qv[N / 8];
  for (int r = 0; r < N / 8; ++r) qv[r] = _mm256_loadu_ps(q + 8 * r);
  for (int64_t i = 0; i < count; ++i) {
    const uint16_t* row = rows + i * N;
    out[i] = dotFixed<N, Lanes64>([&](int r) { return qv[r]; },
                                  [&](int r) { return loadF16(row + 8 * r); }) *
             scale;
  }
}

void dotRowsAvx2(const float* q, const uint16_t* rows, int64_t count, int64_t n, float scale,
                 bool lanes64, float* out) {
  if (n == 64)
    return lanes64 ? dotRowsFixed<64, true>(q, rows, count, scale, out)
                   : dotRowsFixed<64, false>(q, rows, count, scale, out);
  if (n == 128)
    return lanes64 ? dotRowsFixed<128, true>(q, rows, count, scale, out)
                   : dotRowsFixed<128, false>(q, rows, count, scale, out);
  dotRowsWith<dotF16Avx2, dotF16Lanes64Avx2>(q, rows, count, n, scale, lanes64, out);
}

// The lane sums (i, i+8) of one dot product of dotFixed<N, Lanes64>, before its last three
// pairwise steps: the same operations, with each exact product's add fused into an FMA (q and the
// key are fp16 values, so q*k is exact and fma(q, k, s) rounds exactly as s + q*k does).
template <int N, bool Lanes64, class Q, class K>
inline __m256 laneSumsFixed(Q qAt, K keyAt) {
  constexpr int kRegs = N / 8;
  if constexpr (Lanes64 && N == 64) {  // each accumulator holds one product
    // acc[r] + acc[r + 4] for register r: acc[r] is q_r k_r
    const auto pair = [&](int r) {
      return _mm256_fmadd_ps(qAt(r + 4), keyAt(r + 4), _mm256_mul_ps(qAt(r), keyAt(r)));
    };
    const __m256 lo = _mm256_add_ps(pair(0), pair(2));
    const __m256 hi = _mm256_add_ps(pair(1), pair(3));
    return _mm256_add_ps(lo, hi);
  } else if constexpr (Lanes64) {
    __m256 acc[8];
    for (int r = 0; r < 8; ++r) acc[r] = _mm256_mul_ps(qAt(r), keyAt(r));
    for (int r = 8; r < kRegs; ++r) acc[r % 8] = _mm256_fmadd_ps(qAt(r), keyAt(r), acc[r % 8]);
    const __m256 lo = _mm256_add_ps(_mm256_add_ps(acc[0], acc[4]), _mm256_add_ps(acc[2], acc[6]));
    const __m256 hi = _mm256_add_ps(_mm256_add_ps(acc[1], acc[5]), _mm256_add_ps(acc[3], acc[7]));
    return _mm256_add_ps(lo, hi);
  } else {  // lane l: ((q0 k0 + q2 k2) + q4 k4) + ..., in register order
    __m256 lo = _mm256_mul_ps(qAt(0), keyAt(0)), hi = _mm256_mul_ps(qAt(1), keyAt(1));
    for (int r = 2; r < kRegs; r += 2) {
      lo = _mm256_fmadd_ps(qAt(r), keyAt(r), lo);
      hi = _mm256_fmadd_ps(qAt(r + 1), keyAt(r + 1), hi);
    }
    return _mm256_add_ps(lo, hi);
  }
}

// The 8 dot products whose (i, i+8) lane sums are b[0..7], each finished as sumLanes does
// ((i, i+4), then (0, 2) and (1, 3), then 0 + 1), through a transpose instead of one horizontal
// sum per dot: every sum pairs the same two values.
inline __m256 finishEightDots(const __m256* b) {
  // (i, i+4): dot d's four sums in half d % 2 of s[d / 2].
  __m256 s[4];
  for (int k = 0; k < 4; ++k)
    s[k] = _mm256_add_ps(_mm256_permute2f128_ps(b[2 * k], b[2 * k + 1], 0x20),
                         _mm256_permute2f128_ps(b[2 * k], b[2 * k + 1], 0x31));
  // (0, 2) and (1, 3): w[k] holds, per half h, dots 4k + h and 4k + h + 2 as (0+2, 1+3) pairs.
  __m256 w[2];
  for (int k = 0; k < 2; ++k)
    w[k] = _mm256_add_ps(_mm256_shuffle_ps(s[2 * k], s[2 * k + 1], _MM_SHUFFLE(1, 0, 1, 0)),
                         _mm256_shuffle_ps(s[2 * k], s[2 * k + 1], _MM_SHUFFLE(3, 2, 3, 2)));
  // 0 + 1: dots (0, 2, 4, 6 | 1, 3, 5, 7), then back into order.
  const __m256 r = _mm256_add_ps(_mm256_shuffle_ps(w[0], w[1], _MM_SHUFFLE(2, 0, 2, 0)),
                                 _mm256_shuffle_ps(w[0], w[1], _MM_SHUFFLE(3, 1, 3, 1)));
  return _mm256_permutevar8x32_ps(r, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
}

// dotRowsMulti for n == N: the key rows are converted from fp16 eight at a time into a float
// buffer, then each query takes its dot products with the eight (q in registers) and finishes them
// together (finishEightDots); the remaining rows as dotRowsFixed computes them.
template <int N, bool Lanes64>
void dotRowsMultiFixed(const float* const* qs, int queries, const uint16_t* rows, int64_t count,
                       float scale, float* const* outs) {
  alignas(32) float keys[8 * N];  // (8, N)
  const __m256 vscale = _mm256_set1_ps(scale);
  int64_t i = 0;
  for (; i + 8 <= count; i += 8) {
    for (int c = 0; c < 8 * N; c += 8) _mm256_store_ps(keys + c, loadF16(rows + i * N + c));
    for (int j = 0; j < queries; ++j) {
      const float* q = qs[j];
      __m256 qv[N / 8];
      for (int r = 0; r < N / 8; ++r) qv[r] = _mm256_loadu_ps(q + 8 * r);
      __m256 b[8];
      for (int k = 0; k < 8; ++k)
        b[k] = laneSumsFixed<N, Lanes64>(
            [&](int r) { return qv[r]; },
            [&](int r) { return _mm256_load_ps(keys + k * N + 8 * r); });
      _mm256_storeu_ps(outs[j] + i, _mm256_mul_ps(finishEightDots(b), vscale));
    }
  }
  for (; i < count; ++i) {
    __m256 key[N / 8];
    for (int r = 0; r < N / 8; ++r) key[r] = loadF16(rows + i * N + 8 * r);
    for (int j = 0; j < queries; ++j) {
      const float* q = qs[j];
      outs[j][i] = dotFixed<N, Lanes64>([&](int r) { return _mm256_loadu_ps(q + 8 * r); },
                                        [&](int r) { return key[r]; }) *
                   scale;
    }
  }
}

void dotRowsMultiAvx2(const float* const* qs, int queries, const uint16_t* rows, int64_t count,
                      int64_t n, float scale, bool lanes64, float* const* outs) {
  if (n == 64)
    return lanes64 ? dotRowsMultiFixed<64, true>(qs, queries, rows, count, scale, outs)
                   : dotRowsMultiFixed<64, false>(qs, queries, rows, count, scale, outs);
  if (n == 128)
    return lanes64 ? dotRowsMultiFixed<128, true>(qs, queries, rows, count, scale, outs)
                   : dotRowsMultiFixed<128, false>(qs, queries, rows, count, scale, outs);
  if (n == 256)
    return lanes64 ? dotRowsMultiFixed<256, true>(qs, queries, rows, count, scale, outs)
                   : dotRowsMultiFixed<256, false>(qs, queries, rows, count, scale, outs);
  for (int j = 0; j < queries; ++j) dotRowsAvx2(qs[j], rows, count, n, scale, lanes64, outs[j]);
}

// accumulateRowsMulti for a width that is a multiple of 64. The rows are converted from fp16 into a
// float buffer a batch at a time; then for each query, each lane row and each 64 columns of it, the
// lane's 8 registers stay loaded while the batch's rows of that lane are added in order
// (axpyF16Avx2's FMA per element), instead of a load and a store per row.
void accumulateRowsMultiWide(const float* const* weights, float* const* lanes, int queries,
                             const uint16_t* const* rows, int64_t count, int64_t width,
                             int64_t laneCount, int64_t firstLane) {
  constexpr int64_t kBufferFloats = 8192;  // 32 KiB: stays in L1 with the lanes
  alignas(32) float buffer[kBufferFloats];
  const int64_t batchRows = std::max<int64_t>(1, kBufferFloats / width);
  for (int64_t start = 0; start < count; start += batchRows) {
    const int64_t batch = std::min(batchRows, count - start);
    for (int64_t i = 0; i < batch; ++i)
      for (int64_t c = 0; c < width; c += 8)
        _mm256_store_ps(buffer + i * width + c, loadF16(rows[start + i] + c));
    const int64_t firstLaneOfBatch = (firstLane + start) % laneCount;
    for (int j = 0; j < queries; ++j) {
      const float* w = weights[j] + start;
      // Rows k, k + laneCount, ... of the batch share one lane row.
      for (int64_t k = 0; k < std::min(batch, laneCount); ++k) {
        float* laneRow = lanes[j] + (firstLaneOfBatch + k) % laneCount * width;
        for (int64_t c = 0; c < width; c += 64) {
          __m256 y[8];
          for (int r = 0; r < 8; ++r) y[r] = _mm256_loadu_ps(laneRow + c + 8 * r);
          for (int64_t i = k; i < batch; i += laneCount) {
            if (w[i] == 0.0f) continue;  // as accumulateRows: a zero product changes nothing
            const __m256 va = _mm256_set1_ps(w[i]);
            const float* x = buffer + i * width + c;
            for (int r = 0; r < 8; ++r) y[r] = _mm256_fmadd_ps(va, _mm256_load_ps(x + 8 * r), y[r]);
          }
          for (int r = 0; r < 8; ++r) _mm256_storeu_ps(laneRow + c + 8 * r, y[r]);
        }
      }
    }
  }
}

void accumulateRowsMultiAvx2(const float* const* weights, float* const* lanes, int queries,
                             const uint16_t* const* rows, int64_t count, int64_t width,
                             int64_t laneCount, int64_t firstLane) {
  if (width % 64 == 0 && width <= 2048)
    return accumulateRowsMultiWide(weights, lanes, queries, rows, count, width, laneCount,
                                   firstLane);
  for (int j = 0; j < queries; ++j) {
    int64_t lane = firstLane % laneCount;
    for (int64_t i = 0; i < count; ++i) {
      if (weights[j][i] != 0.0f)
        axpyF16Avx2(weights[j][i], rows[i], lanes[j] + lane * width, width);
      if (++lane == laneCount) lane = 0;
    }
  }
}

// max_ps(x, m) keeps m where x is NaN, as std::max(m, x) does, so NaNs are skipped here too; the
// lanes then hold maxima of non-NaN values, which any order combines to the same float (a +0 / -0
// tie may come out either way; every later use, x - max, treats the two alike).
float maxValueAvx2(const float* x, int64_t n, float start) {
  __m256 m0 = _mm256_set1_ps(start), m1 = m0;
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    m0 = _mm256_max_ps(_mm256_loadu_ps(x + i), m0);
    m1 = _mm256_max_ps(_mm256_loadu_ps(x + i + 8), m1);
  }
  alignas(32) float lanes[8];
  _mm256_store_ps(lanes, _mm256_max_ps(m1, m0));
  for (float v : lanes) start = std::max(start, v);
  for (; i < n; ++i) start = std::max(start, x[i]);
  return start;
}

}  // namespace

const VectorKernels& avx2VectorKernels() {
  static const VectorKernels kernels{dotF16Avx2,
                                     dotF16Lanes64Avx2,
                                     axpyF16Avx2,
                                     toF16Avx2,
                                     expChunksAvx2,
                                     scaleToHalfAvx2,
                                     siluGluAvx2,
                                     dotRowsAvx2,
                                     accumulateRowsWith<axpyF16Avx2>,
                                     dotRowsMultiAvx2,
                                     accumulateRowsMultiAvx2,
                                     maxValueAvx2,
                                     geluTableGluAvx2};
  return kernels;
}

}  // namespace ember::cpu::ops
