#pragma once
// How closely two backends' logits agree, row by row: top-1 agreement and KL(ref || ours) over
// the whole vocabulary (the measure of the GPU tests, whose reference is the CPU backend).
#include <QtTest>

#include <algorithm>
#include <cmath>
#include <span>
#include <vector>

#include "engine/model/paged_sequence.h"

namespace ember::test {

struct Agreement {
  int64_t positions = 0, top1 = 0;
  double klSum = 0, klMax = 0;
  double top1Rate() const { return positions ? double(top1) / double(positions) : 0; }
  double klMean() const { return positions ? klSum / double(positions) : 0; }
};

// KL(softmax(ref) || softmax(ours)) over the whole row, in double.
inline double rowKl(std::span<const float> ref, std::span<const float> ours) {
  const double refMax = *std::max_element(ref.begin(), ref.end());
  const double ourMax = *std::max_element(ours.begin(), ours.end());
  double refSum = 0, ourSum = 0;
  for (size_t i = 0; i < ref.size(); ++i) {
    refSum += std::exp(double(ref[i]) - refMax);
    ourSum += std::exp(double(ours[i]) - ourMax);
  }
  const double refLog = std::log(refSum), ourLog = std::log(ourSum);
  double kl = 0;
  for (size_t i = 0; i < ref.size(); ++i) {
    const double logP = double(ref[i]) - refMax - refLog;
    const double logQ = double(ours[i]) - ourMax - ourLog;
    kl += std::exp(logP) * (logP - logQ);
  }
  return std::max(kl, 0.0);
}

inline void compareRows(const std::vector<float>& ref, const std::vector<float>& ours, size_t vocab,
                 Agreement& a) {
  QCOMPARE(ours.size(), ref.size());
  for (size_t r = 0; r < ref.size() / vocab; ++r) {
    const std::span<const float> refRow(ref.data() + r * vocab, vocab);
    const std::span<const float> ourRow(ours.data() + r * vocab, vocab);
    a.top1 += argmax(refRow) == test::argmax(ourRow) ? 1 : 0;
    const double kl = rowKl(refRow, ourRow);
    a.klSum += kl;
    a.klMax = std::max(a.klMax, kl);
    ++a.positions;
  }
}

}  // namespace ember::test
