// The CPU backend's element-wise ops against hand-computed values. Hand-computed values come
// from the defining formulas evaluated in double precision with Python's math module (printed to
// 7-8 digits): RMSNorm (Zhang & Sennrich 2019), RoPE (Su et al. 2021) with llama.cpp's two
// pairings (NORM: adjacent pairs; NEOX: halves, llama.cpp ggml_rope_ext), SiLU, and GELU's tanh
// approximation (Hendrycks & Gimpel 2016; PyTorch's gelu(approximate='tanh') gives 0.8411920 at
// 1.0 too). fp16 conversions are compared with the compiler's _Float16 conversions (GCC, IEEE 754
// round to nearest even).
#include <QtTest>
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "backend/cpu/ops/activations.h"
#include "backend/cpu/ops/half.h"
#include "backend/cpu/ops/norm.h"
#include "backend/cpu/ops/rope.h"
#include "op_test_support.h"

using namespace ember::cpu::ops;
using ember::model::RopeStyle;
using ember::test::compareClose;
using ember::test::randomVector;

Q_DECLARE_METATYPE(RopeStyle)

class TestModelOps : public QObject {
  Q_OBJECT

 private slots:
  void rmsNormHandComputed() {
    // x = [1, 2, 3, 4], w = [0.5, 1, 2, -1], eps = 1e-5: x / sqrt(7.5 + eps) * w.
    const std::vector<float> x{1, 2, 3, 4}, w{0.5f, 1, 2, -1};
    std::vector<float> y(4);
    rmsNorm(x.data(), w.data(), 4, 1e-5f, y.data());
    compareClose(y.data(), {0.1825741, 0.7302963, 2.1908888, -1.4605925}, 1e-6, 1e-6);
  }

  void rmsNormInPlaceOnAwkwardWidth() {
    std::mt19937 rng(7);
    const int n = 989;
    std::vector<float> x = randomVector(rng, n, 3.0f), w = randomVector(rng, n);
    double sumSquares = 0;
    for (float v : x) sumSquares += double(v) * v;
    const double scale = 1.0 / std::sqrt(sumSquares / n + 1e-6);
    std::vector<double> expected(n);
    for (int i = 0; i < n; ++i) expected[size_t(i)] = x[size_t(i)] * scale * w[size_t(i)];
    rmsNorm(x.data(), w.data(), n, 1e-6f, x.data());
    compareClose(x.data(), expected, 1e-6, 1e-5);
  }

  void ropeHandComputed_data() {
    QTest::addColumn<RopeStyle>("style");
    QTest::addColumn<int>("position");
    QTest::addColumn<float>("base");
    QTest::addColumn<std::vector<float>>("input");  // one head
    QTest::addColumn<std::vector<double>>("expected");
    // head_dim 4 = rope dims, position 1, base 10000: angles 1 and 0.01.
    QTest::newRow("normal pos 1") << RopeStyle::Normal << 1 << 10000.0f
                                  << std::vector<float>{1, 2, 3, 4}
                                  << std::vector<double>{-1.1426397, 1.9220756, 2.9598507,
                                                         4.0297995};
    QTest::newRow("neox pos 1") << RopeStyle::Neox << 1 << 10000.0f
                                << std::vector<float>{1, 2, 3, 4}
                                << std::vector<double>{-1.9841106, 1.9599007, 2.4623779, 4.0197997};
    // head_dim 6, rope dims 4 (the last two pass through), position 3, base 100: angles 3, 0.3.
    QTest::newRow("normal partial")
        << RopeStyle::Normal << 3 << 100.0f << std::vector<float>{0.5f, -1.5f, 2.0f, 0.25f, 7, 8}
        << std::vector<double>{-0.2833162, 1.5555487, 1.8367929, 0.8298745, 7, 8};
    QTest::newRow("neox partial") << RopeStyle::Neox << 3 << 100.0f
                                  << std::vector<float>{0.5f, -1.5f, 2.0f, 0.25f, 7, 8}
                                  << std::vector<double>{-0.7772363, -1.5068848, -1.9094250,
                                                         -0.2044462, 7,          8};
  }

