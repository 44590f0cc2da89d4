// The int8 attention of the fast kernels (ops/attention_int8.h). References:
// - every kernel table this CPU runs (scalar, AVX-512 VNNI) against the scalar one bit for bit,
//   kernel by kernel and through attendHeadsQuantized;
// - the scalar path against softmax(q K^T * scale) V computed in double in this file from the
//   same fp16 keys and values, within a bound derived from the quantization (below);
// - a query's output alone equals its output in a tile with other queries, bit for bit (what
//   batched = alone and cached = cold rely on);
// - the exp polynomial against std::exp in double (3 ulp).
//
// The bound, per query, with D = head dim, sq = max|q| / 127, sk = max|k_p| / 127, sv_p =
// max|v_p| / 127 (each int8 value within half a step of its float):
// - a score moves by at most delta = scale * max_p (sq/2 |k_p|_1 + sk/2 |q|_1 + D sq sk / 4),
//   so the softmax weights move by a factor within exp(+-2 delta): the output by at most
//   (exp(2 delta) - 1) max_p |v_p[d]|;
// - values: at most max_p sv_p / 2 (the weights are a convex combination);
// - weights: each p * sv within half a block step c_b = max over the block of p * sv / 255, times
//   |v8| <= 127, relative to sum p: at most exp(2 delta) * 127 / 510 * max sv * sum over blocks of
//   (positions seen in the block) * (largest exact weight in the block);
// - float rounding of the sums: 1e-5 * max |v| (the sums run over at most a few thousand terms).
#include <QtTest>
#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>
#include <random>
#include <vector>

#include "backend/cpu/ops/attention.h"
#include "backend/cpu/ops/attention_int8.h"
#include "backend/cpu/ops/half.h"
#include "op_test_support.h"
#include "random_kv_pool.h"

using namespace ember::cpu::ops;
using ember::test::randomVector;
using Pool = ember::test::RandomKvPool;

namespace {

double maxAbsOf(const uint16_t* x, int n) {
  double m = 0;
  for (int i = 0; i < n; ++i) m = std::max(m, std::fabs(double(halfToFloat(x[i]))));
  return m;
}

double worstRelative = 0;  // largest |error| / max |v| seen (reported)

// Exact attention in double and the bound of the header comment; returns the worst
// error / bound ratio over the output (fails past 1).
double checkAgainstExact(const Pool& pool, int head, const std::vector<float>& q, int first,
                         int last, float scale, const float* out) {
  const int d = pool.headDim, vd = pool.valueDim;
  double qMax = 0, qL1 = 0;
  for (float x : q) qMax = std::max(qMax, std::fabs(double(x))), qL1 += std::fabs(double(x));
  const double sq = qMax / 127;
  std::vector<double> logits;
  double delta = 0, svMax = 0, vMax = 0;
  for (int p = first; p <= last; ++p) {
    const uint16_t* k = pool.key(p, head);
    double s = 0, kL1 = 0;
    for (int i = 0; i < d; ++i) {
      s += double(q[size_t(i)]) * double(halfToFloat(k[i]));
      kL1 += std::fabs(double(halfToFloat(k[i])));
    }
    logits.push_back(s * scale);
    const double sk = maxAbsOf(k, d) / 127;
    delta = std::max(delta, double(scale) * (sq / 2 * kL1 + sk / 2 * qL1 + d * sq * sk / 4));
    const double vm = maxAbsOf(pool.value(p, head), vd);
    svMax = std::max(svMax, vm / 127);
    vMax = std::max(vMax, vm);
  }
  const double top = *std::max_element(logits.begin(), logits.end());
  double sum = 0;
  for (double& l : logits) sum += (l = std::exp(l - top));
  for (double& l : logits) l /= sum;
  // sum over 64-position blocks (aligned to position 0) of (positions seen) * (largest weight)
  double blockTerm = 0;
  for (int b0 = first - first % kWeightBlock; b0 <= last; b0 += kWeightBlock) {
    const int a = std::max(b0, first), z = std::min(b0 + kWeightBlock - 1, last);
    double w = 0;
    for (int p = a; p <= z; ++p) w = std::max(w, logits[size_t(p - first)]);
    blockTerm += (z - a + 1) * w;
  }
  const double grow = std::exp(2 * delta);
  const double bound = (grow - 1) * vMax + svMax / 2 + grow * 127.0 / 510.0 * svMax * blockTerm +
                       1e-5 * vMax;
  double worst = 0;
  for (int e = 0; e < vd; ++e) {
    double expected = 0;
    for (int p = first; p <= last; ++p)
      expected += logits[size_t(p - first)] * double(halfToFloat(pool.value(p, head)[e]));
    worst = std::max(worst, std::fabs(double(out[e]) - expected) / bound);
    worstRelative = std::max(worstRelative, std::fabs(double(out[e]) - expected) / vMax);
  }
  return worst;
}

struct Case {
  int blockSize, headDim, valueDim, positions, queries, window;
};

}  // namespace

