#pragma once
// The row loops of the attention kernels (dotRows, accumulateRows), written once over the
// per-row kernels of a kernel table (scalar or AVX2), which pass theirs in as template arguments.
#include <cstdint>

namespace ember::cpu::ops::rows {

// out[i] = dot(q, rows[i]) * scale for count rows of n fp16 values, summed in 16 or 64 lanes.
template <float (*Dot16)(const float*, const uint16_t*, int64_t),
          float (*Dot64)(const float*, const uint16_t*, int64_t)>
void dotRowsWith(const float* q, const uint16_t* rows, int64_t count, int64_t n, float scale,
                 bool lanes64, float* out) {
  if (lanes64)
    for (int64_t i = 0; i < count; ++i) out[i] = Dot64(q, rows + i * n, n) * scale;
  else
    for (int64_t i = 0; i < count; ++i) out[i] = Dot16(q, rows + i * n, n) * scale;
}

// lanes[(firstLane + i) % laneCount] += weights[i] * rows[i]; zero weights are skipped (adding a
// zero product changes nothing).
template <void (*Axpy)(float, const uint16_t*, float*, int64_t)>
void accumulateRowsWith(const float* weights, const uint16_t* rows, int64_t count, int64_t width,
                        float* lanes, int64_t laneCount, int64_t firstLane) {
  int64_t lane = firstLane % laneCount;
  for (int64_t i = 0; i < count; ++i) {
    if (weights[i] != 0.0f) Axpy(weights[i], rows + i * width, lanes + lane * width, width);
    if (++lane == laneCount) lane = 0;
  }
}

}  // namespace ember::cpu::ops::rows
