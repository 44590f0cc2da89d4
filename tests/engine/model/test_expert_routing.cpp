// The host-side routing of the mixture of experts (model/expert_routing.h), which the CUDA
// backend uses to pick each token's experts and group the tokens by expert. References:
//  - cases worked by hand (qwen3moe: softmax of log 3, log 1, log 4, log 2 is 0.3, 0.1, 0.4,
//    0.2, top 2 renormalised is 4/7 and 3/7; gpt-oss: biased logits, the top 2 softmaxed
//    between themselves, 1 / (1 + e^-0.5) and its complement; a tie goes to the lower index);
//  - random cases against llama.cpp's build_moe_ffn gating evaluated in double (softmax, top k,
//    renormalisation, scale), rows drawn so that no two of the top k + 1 are within 1e-3;
//  - the grouping's invariants (a permutation of the pairs, each expert's rows contiguous, the
//    tokens ascending within an expert);
//  - the CUDA backend's plan carried out on the host in float (gather by expert, each expert over
//    its rows, the weighted sum in rank order) against the CPU backend's expertFeedForward on
//    the same F32 weights: the same numbers to within float rounding of the dot products.
#include <QtTest>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>

#include "backend/cpu/cpu_expert_ffn.h"
#include "model/expert_routing.h"

using namespace ember;

namespace {

model::ModelConfig moeConfig(int32_t experts, int32_t used, bool gptOss) {
  model::ModelConfig c;
  c.embeddingDim = 16;
  c.expertCount = experts;
  c.expertUsedCount = used;
  c.expertFfnDim = 8;
  c.expertGating = gptOss ? model::ExpertGating::SoftmaxOfChosen : model::ExpertGating::Softmax;
  c.expertWeightsNorm = !gptOss;
  c.ffnActivation = gptOss ? model::FfnActivation::SwigluOai : model::FfnActivation::SiluGlu;
  return c;
}

// build_moe_ffn's gating for one row, in double: the chosen experts and their weights.
void referenceGating(const model::ModelConfig& c, std::vector<double> p, const float* bias,
                     std::vector<int32_t>& chosen, std::vector<double>& weights) {
  const auto softmax = [](std::vector<double>& v) {
    const double max = *std::max_element(v.begin(), v.end());
    double sum = 0;
    for (double& x : v) sum += (x = std::exp(x - max));
    for (double& x : v) x /= sum;
  };
  if (bias)
    for (size_t e = 0; e < p.size(); ++e) p[e] += bias[e];
  if (c.expertGating == model::ExpertGating::Softmax) softmax(p);
  std::vector<int32_t> order(p.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int32_t a, int32_t b) { return p[size_t(a)] > p[size_t(b)]; });
  chosen.assign(order.begin(), order.begin() + c.expertUsedCount);
  weights.clear();
  for (int32_t e : chosen) weights.push_back(p[size_t(e)]);
  if (c.expertGating == model::ExpertGating::SoftmaxOfChosen) softmax(weights);
  if (c.expertWeightsNorm) {
    const double sum = std::accumulate(weights.begin(), weights.end(), 0.0);
    for (double& w : weights) w /= sum;
  }
  for (double& w : weights) w *= c.expertWeightsScale;
}

// A row of logits whose k + 1 best are at least 1e-3 apart (so the choice is not a near-tie).
std::vector<float> separatedRow(std::mt19937& rng, int32_t n, int32_t k) {
  std::normal_distribution<float> normal(0.0f, 2.0f);
  for (;;) {
    std::vector<float> row(static_cast<size_t>(n));
    for (float& v : row) v = normal(rng);
    std::vector<float> sorted = row;
    std::sort(sorted.rbegin(), sorted.rend());
    bool apart = true;
    for (int32_t i = 0; i < std::min(k, n - 1); ++i) apart = apart && sorted[size_t(i)] - sorted[size_t(i) + 1] > 1e-3f;
    if (apart) return row;
  }
}

