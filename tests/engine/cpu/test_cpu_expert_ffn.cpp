// The CPU mixture-of-experts feed-forward (backend/cpu/cpu_expert_ffn.h) on small F32 weights:
// - a case worked by hand (two experts chosen of three, renormalised 3:1 weights, SiLU of +-1);
// - random cases against the formula of llama.cpp's build_moe_ffn evaluated per token in double
//   (softmax over all experts, top k, optional renormalisation and scale, weighted sum), with and
//   without renormalisation, and gpt-oss's variant (biased router, softmax over the top-k logits,
//   biased experts, the SwiGLU clamped at 7: ggml's swiglu_oai);
// - each token alone equal bit for bit to the same token in a step of several;
// - an expert that no token chooses is never read: its matrices are NaN and the output is finite;
// - quantized experts (Q8_0, Q4_K, Q6_K) against the same reference on their dequantized values,
//   within the error of the 8-bit activations: a wrong expert's rows would miss by 100%;
// - an MXFP4 block (gpt-oss's expert type) decoded by hand from ggml's definition (E8M0 scale
//   halved, doubled E2M1 code points), and its dot product with a Q8_0-prepared row.
#include <QtTest>
#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <random>
#include <vector>

#include "backend/cpu/cpu_expert_ffn.h"
#include "cpu_test_support.h"

using namespace ember;

namespace {

// F32 matrices of every expert stacked, with their storage.
struct Experts {
  int64_t embd, ff, count;
  std::vector<float> router, gate, up, down;  // (n, embd), (n*ff, embd) x2, (n*embd, ff)
  std::vector<float> routerBias, gateBias, upBias, downBias;  // empty, or (n), (n, ff) x2, (n, embd)
  cpu::CpuExpertWeights view() const {
    const auto matrix = [](const std::vector<float>& data, int64_t cols) {
      cpu::WeightMatrix w;
      w.type = gguf::GgmlType::F32;
      w.cols = cols;
      w.rows = int64_t(data.size()) / cols;
      w.rowBytes = size_t(cols) * sizeof(float);
      w.data = reinterpret_cast<const uint8_t*>(data.data());
      return w;
    };
    return {matrix(router, embd), matrix(gate, embd), matrix(up, embd), matrix(down, ff),
            int32_t(count), routerBias, gateBias, upBias, downBias};
  }
};

model::ModelConfig moeConfig(int32_t embd, int32_t experts, int32_t used, int32_t ff) {
  model::ModelConfig c;
  c.embeddingDim = embd;
  c.expertCount = experts;
  c.expertUsedCount = used;
  c.expertFfnDim = ff;
  c.expertWeightsNorm = true;
  return c;
}

std::vector<float> run(cpu::ThreadPool& pool, const model::ModelConfig& c, const Experts& e,
                       const std::vector<float>& x, int64_t tokens) {
  std::vector<float> y(size_t(tokens * c.embeddingDim));
  cpu::ExpertScratch scratch;
  cpu::MatmulScratch matmulScratch;
  cpu::expertFeedForward(pool, c, e.view(), x.data(), tokens, y.data(), scratch, matmulScratch);
  return y;
}

double silu(double v) { return v / (1.0 + std::exp(-v)); }

// ggml's swiglu_oai: min(g, 7) * sigmoid(1.702 min(g, 7)) * (clamp(u, -7, 7) + 1).
double swigluOai(double g, double u) {
  g = std::min(g, 7.0);
  u = std::clamp(u, -7.0, 7.0);
  return g / (1.0 + std::exp(-1.702 * g)) * (u + 1.0);
}

double at(const std::vector<float>& bias, size_t i) { return bias.empty() ? 0.0 : double(bias[i]); }

// llama.cpp's build_moe_ffn for one token, in double: y = sum over the top k experts of
// weight * down(silu(gate x) * up x).
std::vector<double> referenceToken(const model::ModelConfig& c, const Experts& e, const float* x) {
  const int64_t n = e.count, embd = e.embd, ff = e.ff;
  std::vector<double> p(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    p[size_t(i)] = at(e.routerBias, size_t(i));
    for (int64_t j = 0; j < embd; ++j) p[size_t(i)] += double(e.router[size_t(i * embd + j)]) * x[j];
  }
  const auto softmax = [](double* v, size_t count) {
    const double max = *std::max_element(v, v + count);
    double sum = 0;
    for (size_t i = 0; i < count; ++i) sum += (v[i] = std::exp(v[i] - max));
    for (size_t i = 0; i < count; ++i) v[i] /= sum;
  };
  const bool ofChosen = c.expertGating == model::ExpertGating::SoftmaxOfChosen;
  if (!ofChosen) softmax(p.data(), p.size());
  std::vector<int64_t> order(static_cast<size_t>(n));
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return p[size_t(a)] > p[size_t(b)]; });
  if (ofChosen) {  // the softmax of the k best logits takes their places
    std::vector<double> chosen;
    for (int32_t r = 0; r < c.expertUsedCount; ++r) chosen.push_back(p[size_t(order[size_t(r)])]);
    softmax(chosen.data(), chosen.size());
    for (int32_t r = 0; r < c.expertUsedCount; ++r) p[size_t(order[size_t(r)])] = chosen[size_t(r)];
  }
  double chosenSum = 0;
  for (int32_t r = 0; r < c.expertUsedCount; ++r) chosenSum += p[size_t(order[size_t(r)])];
  std::vector<double> y(static_cast<size_t>(embd));
  for (int32_t r = 0; r < c.expertUsedCount; ++r) {
    const int64_t ex = order[size_t(r)];
    double weight = p[size_t(ex)] / (c.expertWeightsNorm ? chosenSum : 1.0);
    weight *= c.expertWeightsScale;
    std::vector<double> act(static_cast<size_t>(ff));
    for (int64_t f = 0; f < ff; ++f) {
      double g = at(e.gateBias, size_t(ex * ff + f)), u = at(e.upBias, size_t(ex * ff + f));
      for (int64_t j = 0; j < embd; ++j) {
        g += double(e.gate[size_t((ex * ff + f) * embd + j)]) * x[j];
        u += double(e.up[size_t((ex * ff + f) * embd + j)]) * x[j];
      }
      act[size_t(f)] = c.ffnActivation == model::FfnActivation::SwigluOai ? swigluOai(g, u) : silu(g) * u;
    }
    for (int64_t o = 0; o < embd; ++o) {
      double d = at(e.downBias, size_t(ex * embd + o));
      for (int64_t f = 0; f < ff; ++f) d += double(e.down[size_t((ex * embd + o) * ff + f)]) * act[size_t(f)];
      y[size_t(o)] += weight * d;
    }
  }
  return y;
}

