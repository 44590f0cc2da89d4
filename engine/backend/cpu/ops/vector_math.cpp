#include "backend/cpu/ops/vector_math.h"

#include <algorithm>

#include "backend/cpu/ops/half.h"
#include "backend/cpu/ops/reference_order.h"
#include "backend/cpu/ops/vector_math_rows.h"

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

namespace ember::cpu::ops {
namespace {

float dotF16Scalar(const float* a, const uint16_t* b, int64_t n) {
  float lanes[kLanes] = {};
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes)
    for (int l = 0; l < kLanes; ++l) lanes[l] += a[i + l] * halfToFloat(b[i + l]);
  float sum = sumLanes16(lanes);
  for (; i < n; ++i) sum += a[i] * halfToFloat(b[i]);
  return sum;
}

float dotF16Lanes64Scalar(const float* a, const uint16_t* b, int64_t n) {
  float lanes[4 * kLanes] = {};
  int64_t i = 0;
  for (; i + 4 * kLanes <= n; i += 4 * kLanes)
    for (int l = 0; l < 4 * kLanes; ++l) lanes[l] += a[i + l] * halfToFloat(b[i + l]);
  double sum = sumLanes64(lanes);
  for (; i < n; ++i) sum += double(a[i] * halfToFloat(b[i]));
  return float(sum);
}

void axpyF16Scalar(float alpha, const uint16_t* x, float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] += alpha * halfToFloat(x[i]);
}

void toF16Scalar(const float* x, uint16_t* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = floatToHalf(x[i]);
}

double expChunksScalar(float* x, int64_t chunks, float max) {
  double sum = 0.0;
  for (int64_t c = 0; c < chunks; ++c) {
    float* chunk = x + c * kLanes;
    for (int l = 0; l < kLanes; ++l) chunk[l] = expfPolynomial(chunk[l] - max);
    sum += double(sumLanes16(chunk));
  }
  return sum;
}

void scaleToHalfScalar(float* x, int64_t n, float scale) {
  for (int64_t i = 0; i < n; ++i) x[i] = roundToHalf(x[i] * scale);
}

void siluGluScalar(const float* gate, const float* up, float* out, int64_t n) {
  for (int64_t i = 0; i < n; ++i)
    out[i] = gate[i] / (1.0f + expfPolynomial(0.0f - gate[i])) * up[i];
}

void geluTableGluScalar(const uint16_t* table, const float* gate, const float* up, float* out,
                        int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
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

template <float (*Dot16)(const float*, const uint16_t*, int64_t),
          float (*Dot64)(const float*, const uint16_t*, int64_t)>
void dotRowsMultiWith(const float* const* qs, int queries, const uint16_t* rows, int64_t count,
                      int64_t n, float scale, bool lanes64, float* const* outs) {
  for (int j = 0; j < queries; ++j)
    dotRowsWith<Dot16, Dot64>(qs[j], rows, count, n, scale, lanes64, outs[j]);
}

template <void (*Axpy)(float, const uint16_t*, float*, int64_t)>
void accumulateRowsMultiWith(const float* const* weights, float* const* lanes, int queries,
                             const uint16_t* const* rows, int64_t count, int64_t width,
                             int64_t laneCount, int64_t firstLane) {
  for (int j = 0; j < queries; ++j) {
    int64_t lane = firstLane % laneCount;
    for (int64_t i = 0; i < count; ++i) {
      if (weights[j][i] != 0.0f) Axpy(weights[j][i], rows[i], lanes[j] + lane * width, width);
      if (++lane == laneCount) lane = 0;
    }
  }
}

bool cpuHasAvx2FmaF16c() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_cpu_init();
  if (!__builtin_cpu_supports("avx2") || !__builtin_cpu_supports("fma")) return false;
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  return __get_cpuid(1, &eax, &ebx, &ecx, &edx) && (ecx & bit_F16C) != 0;
#else
  return false;
#endif
}

float maxValueScalar(const float* x, int64_t n, float start) {
  for (int64_t i = 0; i < n; ++i) start = std::max(start, x[i]);
  return start;
}

}  // namespace

const VectorKernels& scalarVectorKernels() {
  static const VectorKernels kernels{dotF16Scalar,
                                     dotF16Lanes64Scalar,
                                     axpyF16Scalar,
                                     toF16Scalar,
                                     expChunksScalar,
                                     scaleToHalfScalar,
                                     siluGluScalar,
                                     dotRowsWith<dotF16Scalar, dotF16Lanes64Scalar>,
                                     accumulateRowsWith<axpyF16Scalar>,
                                     dotRowsMultiWith<dotF16Scalar, dotF16Lanes64Scalar>,
                                     accumulateRowsMultiWith<axpyF16Scalar>,
                                     maxValueScalar,
                                     geluTableGluScalar};
  return kernels;
}

bool cpuHasAvx512() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_cpu_init();
  return cpuHasAvx2FmaF16c() && __builtin_cpu_supports("avx512f") &&
         __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl") &&
         __builtin_cpu_supports("avx512dq");
#else
  return false;
#endif
}

const VectorKernels& vectorKernels() {
  static const VectorKernels& chosen = cpuHasAvx512()         ? avx512VectorKernels()
                                       : cpuHasAvx2FmaF16c() ? avx2VectorKernels()
                                                             : scalarVectorKernels();
  return chosen;
}

std::vector<const VectorKernels*> supportedVectorKernels() {
  std::vector<const VectorKernels*> tables{&scalarVectorKernels()};
  if (cpuHasAvx2FmaF16c()) tables.push_back(&avx2VectorKernels());
  if (cpuHasAvx512()) tables.push_back(&avx512VectorKernels());
  return tables;
}

}  // namespace ember::cpu::ops