void checkGrouping(const model::ModelConfig& c, const model::ExpertRouting& r, int64_t tokens) {
  const int32_t n = c.expertCount, k = c.expertUsedCount;
  const int32_t pairs = int32_t(tokens) * k;
  QCOMPARE(r.firstRow[0], 0);
  QCOMPARE(r.firstRow[size_t(n)], pairs);
  std::vector<int> seen(size_t(pairs), 0);
  for (int64_t t = 0; t < tokens; ++t) {
    for (int32_t rank = 0; rank < k; ++rank) {
      const int32_t e = r.chosen[size_t(t * k + rank)], row = r.groupedRow[size_t(t * k + rank)];
      QVERIFY(row >= r.firstRow[size_t(e)] && row < r.firstRow[size_t(e) + 1]);
      QCOMPARE(r.rowToken[size_t(row)], int32_t(t));
      ++seen[size_t(row)];
    }
  }
  QVERIFY(std::all_of(seen.begin(), seen.end(), [](int s) { return s == 1; }));
  for (int32_t e = 0; e < n; ++e)
    for (int32_t row = r.firstRow[size_t(e)] + 1; row < r.firstRow[size_t(e) + 1]; ++row)
      QVERIFY(r.rowToken[size_t(row) - 1] < r.rowToken[size_t(row)]);
}

std::vector<float> randomVector(std::mt19937& rng, size_t n, float scale) {
  std::normal_distribution<float> normal(0.0f, scale);
  std::vector<float> v(n);
  for (float& x : v) x = normal(rng);
  return v;
}

cpu::WeightMatrix f32Matrix(const std::vector<float>& data, int64_t cols) {
  cpu::WeightMatrix w;
  w.type = gguf::GgmlType::F32;
  w.cols = cols;
  w.rows = int64_t(data.size()) / cols;
  w.rowBytes = size_t(cols) * sizeof(float);
  w.data = reinterpret_cast<const uint8_t*>(data.data());
  return w;
}

// y (rows, out) = x (rows, in) W^T for W (out, in), in float with a double accumulator.
void product(const float* w, int64_t out, int64_t in, const float* x, int64_t rows, float* y) {
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t o = 0; o < out; ++o) {
      double sum = 0;
      for (int64_t j = 0; j < in; ++j) sum += double(w[o * in + j]) * x[i * in + j];
      y[i * out + o] = float(sum);
    }
}

}  // namespace

class TestExpertRouting : public QObject {
  Q_OBJECT

 private slots:
  void qwen3moeByHand() {
    const model::ModelConfig c = moeConfig(4, 2, false);
    std::vector<float> scores = {std::log(3.0f), 0.0f, std::log(4.0f), std::log(2.0f)};
    model::ExpertRouting r;
    model::routeExperts(c, scores.data(), 1, nullptr, r);
    QCOMPARE(r.chosen[0], 2);
    QCOMPARE(r.chosen[1], 0);
    QVERIFY(std::abs(r.weights[0] - 4.0f / 7.0f) < 1e-6f);
    QVERIFY(std::abs(r.weights[1] - 3.0f / 7.0f) < 1e-6f);
  }

  void gptOssByHand() {
    const model::ModelConfig c = moeConfig(4, 2, true);
    std::vector<float> scores = {1.0f, 3.0f, 2.0f, 3.0f};
    const float bias[] = {0.0f, 0.0f, 0.0f, 0.5f};
    model::ExpertRouting r;
    model::routeExperts(c, scores.data(), 1, bias, r);
    QCOMPARE(r.chosen[0], 3);  // 3.5
    QCOMPARE(r.chosen[1], 1);  // 3
    const float high = 1.0f / (1.0f + std::exp(-0.5f));
    QVERIFY(std::abs(r.weights[0] - high) < 1e-6f);
    QVERIFY(std::abs(r.weights[1] - (1.0f - high)) < 1e-6f);
  }

  void tieGoesToTheLowerIndex() {
    const model::ModelConfig c = moeConfig(3, 1, false);
    std::vector<float> scores = {1.0f, 2.0f, 2.0f};
    model::ExpertRouting r;
    model::routeExperts(c, scores.data(), 1, nullptr, r);
    QCOMPARE(r.chosen[0], 1);
  }

