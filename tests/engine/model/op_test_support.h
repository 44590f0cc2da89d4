#pragma once
// Helpers shared by the op tests: element-wise comparison with atol + rtol * |expected| and
// seeded normal random vectors.
#include <QtTest>
#include <cmath>
#include <random>
#include <vector>

namespace ember::test {

inline void compareClose(const float* actual, const std::vector<double>& expected, double atol,
                         double rtol) {
  for (size_t i = 0; i < expected.size(); ++i) {
    const double err = std::abs(double(actual[i]) - expected[i]);
    if (err > atol + rtol * std::abs(expected[i]))
      QFAIL(qPrintable(QStringLiteral("element %1: got %2, expected %3")
                           .arg(i)
                           .arg(double(actual[i]), 0, 'g', 9)
                           .arg(expected[i], 0, 'g', 9)));
  }
}

inline std::vector<float> randomVector(std::mt19937& rng, size_t n, float scale = 1.0f) {
  std::normal_distribution<float> dist(0.0f, scale);
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  return v;
}

}  // namespace ember::test
