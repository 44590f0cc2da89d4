// The AMX bf16 attention of the fast kernels (ops/attention_amx.h). References:
// - softmax(q K^T * scale) V computed in double in this file from the same fp16 keys and values
//   and the same fp16-rounded queries, within the bound below;
// - the reference kernels (attendHeads, llama.cpp's operation order) within the same bound
//   plus theirs (reported: how far apart the two float paths are);
// - a query's output alone equals its output in a tile with other queries, bit for bit (what
//   batched = alone and cached = cold rely on);
// - a non-finite value or key row a query sees makes it decline (the caller takes attendHeads);
//   unwritten cache slots (NaN) outside every query's range are never read.
//
// The bound, per query and output element, with u = 2^-24 and gamma(m) = m u / (1 - m u) (the
// classic bound for a recursive fp32 sum of m terms):
// - the products q_d k_pd are exact (four bf16 products of exact parts); their fp32 sum over
//   4 D terms, times scale, is off by at most delta_p = scale gamma(4 D + 1) sum_d |q_d k_pd|;
// - softmax weights (shift-invariant) then move by a factor within exp(+-2 delta), delta =
//   max_p delta_p; the polynomial exp (a few ulp), the float normalisation and the fp16 rounding
//   of the weights (relative 2^-11) add eps_w = 2^-11 + 16 u;
// - p.v: exact products again, fp32 sum of 4 S terms (S = positions of the query's 32-position
//   steps): gamma(4 S) sum_p w_p |v_p|.
// So |out - exact| <= ((exp(2 delta) (1 + eps_w) - 1) + gamma(4 S)(1 + eps_w) exp(2 delta)) *
// sum_p w_p |v_p|, with w the exact weights. The same holds for attendHeads (16 lanes instead of
// one sum: a smaller gamma, so this bound covers it too).
// With fewer part products (AmxPrecision) each product carries productError() more, in delta
// for the scores and as a factor (1 + that) on the values; the light softmax replaces eps_w by
// its float exp, float sum and the 16 bits the weights' two bf16 parts keep.
#include <QtTest>
#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <vector>

#include "backend/cpu/amx_support.h"
#include "backend/cpu/ops/attention.h"
#include "backend/cpu/ops/attention_amx.h"
#include "backend/cpu/ops/half.h"
#include "op_test_support.h"
#include "random_kv_pool.h"

using namespace ember::cpu::ops;
using ember::test::randomVector;
using Pool = ember::test::RandomKvPool;