  void matchesTheGatingInDouble_data() {
    QTest::addColumn<bool>("gptOss");
    QTest::addColumn<int>("experts");
    QTest::addColumn<int>("used");
    QTest::addColumn<double>("scale");
    QTest::newRow("qwen3moe 8 top 2") << false << 8 << 2 << 1.0;
    QTest::newRow("qwen3moe 128 top 8") << false << 128 << 8 << 1.0;
    QTest::newRow("scaled, not renormalised 16 top 4") << false << 16 << 4 << 2.5;
    QTest::newRow("gpt-oss 32 top 4") << true << 32 << 4 << 1.0;
  }
  void matchesTheGatingInDouble() {
    QFETCH(bool, gptOss);
    QFETCH(int, experts);
    QFETCH(int, used);
    QFETCH(double, scale);
    model::ModelConfig c = moeConfig(experts, used, gptOss);
    if (scale != 1.0) {
      c.expertWeightsScale = float(scale);
      c.expertWeightsNorm = false;
    }
    std::mt19937 rng(uint32_t(experts * 31 + used));
    constexpr int64_t kTokens = 37;
    std::vector<float> scores, original;
    for (int64_t t = 0; t < kTokens; ++t) {
      const auto row = separatedRow(rng, experts, used);
      scores.insert(scores.end(), row.begin(), row.end());
    }
    const std::vector<float> bias = gptOss ? randomVector(rng, size_t(experts), 0.1f) : std::vector<float>{};
    original = scores;
    model::ExpertRouting r;
    model::routeExperts(c, scores.data(), kTokens, bias.empty() ? nullptr : bias.data(), r);
    std::vector<int32_t> chosen;
    std::vector<double> weights;
    for (int64_t t = 0; t < kTokens; ++t) {
      // The bias may close a gap; the reference sees the same biased values.
      referenceGating(c, std::vector<double>(original.begin() + t * experts, original.begin() + (t + 1) * experts),
                      bias.empty() ? nullptr : bias.data(), chosen, weights);
      for (int32_t rank = 0; rank < used; ++rank) {
        QCOMPARE(r.chosen[size_t(t * used + rank)], chosen[size_t(rank)]);
        QVERIFY2(std::abs(r.weights[size_t(t * used + rank)] - weights[size_t(rank)]) <= 1e-6 * std::max(1.0, weights[size_t(rank)]),
                 qPrintable(QString("token %1 rank %2: %3 vs %4").arg(t).arg(rank).arg(r.weights[size_t(t * used + rank)]).arg(weights[size_t(rank)])));
      }
    }
    checkGrouping(c, r, kTokens);
  }

  // The routing buffers only grow: a smaller step after a larger one reuses them.
  void smallerStepAfterALargerOne() {
    const model::ModelConfig c = moeConfig(8, 2, false);
    std::mt19937 rng(5);
    model::ExpertRouting r;
    std::vector<float> big = randomVector(rng, 8 * 20, 1.0f), small = randomVector(rng, 8 * 3, 1.0f);
    model::routeExperts(c, big.data(), 20, nullptr, r);
    model::routeExperts(c, small.data(), 3, nullptr, r);
    checkGrouping(c, r, 3);
  }

