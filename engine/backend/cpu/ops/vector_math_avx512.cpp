// Compiled with AVX-512 F/BW/VL/DQ + FMA + F16C (engine/CMakeLists.txt's *_avx512.cpp rule);
// called only after a CPU check. The AVX2 table with the two kernels that dominate a long
// prompt's attention on 512-bit vectors: dotRowsMulti in the 16-lane order (the several-token
// step) and accumulateRowsMulti. One register holds the 16 lanes that the AVX2 kernels keep in
// two, and every lane sees the same operations in the same order, so the results are the AVX2
// (and scalar) kernels' bit for bit (reference_order.h).
#include <immintrin.h>

// GCC 12 warns that the intrinsics' own undefined pass-through operands may be used
// uninitialized (a false positive of its headers at -O3).
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

#include <algorithm>
#include <cstdlib>
#include <memory>

#include "backend/cpu/ops/reference_order.h"
#include "backend/cpu/ops/vector_math.h"

namespace ember::cpu::ops {
namespace {

struct AlignedFree {
  void operator()(float* p) const { std::free(p); }
};

inline __m512 loadF16x16(const uint16_t* p) {
  return _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
}

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

// dotRowsMulti in the 16-lane order for n == N: key rows converted from fp16 eight at a time,
// each query's q in N / 16 registers across them.
template <int N>
void dotRowsMulti16(const float* const* qs, int queries, const uint16_t* rows, int64_t count,
                    float scale, float* const* outs) {
  alignas(64) float keys[8 * N];  // (8, N)
  const __m256 vscale = _mm256_set1_ps(scale);
  int64_t i = 0;
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

void (*avx2DotRowsMulti)(const float* const*, int, const uint16_t*, int64_t, int64_t, float, bool,
                         float* const*) = nullptr;
void (*avx2AccumulateRowsMulti)(const float* const*, float* const*, int, const uint16_t* const*,
                                int64_t, int64_t, int64_t, int64_t) = nullptr;

void dotRowsMultiAvx512(const float* const* qs, int queries, const uint16_t* rows, int64_t count,
                        int64_t n, float scale, bool lanes64, float* const* outs) {
  if (!lanes64) {
    if (n == 64) return dotRowsMulti16<64>(qs, queries, rows, count, scale, outs);
    if (n == 128) return dotRowsMulti16<128>(qs, queries, rows, count, scale, outs);
    if (n == 256) return dotRowsMulti16<256>(qs, queries, rows, count, scale, outs);
  }
  avx2DotRowsMulti(qs, queries, rows, count, n, scale, lanes64, outs);
}

// accumulateRowsMulti for a width that is a multiple of 128 (as the AVX2 kernel for 64): the rows
// converted from fp16 a batch at a time; for each query, lane row and 128 columns of it, the 8
// registers stay loaded while the batch's rows of that lane are added in order, one FMA per
// element as axpyF16 does. The batch is large (the buffer lives in L2), so that a lane row is
// loaded and stored once per many rows: at width 256 and 16 lanes, 32 rows per load.
void accumulateRowsMultiWide(const float* const* weights, float* const* lanes, int queries,
                             const uint16_t* const* rows, int64_t count, int64_t width,
                             int64_t laneCount, int64_t firstLane) {
  constexpr int64_t kBufferFloats = 131072;  // 512 KiB per thread
  thread_local std::unique_ptr<float[], AlignedFree> storage{
      static_cast<float*>(std::aligned_alloc(64, kBufferFloats * sizeof(float)))};
  float* buffer = storage.get();
  const int64_t batchRows = std::max<int64_t>(1, kBufferFloats / width);
  for (int64_t start = 0; start < count; start += batchRows) {
    const int64_t batch = std::min(batchRows, count - start);
    for (int64_t i = 0; i < batch; ++i)
      for (int64_t c = 0; c < width; c += 16)
        _mm512_store_ps(buffer + i * width + c, loadF16x16(rows[start + i] + c));
    const int64_t firstLaneOfBatch = (firstLane + start) % laneCount;
    for (int j = 0; j < queries; ++j) {
      const float* w = weights[j] + start;
      for (int64_t k = 0; k < std::min(batch, laneCount); ++k) {
        float* laneRow = lanes[j] + (firstLaneOfBatch + k) % laneCount * width;
        for (int64_t c = 0; c < width; c += 128) {
          __m512 y[8];
          for (int r = 0; r < 8; ++r) y[r] = _mm512_loadu_ps(laneRow + c + 16 * r);
          for (int64_t i = k; i < batch; i += laneCount) {
            if (w[i] == 0.0f) continue;  // as accumulateRows: a zero product changes nothing
            const __m512 va = _mm512_set1_ps(w[i]);
            const float* x = buffer + i * width + c;
            for (int r = 0; r < 8; ++r) y[r] = _mm512_fmadd_ps(va, _mm512_load_ps(x + 16 * r), y[r]);
          }
          for (int r = 0; r < 8; ++r) _mm512_storeu_ps(laneRow + c + 16 * r, y[r]);
        }
      }
    }
  }
}

void accumulateRowsMultiAvx512(const float* const* weights, float* const* lanes, int queries,
                               const uint16_t* const* rows, int64_t count, int64_t width,
                               int64_t laneCount, int64_t firstLane) {
  if (width % 128 == 0 && width <= 4096)
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
    return k;
  }();
  return kernels;
}

}  // namespace ember::cpu::ops