namespace {

// Every pool's table lists two unwritten blocks past the last position's; reading one makes the
// AMX path decline (a test failure).
constexpr int kUnwrittenBlocks = 2;

constexpr double kU = 1.0 / 16777216.0;  // 2^-24
double gamma(double m) { return m * kU / (1 - m * kU); }

// Relative error of one product from the part products left out: hi = bf16(x) (8 significant
// bits, rounded to nearest) is within 2^-8 |x| of x and lo = x - hi within 2^-8 |x| of 0, so
// hi.hi alone is within (2^-7 + 2^-16) |xy| and hi.hi + hi.lo + lo.hi within 2^-16 |xy|.
double productError(int products) {
  return products >= 4 ? 0.0
         : products >= 3 ? std::ldexp(1.0, -16)
                         : std::ldexp(1.0, -7) + std::ldexp(1.0, -16);
}

double worstRatio = 0;           // largest error / bound (AMX)
double worstRelativeToRef = 0;   // largest |amx - attendHeads| / sum_p w_p |v_p| (reported)
double worstAmxRelative = 0, worstRefRelative = 0;  // largest |x - exact| / sum_p w_p |v_p|

// Checks out (AMX) and ref (attendHeads) against exact attention in double; QVERIFY-style
// failure through the return value (false with a message in `why`).
bool checkQuery(const Pool& pool, int head, const float* q, int first, int last, float scale,
                float softcap, AmxPrecision precision, const float* out, const float* ref,
                QString& why) {
  const int d = pool.headDim, vd = pool.valueDim;
  std::vector<double> w;
  double delta = 0, amxDelta = 0;
  for (int p = first; p <= last; ++p) {
    const uint16_t* k = pool.key(p, head);
    double s = 0, magnitude = 0;
    for (int i = 0; i < d; ++i) {
      s += double(q[i]) * double(halfToFloat(k[i]));
      magnitude += std::fabs(double(q[i]) * double(halfToFloat(k[i])));
    }
    // softcap: scale * cap * tanh(s / cap), whose slope is at most 1 (the error does not grow)
    const double softened = softcap > 0 ? softcap * std::tanh(s / softcap) : s;
    w.push_back(softened * scale);
    delta = std::max(delta, std::fabs(double(scale)) * (gamma(4.0 * d + 1) * magnitude +
                                                        kU * std::fabs(s)));
    amxDelta = std::max(amxDelta, std::fabs(double(scale)) *
                                      ((productError(precision.scoreProducts) +
                                        gamma(4.0 * d + 1)) * magnitude +
                                       kU * std::fabs(s)));
  }
  const double top = *std::max_element(w.begin(), w.end());
  double sum = 0;
  for (double& x : w) sum += (x = std::exp(x - top));
  for (double& x : w) x /= sum;
  const int64_t steps = (last / 32 + 1) * 32 - (first - first % 32);
  const double epsW = std::ldexp(1.0, -11) + 16 * kU;
  const double grow = std::exp(2 * delta);
  const double factor = grow * (1 + epsW) - 1 + gamma(4.0 * steps) * (1 + epsW) * grow;
  // The light softmax: float exp (a few ulp), float sum over the steps, float weights whose
  // bf16 hi + lo keep 16 of their 24 bits (2^-16 relative).
  const bool light = precision.lightSoftmax && softcap <= 0;
  const double amxEpsW = light ? gamma(double(steps)) + 16 * kU + std::ldexp(1.0, -16) : epsW;
  const double amxGrow = std::exp(2 * amxDelta) * (1 + amxEpsW) *
                         (1 + productError(precision.valueProducts));
  const double amxFactor = amxGrow - 1 + gamma(4.0 * steps) * amxGrow;
  for (int e = 0; e < vd; ++e) {
    double expected = 0, magnitude = 0;
    for (int p = first; p <= last; ++p) {
      const double v = double(halfToFloat(pool.value(p, head)[e]));
      expected += w[size_t(p - first)] * v;
      magnitude += w[size_t(p - first)] * std::fabs(v);
    }
    const double bound = amxFactor * magnitude + 1e-30;
    const double refBound = factor * magnitude + 1e-30;
    const double error = std::fabs(double(out[e]) - expected);
    worstRatio = std::max(worstRatio, error / bound);
    worstAmxRelative = std::max(worstAmxRelative, error / magnitude);
    worstRefRelative =
        std::max(worstRefRelative, std::fabs(double(ref[e]) - expected) / magnitude);
    worstRelativeToRef =
        std::max(worstRelativeToRef, std::fabs(double(out[e]) - double(ref[e])) / magnitude);
    if (!(error <= bound) || !(std::fabs(double(ref[e]) - expected) <= refBound)) {
      why = QStringLiteral("element %1: amx %2, attendHeads %3, exact %4, bound %5")
                .arg(e)
                .arg(double(out[e]), 0, 'g', 9)
                .arg(double(ref[e]), 0, 'g', 9)
                .arg(expected, 0, 'g', 9)
                .arg(bound, 0, 'g', 3);
      return false;
    }
  }
  return true;
}

}  // namespace

class TestAttentionAmx : public QObject {
  Q_OBJECT

 private slots:
  void init() {
    if (!amxAttentionAvailable())
      QSKIP(qPrintable(QStringLiteral("AMX attention not available here: %1")
                           .arg(*ember::cpu::amxUnavailableReason()
                                    ? ember::cpu::amxUnavailableReason()
                                    : "no AVX-512 BF16")));
  }