  // The CUDA backend's plan, on the host, against the CPU backend's mixture of experts.
  void groupedPlanMatchesTheCpuBackend_data() {
    QTest::addColumn<bool>("gptOss");
    QTest::newRow("qwen3moe") << false;
    QTest::newRow("gpt-oss") << true;
  }
  void groupedPlanMatchesTheCpuBackend() {
    QFETCH(bool, gptOss);
    const model::ModelConfig c = moeConfig(8, gptOss ? 4 : 2, gptOss);
    const int64_t n = c.expertCount, embd = c.embeddingDim, ff = c.expertFfnDim, k = c.expertUsedCount;
    constexpr int64_t kTokens = 11;
    std::mt19937 rng(gptOss ? 17 : 3);
    const auto router = randomVector(rng, size_t(n * embd), 0.5f);
    const auto gate = randomVector(rng, size_t(n * ff * embd), 0.5f);
    const auto up = randomVector(rng, size_t(n * ff * embd), 0.5f);
    const auto down = randomVector(rng, size_t(n * embd * ff), 0.5f);
    std::vector<float> routerBias, gateBias, upBias, downBias;
    if (gptOss) {
      routerBias = randomVector(rng, size_t(n), 0.5f);
      gateBias = randomVector(rng, size_t(n * ff), 4.0f);  // large enough for the clamp at 7
      upBias = randomVector(rng, size_t(n * ff), 4.0f);
      downBias = randomVector(rng, size_t(n * embd), 0.5f);
    }
    const auto x = randomVector(rng, size_t(kTokens * embd), 1.0f);

    cpu::ThreadPool pool(1);
    cpu::CpuExpertWeights weights{f32Matrix(router, embd), f32Matrix(gate, embd), f32Matrix(up, embd),
                                  f32Matrix(down, ff), int32_t(n), routerBias, gateBias, upBias, downBias};
    std::vector<float> expected(size_t(kTokens * embd));
    cpu::ExpertScratch scratch;
    cpu::MatmulScratch matmulScratch;
    cpu::expertFeedForward(pool, c, weights, x.data(), kTokens, expected.data(), scratch, matmulScratch);

    // The plan of cuda_backend_experts.cpp, step by step.
    std::vector<float> logits(size_t(kTokens * n));
    product(router.data(), n, embd, x.data(), kTokens, logits.data());
    model::ExpertRouting r;
    model::routeExperts(c, logits.data(), kTokens, routerBias.empty() ? nullptr : routerBias.data(), r);
    const int64_t pairs = kTokens * k;
    std::vector<float> input(size_t(pairs * embd)), g(size_t(pairs * ff)), u(size_t(pairs * ff)),
        out(size_t(pairs * embd));
    for (int64_t row = 0; row < pairs; ++row)
      std::copy_n(x.begin() + r.rowToken[size_t(row)] * embd, embd, input.begin() + row * embd);
    for (int64_t e = 0; e < n; ++e) {
      const int64_t first = r.firstRow[size_t(e)], count = r.firstRow[size_t(e) + 1] - first;
      if (count == 0) continue;
      product(gate.data() + e * ff * embd, ff, embd, input.data() + first * embd, count, g.data() + first * ff);
      product(up.data() + e * ff * embd, ff, embd, input.data() + first * embd, count, u.data() + first * ff);
      for (int64_t i = first * ff; i < (first + count) * ff; ++i) {
        float gv = g[size_t(i)] + (gateBias.empty() ? 0.0f : gateBias[size_t(e * ff + i % ff)]);
        float uv = u[size_t(i)] + (upBias.empty() ? 0.0f : upBias[size_t(e * ff + i % ff)]);
        if (gptOss) {
          gv = std::min(gv, 7.0f);
          uv = std::clamp(uv, -7.0f, 7.0f);
          g[size_t(i)] = gv / (1.0f + std::exp(1.702f * -gv)) * (uv + 1.0f);
        } else {
          g[size_t(i)] = gv / (1.0f + std::exp(-gv)) * uv;
        }
      }
      product(down.data() + e * embd * ff, embd, ff, g.data() + first * ff, count, out.data() + first * embd);
      if (!downBias.empty())
        for (int64_t i = first * embd; i < (first + count) * embd; ++i) out[size_t(i)] += downBias[size_t(e * embd + i % embd)];
    }
    double worst = 0, largest = 0;
    for (int64_t t = 0; t < kTokens; ++t)
      for (int64_t i = 0; i < embd; ++i) {
        float sum = 0.0f;
        for (int64_t rank = 0; rank < k; ++rank) {
          const float product = out[size_t(r.groupedRow[size_t(t * k + rank)] * embd + i)] * r.weights[size_t(t * k + rank)];
          sum = rank == 0 ? product : sum + product;
        }
        worst = std::max(worst, std::abs(double(sum) - expected[size_t(t * embd + i)]));
        largest = std::max(largest, std::abs(double(expected[size_t(t * embd + i)])));
      }
    qInfo("worst |diff| %.3g of largest |y| %.3g", worst, largest);
    QVERIFY(largest > 0.1);
    QVERIFY2(worst <= 1e-5 * largest, qPrintable(QString("worst %1 of %2").arg(worst).arg(largest)));
  }
};

QTEST_APPLESS_MAIN(TestExpertRouting)
#include "test_expert_routing.moc"