  void ropeHandComputed() {
    QFETCH(RopeStyle, style);
    QFETCH(int, position);
    QFETCH(float, base);
    QFETCH(std::vector<float>, input);
    QFETCH(std::vector<double>, expected);
    RopeParams p;
    p.dims = 4;
    p.freqBase = base;
    p.style = style;
    std::vector<float> cosSin(4);
    ropeAngles(p, position, cosSin.data());
    // Two heads with the same content: each is rotated on its own.
    std::vector<float> x = input;
    x.insert(x.end(), input.begin(), input.end());
    applyRope(p, cosSin.data(), x.data(), 2, int32_t(input.size()));
    compareClose(x.data(), expected, 1e-6, 1e-6);
    compareClose(x.data() + input.size(), expected, 1e-6, 1e-6);
  }

  void ropeAnglesFollowTheFormula_data() {
    QTest::addColumn<int>("position");
    QTest::addColumn<float>("freqScale");
    QTest::addColumn<bool>("withFactors");
    QTest::newRow("pos 0") << 0 << 1.0f << false;
    QTest::newRow("pos 17") << 17 << 1.0f << false;
    QTest::newRow("pos 4095 linear 1/4") << 4095 << 0.25f << false;
    QTest::newRow("pos 999 freq factors") << 999 << 1.0f << true;
  }

  void ropeAnglesFollowTheFormula() {
    // theta_i = position * freqScale * base^(-2i/dims) / factor_i (RoFormer eq. 15 with linear
    // position interpolation and llama.cpp's per-frequency rope_freqs factors).
    QFETCH(int, position);
    QFETCH(float, freqScale);
    QFETCH(bool, withFactors);
    const int dims = 64;
    std::vector<float> factors(dims / 2);
    for (int i = 0; i < dims / 2; ++i) factors[size_t(i)] = 1.0f + float(i % 5);
    RopeParams p;
    p.dims = dims;
    p.freqBase = 500000.0f;
    p.freqScale = freqScale;
    p.freqFactors = withFactors ? factors.data() : nullptr;
    std::vector<float> cosSin(dims);
    ropeAngles(p, position, cosSin.data());
    std::vector<double> expected(dims);
    for (int i = 0; i < dims / 2; ++i) {
      double theta = position * double(freqScale) * std::pow(500000.0, -2.0 * i / dims);
      if (withFactors) theta /= factors[size_t(i)];
      expected[size_t(2 * i)] = std::cos(theta);
      expected[size_t(2 * i + 1)] = std::sin(theta);
    }
    // float angles of up to ~1000 rad carry ~1e-4 absolute error (as in llama.cpp).
    compareClose(cosSin.data(), expected, 2e-4, 0);
  }

  void activationsHandComputed() {
    const std::vector<float> x{-3, -1, -0.5f, 0, 0.5f, 1, 3};
    const std::vector<double> gelu{-0.00363739, -0.15880801, -0.15428599, 0,
                                   0.34571401,  0.84119199,  2.99636261};
    const std::vector<double> silu{-0.14227762, -0.26894142, -0.18877033, 0,
                                   0.31122967,  0.73105858,  2.85772238};
    for (size_t i = 0; i < x.size(); ++i)
      QVERIFY(std::abs(geluTanh(x[i]) - gelu[i]) <= 1e-6 + 1e-6 * std::abs(gelu[i]));
    std::vector<float> up(x.size(), 2.0f), out(x.size());
    // GeGLU looks gelu up at fp16 precision: within half an fp16 step (2^-11 relative).
    geluTanhGluRow(x.data(), up.data(), out.data(), int64_t(x.size()));
    std::vector<double> twice(gelu.size());
    std::transform(gelu.begin(), gelu.end(), twice.begin(), [](double v) { return 2 * v; });
    compareClose(out.data(), twice, 1e-7, 5e-4);
    siluGluRow(x.data(), up.data(), out.data(), int64_t(x.size()));
    std::transform(silu.begin(), silu.end(), twice.begin(), [](double v) { return 2 * v; });
    compareClose(out.data(), twice, 1e-6, 1e-6);
  }