class TestAttentionInt8 : public QObject {
  Q_OBJECT

 private slots:
  void expPolynomialMatchesExp() {
    // std::exp in double is the reference; 3 ulp of float over [-87, 0].
    double worst = 0;
    for (int i = 0; i <= 200000; ++i) {
      const float x = -87.0f * float(i) / 200000.0f;
      const double exact = std::exp(double(x));
      const double ulp = std::ldexp(1.0, std::ilogb(exact) - 23);
      worst = std::max(worst, std::fabs(double(expNonPositive(x)) - exact) / ulp);
    }
    QVERIFY2(worst <= 3.0, qPrintable(QString("worst error %1 ulp").arg(worst)));
    QCOMPARE(expNonPositive(0.0f), 1.0f);
  }

  void tablesMatchScalarAndExactWithinBound_data() {
    QTest::addColumn<int>("blockSize");
    QTest::addColumn<int>("headDim");
    QTest::addColumn<int>("valueDim");
    QTest::addColumn<int>("positions");
    QTest::addColumn<int>("queries");  // consecutive tokens ending at positions - 1, x 3 heads
    QTest::addColumn<int>("window");   // 0: causal over everything
    QTest::addColumn<float>("keySpread");
    QTest::addRow("SmolLM2 shape, 1 token of 200") << 16 << 64 << 64 << 200 << 1 << 0 << 1.0f;
    QTest::addRow("SmolLM2 shape, 8 tokens of 1817") << 16 << 64 << 64 << 1817 << 8 << 0 << 1.0f;
    QTest::addRow("Gemma shape, 8 tokens of 700, window 512")
        << 16 << 256 << 256 << 700 << 8 << 512 << 1.0f;
    QTest::addRow("block 7, dims 32/48, 6 tokens of 131") << 7 << 32 << 48 << 131 << 6 << 0
                                                          << 3.0f;
    QTest::addRow("sharp scores, 5 tokens of 97") << 16 << 64 << 64 << 97 << 5 << 0 << 6.0f;
    QTest::addRow("22 tokens (2 groups and 2 tiles of 64 queries)")
        << 16 << 64 << 64 << 300 << 22 << 0 << 1.0f;
  }