// Random experts; the last expert's router row is -10 everywhere and its matrices NaN, so with
// positive inputs its logit is far below the others' and it must never be read.
Experts randomExperts(int64_t embd, int64_t ff, int64_t count, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  Experts e{embd, ff, count, {}, {}, {}, {}, {}, {}, {}, {}};
  const auto fill = [&](std::vector<float>& v, size_t size, float scale) {
    v.resize(size);
    for (float& f : v) f = normal(rng) * scale;
  };
  fill(e.router, size_t(count * embd), 1.0f / std::sqrt(float(embd)));
  fill(e.gate, size_t(count * ff * embd), 1.0f / std::sqrt(float(embd)));
  fill(e.up, size_t(count * ff * embd), 1.0f / std::sqrt(float(embd)));
  fill(e.down, size_t(count * embd * ff), 1.0f / std::sqrt(float(ff)));
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const int64_t last = count - 1;
  std::fill_n(e.router.begin() + last * embd, embd, -10.0f);
  std::fill_n(e.gate.begin() + last * ff * embd, ff * embd, nan);
  std::fill_n(e.up.begin() + last * ff * embd, ff * embd, nan);
  std::fill_n(e.down.begin() + last * embd * ff, embd * ff, nan);
  return e;
}

}  // namespace

class TestCpuExpertFfn : public QObject {
  Q_OBJECT

 private slots:
  // x = [1, 0]; router logits [ln 3, 0, -30]: softmax ~ [3/4, 1/4, 0] of the two best, so
  // experts 0 and 1 with weights 3/4 and 1/4 after renormalisation; expert 2 is NaN.
  // Expert 0: gate 1, up 2, down [1, -1]: silu(1) * 2 = 1.4621171573 -> [1.4621171573, -1.4621171573].
  // Expert 1: gate -1, up 4, down [0.5, 2]: silu(-1) * 4 = -1.0757656854 -> [-0.5378828427, -2.1515313708].
  // y = 3/4 * expert 0 + 1/4 * expert 1 = [0.9621171573, -1.6344707107].
  void handWorked() {
    const float nan = std::numeric_limits<float>::quiet_NaN();
    Experts e{2, 1, 3, {}, {}, {}, {}, {}, {}, {}, {}};
    e.router = {std::log(3.0f), 0.0f, 0.0f, 0.0f, -30.0f, 0.0f};
    e.gate = {1.0f, 0.0f, -1.0f, 0.0f, nan, nan};
    e.up = {2.0f, 0.0f, 4.0f, 0.0f, nan, nan};
    e.down = {1.0f, -1.0f, 0.5f, 2.0f, nan, nan};  // (expert, output row, ff = 1)
    cpu::ThreadPool pool(2);
    const std::vector<float> y = run(pool, moeConfig(2, 3, 2, 1), e, {1.0f, 0.0f}, 1);
    QVERIFY(std::abs(y[0] - 0.9621171573f) < 2e-6f);
    QVERIFY(std::abs(y[1] - -1.6344707107f) < 2e-6f);
  }