  void gatedActivationsOnAwkwardRows_data() {
    QTest::addColumn<int>("n");
    for (int n : {16, 37, 111, 1536}) QTest::addRow("n=%d", n) << n;
  }

  void gatedActivationsOnAwkwardRows() {
    // Against the formulas in double: SwiGLU within a few float ulps (the polynomial exp adds
    // about 1.5), GeGLU within the fp16 lookup's rounding; beyond +-10 GeGLU is 0 or identity.
    QFETCH(int, n);
    std::mt19937 rng{uint32_t(n)};
    std::vector<float> gate = randomVector(rng, size_t(n), 4.0f), up = randomVector(rng, size_t(n));
    gate[0] = -12.0f;
    gate[size_t(n) - 1] = 11.0f;
    std::vector<float> out(static_cast<size_t>(n));
    siluGluRow(gate.data(), up.data(), out.data(), n);
    std::vector<double> expected(static_cast<size_t>(n));
    for (int i = 0; i < n; ++i) {
      const double g = gate[size_t(i)];
      expected[size_t(i)] = g / (1 + std::exp(-g)) * up[size_t(i)];
    }
    compareClose(out.data(), expected, 1e-30, 3e-7);
    // GeGLU evaluates gelu at fp16(g) and rounds the result to fp16 (half a step: 2^-11).
    geluTanhGluRow(gate.data(), up.data(), out.data(), n);
    for (int i = 0; i < n; ++i) {
      const double g = double(float(_Float16(gate[size_t(i)])));
      expected[size_t(i)] =
          g <= -10  ? 0.0
          : g >= 10 ? g * up[size_t(i)]
                    : 0.5 * g * (1 + std::tanh(std::sqrt(2 / M_PI) * g * (1 + 0.044715 * g * g))) *
                          up[size_t(i)];
    }
    compareClose(out.data(), expected, 5e-7, 5e-4);  // 1 + tanh cancels in float
  }

  void halfToFloatMatchesCompilerOnEveryPattern() {
    for (uint32_t bits = 0; bits < 65536; ++bits) {
      _Float16 h;
      const uint16_t b = uint16_t(bits);
      std::memcpy(&h, &b, 2);
      const float expected = float(h), actual = halfToFloat(b);
      if (std::isnan(expected)) {
        QVERIFY(std::isnan(actual));
        continue;
      }
      if (std::bit_cast<uint32_t>(actual) != std::bit_cast<uint32_t>(expected))
        QFAIL(qPrintable(QStringLiteral("half 0x%1").arg(bits, 4, 16, QChar('0'))));
    }
  }

  void floatToHalfRoundsToNearestEven() {
    std::vector<float> values = {0.0f,         -0.0f,        1.0f,       -2.5f,      65504.0f,
                                 65519.99f,    65520.0f,     1e9f,       -1e9f,      INFINITY,
                                 -INFINITY,    0x1p-24f,     0x1p-25f,   0x1.8p-25f, 0x1p-14f,
                                 0x1.ffcp-15f, 0x1.ffep-15f, 0x1.002p0f, 0x1.006p0f, 0x1.001p0f,
                                 3.14159265f,  1e-8f,        6.1e-5f,    -6.1e-5f};
    std::mt19937 rng(5);
    std::uniform_int_distribution<uint32_t> anyBits;
    for (int i = 0; i < 200000; ++i) {
      const float f = std::bit_cast<float>(anyBits(rng));
      if (!std::isnan(f)) values.push_back(f);
    }
    for (float f : values) {
      const _Float16 h = _Float16(f);
      uint16_t expected;
      std::memcpy(&expected, &h, 2);
      if (floatToHalf(f) != expected)
        QFAIL(qPrintable(QStringLiteral("%1: got 0x%2, expected 0x%3")
                             .arg(double(f), 0, 'g', 9)
                             .arg(floatToHalf(f), 4, 16, QChar('0'))
                             .arg(expected, 4, 16, QChar('0'))));
    }
    QVERIFY(std::isnan(halfToFloat(floatToHalf(NAN))));
  }
};

QTEST_APPLESS_MAIN(TestModelOps)
#include "test_model_ops.moc"