  void matchesExactAttention_data() {
    QTest::addColumn<int>("blockSize");
    QTest::addColumn<int>("kvHeads");
    QTest::addColumn<int>("group");
    QTest::addColumn<int>("headDim");
    QTest::addColumn<int>("valueDim");
    QTest::addColumn<int>("history");  // cached positions before the step
    QTest::addColumn<int>("tokens");   // tokens of the step (each query head of the group)
    QTest::addColumn<int>("window");   // 0: global
    QTest::addColumn<float>("softcap");
    QTest::addColumn<bool>("sinks");
    // SmolLM2-135M: 3 kv heads x 3 query heads, 64/64; a chat's next turn over its history.
    QTest::newRow("smollm2 turn") << 16 << 3 << 3 << 64 << 64 << 1584 << 16 << 0 << 0.f << false;
    QTest::newRow("smollm2 17 tokens, 37 cached")
        << 16 << 3 << 3 << 64 << 64 << 37 << 17 << 0 << 0.f << false;
    QTest::newRow("smollm2 from position 0") << 16 << 3 << 3 << 64 << 64 << 0 << 13 << 0 << 0.f
                                             << false;
    // Gemma-3-270M: 1 kv head x 4 query heads, 256/256, 512-position window on local layers.
    QTest::newRow("gemma window") << 16 << 1 << 4 << 256 << 256 << 700 << 16 << 512 << 0.f
                                  << false;
    QTest::newRow("gemma global 5 tokens")
        << 16 << 1 << 4 << 256 << 256 << 1000 << 5 << 0 << 0.f << false;
    // 5 query heads x 16 tokens = 80 queries: more than one tile (64), a partial query block.
    QTest::newRow("group 5, 2 tiles") << 7 << 2 << 5 << 32 << 96 << 301 << 16 << 0 << 0.f
                                      << false;
    QTest::newRow("window 100, block 7")
        << 7 << 1 << 2 << 96 << 32 << 455 << 11 << 100 << 0.f << false;
    QTest::newRow("softcap 50") << 16 << 1 << 2 << 64 << 64 << 200 << 9 << 0 << 50.f << false;
    QTest::newRow("sinks") << 16 << 1 << 4 << 64 << 64 << 130 << 6 << 0 << 0.f << true;
    QTest::newRow("one token") << 16 << 1 << 1 << 32 << 32 << 1 << 1 << 0 << 0.f << false;
  }