  void matchesReference_data() {
    QTest::addColumn<bool>("renormalise");
    QTest::addColumn<float>("scale");
    QTest::addColumn<int>("used");
    QTest::addColumn<bool>("gptOss");  // biases, softmax of the chosen logits, clamped SwiGLU
    QTest::newRow("top-2 renormalised (qwen3moe)") << true << 1.0f << 2 << false;
    QTest::newRow("top-3 renormalised") << true << 1.0f << 3 << false;
    QTest::newRow("top-2 raw probabilities, scaled 2.5") << false << 2.5f << 2 << false;
    QTest::newRow("top-2 gpt-oss") << false << 1.0f << 2 << true;
    QTest::newRow("top-4 gpt-oss") << false << 1.0f << 4 << true;
  }

  void matchesReference() {
    QFETCH(bool, renormalise);
    QFETCH(float, scale);
    QFETCH(int, used);
    QFETCH(bool, gptOss);
    constexpr int64_t kEmbd = 32, kFf = 16, kExperts = 7, kTokens = 23;
    Experts e = randomExperts(kEmbd, kFf, kExperts, 11);
    model::ModelConfig c = moeConfig(kEmbd, kExperts, used, kFf);
    c.expertWeightsNorm = renormalise;
    c.expertWeightsScale = scale;
    if (gptOss) {
      c.expertGating = model::ExpertGating::SoftmaxOfChosen;
      c.ffnActivation = model::FfnActivation::SwigluOai;
      // Biases of N(0, 4^2) for gate and up, so the clamp at 7 bites; the NaN expert keeps NaN.
      std::mt19937 rng(9);
      std::normal_distribution<float> normal(0.0f, 1.0f);
      const auto bias = [&](size_t size, float scale) {
        std::vector<float> b(size);
        for (float& v : b) v = normal(rng) * scale;
        return b;
      };
      e.routerBias = bias(kExperts, 0.1f);
      e.routerBias[kExperts - 1] = -10.0f;
      e.gateBias = bias(kExperts * kFf, 4.0f);
      e.upBias = bias(kExperts * kFf, 4.0f);
      e.downBias = bias(kExperts * kEmbd, 0.1f);
    }
    std::mt19937 rng(5);
    std::uniform_real_distribution<float> positive(0.1f, 1.0f);
    std::vector<float> x(size_t(kTokens * kEmbd));
    for (float& v : x) v = positive(rng);

    cpu::ThreadPool pool(2);
    const std::vector<float> together = run(pool, c, e, x, kTokens);
    double worst = 0;
    for (int64_t t = 0; t < kTokens; ++t) {
      const std::vector<double> ref = referenceToken(c, e, x.data() + t * kEmbd);
      for (int64_t i = 0; i < kEmbd; ++i) {
        const float ours = together[size_t(t * kEmbd + i)];
        QVERIFY2(std::isfinite(ours), "the never-chosen NaN expert was read");
        worst = std::max(worst, std::abs(double(ours) - ref[size_t(i)]));
      }
      const std::vector<float> xt(x.begin() + t * kEmbd, x.begin() + (t + 1) * kEmbd);
      const std::vector<float> alone = run(pool, c, e, xt, 1);
      QVERIFY2(std::equal(alone.begin(), alone.end(), together.begin() + t * kEmbd),
               qPrintable(QString("token %1 alone differs from the batched step").arg(t)));
    }
    QVERIFY2(worst < 1e-5, qPrintable(QString("worst |diff| %1").arg(worst)));
  }

