#pragma once
// Vector primitives of the attention op: a portable scalar version, an AVX2 + FMA + F16C version
// (vector_math_avx2.cpp) and one with AVX-512 multi-query kernels (vector_math_avx512.cpp),
// chosen once at run time from the CPU's features. Both compute
// bit-identical results, in the operation order of reference_order.h. "f16" operands are IEEE
// half-precision bit patterns (the KV cache's storage).
#include <cstdint>
#include <vector>

namespace ember::cpu::ops {

struct VectorKernels {
  // sum a[i] * b[i] in the 16-lane order; a holds fp16-representable floats, so each product is
  // exact. n need not be a multiple of 16 (the remainder is added after the lanes).
  float (*dotF16)(const float* a, const uint16_t* b, int64_t n);
  // The same in the 64-lane order of ggml_vec_dot_f16: the remainder (n % 64) is added in double.
  float (*dotF16Lanes64)(const float* a, const uint16_t* b, int64_t n);
  // y += alpha * x
  void (*axpyF16)(float alpha, const uint16_t* x, float* y, int64_t n);
  // y = fp16(x), rounding to nearest even
  void (*toF16)(const float* x, uint16_t* y, int64_t n);
  // x[i] = expfPolynomial(x[i] - max) over `chunks` chunks of 16; returns the sum of the chunks'
  // 16-lane sums, accumulated in double.
  double (*expChunks)(float* x, int64_t chunks, float max);
  // x[i] = fp16 rounding of (x[i] * scale), as a float
  void (*scaleToHalf)(float* x, int64_t n, float scale);
  // out[i] = gate[i] / (1 + expfPolynomial(-gate[i])) * up[i]; out may alias gate or up
  void (*siluGlu)(const float* gate, const float* up, float* out, int64_t n);
  // out[i] = dot(q, rows + i * n) * scale for i < count, in the 64-lane order when lanes64 and
  // the 16-lane order otherwise (one call per run of keys, for speed).
  void (*dotRows)(const float* q, const uint16_t* rows, int64_t count, int64_t n, float scale,
                  bool lanes64, float* out);
  // For i < count with weights[i] != 0: lanes row (firstLane + i) % laneCount (of width floats)
  // += weights[i] * (rows + i * width). (The AVX-512 multi-query kernels add zero weights' rows
  // of finite values too, which changes nothing but a lane element of -0, to +0: the attention's
  // lanes start at +0 and never hold -0.)
  void (*accumulateRows)(const float* weights, const uint16_t* rows, int64_t count, int64_t width,
                         float* lanes, int64_t laneCount, int64_t firstLane);
  // dotRows for several queries over the same rows, each row read once: outs[j][i] = dot(qs[j],
  // rows + i * n) * scale for j < queries, each value exactly as dotRows computes it.
  void (*dotRowsMulti)(const float* const* qs, int queries, const uint16_t* rows, int64_t count,
                       int64_t n, float scale, bool lanes64, float* const* outs);
  // accumulateRows for several queries over the same rows, each row read once, the rows given one
  // pointer each (rows[i]: width values, so that runs of several blocks go in one call): for query
  // j, exactly what accumulateRows(weights[j], rows, ..., lanes[j], laneCount, firstLane) computes
  // over rows that lay contiguously.
  void (*accumulateRowsMulti)(const float* const* weights, float* const* lanes, int queries,
                              const uint16_t* const* rows, int64_t count, int64_t width,
                              int64_t laneCount, int64_t firstLane);
  // std::max(start, x[0], ..., x[n-1]) taken left to right (a NaN x[i] is skipped, as std::max
  // skips it); the maximum of non-NaN floats does not depend on the order, so lanes may take it
  // (but for the sign of a zero maximum, which the softmax's exp(x - max) does not see).
  float (*maxValue)(const float* x, int64_t n, float start);
  // out[i] = 0 for gate[i] <= -10, gate[i] * up[i] for gate[i] >= 10, else
  // fp16ToFloat(table[fp16(gate[i])]) * up[i] (GeGLU's table, activations.h); the table holds
  // kGeluTableEntries values (the last 2 are padding the SIMD gathers may read). out may alias
  // gate or up.
  void (*geluTableGlu)(const uint16_t* table, const float* gate, const float* up, float* out,
                       int64_t n);
  // The one-token value sums in one pass, for queries that all see the same rows: outs[j]
  // (width) = what accumulateRowsMulti into zeroed (64, width) lanes, then each column reduced in
  // sumLanes64's order, gives, bit for bit, without the lanes in memory. Returns false (doing
  // nothing) for sizes it does not take: then the caller goes the lane way. Null in tables
  // without it.
  bool (*sumValueLanes64)(const float* const* weights, float* const* outs, int queries,
                          const uint16_t* const* rows, int64_t count, int64_t width,
                          int64_t firstLane) = nullptr;
};
// Most rows (of 64 values) sumValueLanes64 takes in one call: it converts them all at once.
constexpr int64_t kValueLanes64MaxRows = 2048;
constexpr int64_t kGeluTableEntries = 65536 + 2;

const VectorKernels& scalarVectorKernels();
const VectorKernels& avx2VectorKernels();  // call only when the CPU has AVX2, FMA and F16C
// The AVX2 table with 512-bit multi-query kernels (the same bits); call only when the CPU also
// has AVX-512 F, BW, VL and DQ.
const VectorKernels& avx512VectorKernels();
// Whether this CPU has what avx512VectorKernels needs (AVX2, FMA, F16C, AVX-512 F/BW/VL/DQ).
bool cpuHasAvx512();
// The best kernels this CPU runs.
const VectorKernels& vectorKernels();
// Every table this CPU runs, scalar first (the tests compare them).
std::vector<const VectorKernels*> supportedVectorKernels();

}  // namespace ember::cpu::ops