  void matchesExactAttention() {
    QFETCH(int, blockSize);
    QFETCH(int, kvHeads);
    QFETCH(int, group);
    QFETCH(int, headDim);
    QFETCH(int, valueDim);
    QFETCH(int, history);
    QFETCH(int, tokens);
    QFETCH(int, window);
    QFETCH(float, softcap);
    QFETCH(bool, sinks);
    QVERIFY(amxAttentionFits(headDim, valueDim));
    std::mt19937 rng(uint32_t(history * 131 + tokens * 7 + headDim));
    // Spread keys so that the softmax is peaked as well as flat across the rows.
    const Pool pool(rng, blockSize, kvHeads, headDim, valueDim, history + tokens, 1.5f,
                    kUnwrittenBlocks);
    const float scale = 1.0f / std::sqrt(float(headDim));
    const int queries = tokens * group;
    std::vector<float> q = randomVector(rng, size_t(queries) * headDim, 2.0f);
    roundToHalfPrecision(q.data(), int64_t(q.size()));
    std::vector<float> sinkLogits = randomVector(rng, size_t(group), 1.0f);
    for (const AmxPrecision precision : {AmxPrecision{4, 4, false}, AmxPrecision{3, 1, true},
                                         AmxPrecision{1, 1, true}})
    for (int head = 0; head < kvHeads; ++head) {
      std::vector<float> amx(size_t(queries) * valueDim, -1.0f), ref(amx.size(), -2.0f);
      std::vector<AttentionQuery> tile, refTile;
      for (int t = 0; t < tokens; ++t)
        for (int h = 0; h < group; ++h) {
          const int j = t * group + h, position = history + t;
          const int first = window > 0 ? std::max(0, position - window + 1) : 0;
          const float sink = sinks ? sinkLogits[size_t(h)] : kNoSink;
          tile.push_back({q.data() + int64_t(j) * headDim, first, position,
                          amx.data() + int64_t(j) * valueDim, sink});
          refTile.push_back({q.data() + int64_t(j) * headDim, first, position,
                             ref.data() + int64_t(j) * valueDim, sink});
        }
      QVERIFY2(attendHeadsAmx(tile, pool.kv, pool.table, head, scale, softcap, precision),
               "declined finite operands (or read an unwritten slot)");
      std::vector<float> scratch(
          size_t(attentionTileScratchFloats(kMaxTileQueries, history + tokens, valueDim)));
      attendHeads(refTile, pool.kv, pool.table, head, scale, StepKind::SeveralTokens,
                  scratch.data(), softcap);
      for (int j = 0; j < queries; ++j) {
        QString why;
        if (sinks) {  // the sink is one more softmax term: checked against attendHeads only
          const float tolerance = precision.valueProducts < 3 ? 2e-2f : 1e-3f;
          for (int e = 0; e < valueDim; ++e)
            QVERIFY(std::fabs(amx[size_t(j) * valueDim + e] - ref[size_t(j) * valueDim + e]) <=
                    tolerance * (1 + std::fabs(ref[size_t(j) * valueDim + e])));
          continue;
        }
        QVERIFY2(checkQuery(pool, head, tile[size_t(j)].q, tile[size_t(j)].first,
                            tile[size_t(j)].last, scale, softcap, precision,
                            amx.data() + j * valueDim,
                            ref.data() + j * valueDim, why),
                 qPrintable(QStringLiteral("query %1: %2").arg(j).arg(why)));
      }
      // Alone = in the tile, bit for bit (the last query and one from the middle).
      for (int j : {queries - 1, queries / 2}) {
        std::vector<float> alone(static_cast<size_t>(valueDim));
        AttentionQuery one = tile[size_t(j)];
        one.out = alone.data();
        QVERIFY(attendHeadsAmx({&one, 1}, pool.kv, pool.table, head, scale, softcap, precision));
        QVERIFY(std::equal(alone.begin(), alone.end(), amx.begin() + int64_t(j) * valueDim));
      }
    }
    qInfo("so far: worst error / bound %.3g; worst error / sum w|v|: amx %.3g, attendHeads %.3g; "
          "worst |amx - attendHeads| / sum w|v| %.3g",
          worstRatio, worstAmxRelative, worstRefRelative, worstRelativeToRef);
  }

  void declinesNonFiniteRows() {
    std::mt19937 rng(5);
    Pool pool(rng, 16, 1, 64, 64, 100, 1.0f, kUnwrittenBlocks);
    std::vector<float> q = randomVector(rng, 64);
    roundToHalfPrecision(q.data(), 64);
    std::vector<float> out(64);
    const AttentionQuery query{q.data(), 0, 99, out.data(), kNoSink};
    QVERIFY(attendHeadsAmx({&query, 1}, pool.kv, pool.table, 0, 0.125f));
    // fp16 +inf in a value the query sees: the reference skips it only under a zero weight, so
    // the AMX path (0 * inf = NaN) declines.
    const_cast<uint16_t*>(pool.value(40, 0))[3] = 0x7c00;
    QVERIFY(!attendHeadsAmx({&query, 1}, pool.kv, pool.table, 0, 0.125f));
    // Out of the query's range (a window): not read, so not declined.
    const AttentionQuery later{q.data(), 41, 99, out.data(), kNoSink};
    QVERIFY(attendHeadsAmx({&later, 1}, pool.kv, pool.table, 0, 0.125f));
    const_cast<uint16_t*>(pool.key(60, 0))[0] = 0xfc00;  // -inf key
    QVERIFY(!attendHeadsAmx({&later, 1}, pool.kv, pool.table, 0, 0.125f));
  }
};

QTEST_APPLESS_MAIN(TestAttentionAmx)
#include "test_attention_amx.moc"