  // e = 130: the scale 2^(130 - 127) = 8, halved to 4 against the doubled code points.
  // qs[0] = 0x71: element 0 = code 1 (1) * 4 = 4, element 16 = code 7 (12) * 4 = 48.
  // qs[1] = 0xF8: element 1 = code 8 (0) = 0, element 17 = code 15 (-12) * 4 = -48.
  // qs[2] = 0x9A: element 2 = code 10 (-2) * 4 = -8, element 18 = code 9 (-1) * 4 = -4.
  // Second block, e = 1 (subnormal): 2^-127 * code 3 (3) for element 32.
  void mxfp4Block() {
    uint8_t blocks[2 * 17] = {};
    blocks[0] = 130;
    blocks[1] = 0x71;
    blocks[2] = 0xF8;
    blocks[3] = 0x9A;
    blocks[17] = 1;
    blocks[18] = 0x03;
    cpu::WeightMatrix w;
    w.type = gguf::GgmlType::MXFP4;
    w.rows = 1;
    w.cols = 64;
    w.rowBytes = sizeof(blocks);
    w.data = blocks;
    float row[64];
    cpu::dequantizeRow(w, 0, row);
    QCOMPARE(row[0], 4.0f);
    QCOMPARE(row[16], 48.0f);
    QCOMPARE(row[1], 0.0f);
    QCOMPARE(row[17], -48.0f);
    QCOMPARE(row[2], -8.0f);
    QCOMPARE(row[18], -4.0f);
    QCOMPARE(row[3], 0.0f);
    QCOMPARE(row[32], 3.0f * std::ldexp(1.0f, -127));
    // The product with x = 1 at elements 0, 16, 17: the row is prepared as Q8_0 (q = 127 and
    // d = 1/127 rounded to fp16), so the integer sum (1 + 12 - 12) * 127 times 4 * d.
    std::vector<float> x(64, 0.0f);
    x[0] = x[16] = x[17] = 1.0f;
    float y = 0;
    cpu::ThreadPool pool(1);
    cpu::MatmulScratch scratch;
    cpu::matmul(pool, w, x.data(), 1, &y, scratch);
    const float d = cpu::quant::fp16ToFloat(cpu::quant::floatToFp16(1.0f / 127.0f));
    const float expected = 4.0f * d * 127.0f;
    QVERIFY2(std::abs(y - expected) < 1e-6f,
             qPrintable(QString("dot %1, expected %2").arg(y).arg(expected)));
  }

  void quantizedExperts_data() {
    QTest::addColumn<int>("type");
    QTest::newRow("Q8_0") << int(gguf::GgmlType::Q8_0);
    QTest::newRow("Q4_K") << int(gguf::GgmlType::Q4_K);
    QTest::newRow("Q6_K") << int(gguf::GgmlType::Q6_K);
  }

  void quantizedExperts() {
    QFETCH(int, type);
    constexpr int64_t kEmbd = 256, kFf = 256, kExperts = 4, kTokens = 9;  // K-quants: 256 a block
    const auto t = gguf::GgmlType(type);
    const test::OwnedMatrix gate = test::randomMatrix(t, kExperts * kFf, kEmbd, 1);
    const test::OwnedMatrix up = test::randomMatrix(t, kExperts * kFf, kEmbd, 2);
    const test::OwnedMatrix down = test::randomMatrix(t, kExperts * kEmbd, kFf, 3);
    // The reference's experts: the same weights dequantized; the router stays F32.
    Experts e = randomExperts(kEmbd, kFf, kExperts, 4);
    const auto dequantized = [](const cpu::WeightMatrix& w) {
      std::vector<float> out(size_t(w.rows * w.cols));
      for (int64_t r = 0; r < w.rows; ++r) cpu::dequantizeRow(w, r, out.data() + r * w.cols);
      return out;
    };
    e.gate = dequantized(gate.view);
    e.up = dequantized(up.view);
    e.down = dequantized(down.view);
    std::fill_n(e.router.begin() + (kExperts - 1) * kEmbd, kEmbd, 0.05f);  // an ordinary expert
    cpu::CpuExpertWeights w = e.view();
    w.gate = gate.view;
    w.up = up.view;
    w.down = down.view;

    const model::ModelConfig c = moeConfig(kEmbd, kExperts, 2, kFf);
    const std::vector<float> x = test::randomActivations(kTokens * kEmbd, 6);
    std::vector<float> y(x.size());
    cpu::ThreadPool pool(2);
    cpu::ExpertScratch scratch;
    cpu::MatmulScratch matmulScratch;
    cpu::expertFeedForward(pool, c, w, x.data(), kTokens, y.data(), scratch, matmulScratch);
    double worst = 0, largest = 0;
    for (int64_t tok = 0; tok < kTokens; ++tok) {
      const std::vector<double> ref = referenceToken(c, e, x.data() + tok * kEmbd);
      for (int64_t i = 0; i < kEmbd; ++i) {
        worst = std::max(worst, std::abs(double(y[size_t(tok * kEmbd + i)]) - ref[size_t(i)]));
        largest = std::max(largest, std::abs(ref[size_t(i)]));
      }
    }
    QVERIFY2(worst <= 0.03 * largest,
             qPrintable(QString("worst |diff| %1 of a largest value %2").arg(worst).arg(largest)));
  }
};

QTEST_GUILESS_MAIN(TestCpuExpertFfn)
#include "test_cpu_expert_ffn.moc"