  void tablesMatchScalarAndExactWithinBound() {
    QFETCH(int, blockSize);
    QFETCH(int, headDim);
    QFETCH(int, valueDim);
    QFETCH(int, positions);
    QFETCH(int, queries);
    QFETCH(int, window);
    QFETCH(float, keySpread);
    std::mt19937 rng(uint32_t(positions * 7 + headDim + queries));
    const int kvHeads = 2, heads = 3;
    Pool pool(rng, blockSize, kvHeads, headDim, valueDim, positions, keySpread);
    const float scale = 1.0f / std::sqrt(float(headDim));
    const int n = queries * heads;
    std::vector<std::vector<float>> q;
    for (int j = 0; j < n; ++j) q.push_back(randomVector(rng, size_t(headDim), 2.0f));
    std::vector<uint8_t> scratch(
        static_cast<size_t>(quantizedAttentionScratchBytes(positions, headDim, valueDim)));
    // The rows from the block of 64 holding the first position any query sees, as the backend
    // quantizes them once per step.
    const int firstSeen =
        window > 0 ? std::max(0, positions - queries - window + 1) : 0;
    const int rowsFirst = firstSeen - firstSeen % kWeightBlock;
    const int rowsCount = (positions - rowsFirst + kWeightBlock - 1) / kWeightBlock * kWeightBlock;
    std::vector<uint8_t> rowBytes(
        static_cast<size_t>(quantizedKvBytes(rowsCount, headDim, valueDim)));
    const auto run = [&](const QuantizedAttentionKernels& kernels, int kvHead,
                         std::vector<float>& outs, int only) {
      const QuantizedKv rows =
          carveQuantizedKv(rowBytes.data(), rowsFirst, rowsCount, headDim, valueDim);
      // In two pieces, as the backend's work items split them.
      const int middle = rowsFirst + rowsCount / 2 / kKeyGroup * kKeyGroup;
      fillQuantizedKv(kernels, pool.kv, pool.table, kvHead, positions - 1, rows, rowsFirst,
                      middle);
      fillQuantizedKv(kernels, pool.kv, pool.table, kvHead, positions - 1, rows, middle,
                      rowsFirst + rowsCount);
      outs.assign(size_t(n) * valueDim, 0.0f);
      std::vector<AttentionQuery> list;
      for (int j = 0; j < n; ++j) {
        if (only >= 0 && j != only) continue;
        const int position = positions - queries + j / heads;
        const int first = window > 0 ? std::max(0, position - window + 1) : 0;
        list.push_back({q[size_t(j)].data(), first, position, outs.data() + size_t(j) * valueDim});
      }
      for (size_t i = 0; i < list.size(); i += kMaxTileQueries)  // as attendHeads tiles them
        attendHeadsQuantized(
            kernels, std::span(list).subspan(i, std::min<size_t>(kMaxTileQueries, list.size() - i)),
            rows, headDim, valueDim, scale, scratch.data());
    };
    const auto tables = supportedQuantizedAttentionKernels();
    qInfo() << tables.size() << "kernel table(s) on this CPU (scalar, then AVX-512 VNNI)";
    double worst = 0;
    for (int kvHead = 0; kvHead < kvHeads; ++kvHead) {
      std::vector<float> expected;
      run(*tables[0], kvHead, expected, -1);
      for (size_t t = 1; t < tables.size(); ++t) {
        std::vector<float> got;
        run(*tables[t], kvHead, got, -1);
        QVERIFY2(std::memcmp(got.data(), expected.data(), got.size() * sizeof(float)) == 0,
                 qPrintable(QString("table %1 differs from the scalar one").arg(t)));
      }
      // One query alone: the same bits as in the tile.
      for (int j : {0, n - 1}) {
        std::vector<float> alone;
        run(*tables.back(), kvHead, alone, j);
        QVERIFY(std::memcmp(alone.data() + size_t(j) * valueDim,
                            expected.data() + size_t(j) * valueDim,
                            size_t(valueDim) * sizeof(float)) == 0);
      }
      for (int j = 0; j < n; ++j) {
        const int position = positions - queries + j / heads;
        const int first = window > 0 ? std::max(0, position - window + 1) : 0;
        const double ratio = checkAgainstExact(pool, kvHead, q[size_t(j)], first, position, scale,
                                               expected.data() + size_t(j) * valueDim);
        worst = std::max(worst, ratio);
      }
    }
    qInfo() << "worst error / bound:" << worst << "; worst error / max|v|:" << worstRelative;
    worstRelative = 0;
    QVERIFY2(worst <= 1.0, qPrintable(QString("error %1 x the bound").arg(worst)));
  }

  void kernelsMatchScalarOnPaddedRows() {
    // Zero rows (positions no query sees) and a zero query quantize to zeros with scale 0.
    std::mt19937 rng(5);
    const int n = 64, count = 128;
    std::vector<uint16_t> data(size_t(count) * n);
    for (auto& h : data) h = floatToHalf(std::normal_distribution<float>(0, 3)(rng));
    std::fill(data.begin(), data.begin() + n, uint16_t(0));  // row 0 all zero
    std::vector<const uint16_t*> rows;
    for (int i = 0; i < count; ++i) rows.push_back(data.data() + size_t(i) * n);
    const auto tables = supportedQuantizedAttentionKernels();
    std::vector<int8_t> k0(size_t(count) * n), v0(size_t(count) * n);
    std::vector<float> ks0(count), vs0(count);
    std::vector<int32_t> sums0(count);
    tables[0]->quantizeKeys(rows.data(), count, n, k0.data(), ks0.data(), sums0.data());
    tables[0]->quantizeValues(rows.data(), count, n, v0.data(), vs0.data());
    QCOMPARE(ks0[0], 0.0f);
    QCOMPARE(sums0[0], 0);
    // Hand-checked: row 1's largest |x| becomes +-127, and its scale is max|x| / 127.
    float m = 0;
    int at = 0;
    for (int e = 0; e < n; ++e)
      if (std::fabs(halfToFloat(data[size_t(n + e)])) > m)
        m = std::fabs(halfToFloat(data[size_t(n + e)])), at = e;
    QCOMPARE(std::abs(int(k0[size_t(n + at)])), 127);
    QCOMPARE(ks0[1], m / 127.0f);
    for (size_t t = 1; t < tables.size(); ++t) {
      std::vector<int8_t> k(k0.size()), v(v0.size());
      std::vector<float> ks(count), vs(count);
      std::vector<int32_t> sums(count);
      tables[t]->quantizeKeys(rows.data(), count, n, k.data(), ks.data(), sums.data());
      tables[t]->quantizeValues(rows.data(), count, n, v.data(), vs.data());
      QVERIFY(k == k0 && v == v0 && ks == ks0 && vs == vs0 && sums == sums0);
    }
  }
};

QTEST_APPLESS_MAIN(TestAttentionInt8)
#include "test_attention_int8.moc"
