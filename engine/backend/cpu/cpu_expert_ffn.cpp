#include "backend/cpu/cpu_expert_ffn.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "backend/cpu/ops/activations.h"
#include "ember/error.h"

namespace ember::cpu {
namespace {

// Softmax over one row of router logits, in place, in ggml's order (exp of x - max in float,
// summed in double, then every value multiplied by the float 1/sum).
void softmaxRow(float* p, int64_t n) {
  const float max = *std::max_element(p, p + n);
  double sum = 0.0;
  for (int64_t i = 0; i < n; ++i) {
    p[i] = std::exp(p[i] - max);
    sum += double(p[i]);
  }
  const float scale = float(1.0 / sum);
  for (int64_t i = 0; i < n; ++i) p[i] *= scale;
}

// The router's choice for one token from its scores (probabilities, or gpt-oss's logits): the
// k best experts, best first (a tie goes to the lower index), and their weights, softmaxed among
// themselves (gpt-oss), renormalised and scaled as the config says.
void chooseExperts(const model::ModelConfig& c, const float* probabilities, int32_t* chosen,
                   float* weights) {
  const int32_t n = c.expertCount, k = c.expertUsedCount;
  for (int32_t r = 0; r < k; ++r) {  // k is small (2-8): selection by scanning
    int32_t best = -1;
    for (int32_t e = 0; e < n; ++e) {
      if (std::find(chosen, chosen + r, e) != chosen + r) continue;
      if (best < 0 || probabilities[e] > probabilities[best]) best = e;
    }
    chosen[r] = best;
    weights[r] = probabilities[best];
  }
  if (c.expertGating == model::ExpertGating::SoftmaxOfChosen) softmaxRow(weights, k);
  if (c.expertWeightsNorm) {
    double sum = 0.0;  // ggml_sum_rows sums in double
    for (int32_t r = 0; r < k; ++r) sum += double(weights[r]);
    const float divisor = std::max(float(sum), 6.103515625e-5f);
    for (int32_t r = 0; r < k; ++r) weights[r] /= divisor;
  }
  if (c.expertWeightsScale != 1.0f)
    for (int32_t r = 0; r < k; ++r) weights[r] *= c.expertWeightsScale;
}

// y (width) += row `expert` of bias (n_expert, width), if there is a bias.
void addRow(const std::vector<float>& bias, int64_t expert, int64_t width, float* y) {
  if (bias.empty()) return;
  const float* b = bias.data() + expert * width;
  for (int64_t i = 0; i < width; ++i) y[i] += b[i];
}

template <typename T>
void grow(std::vector<T>& buffer, int64_t size) {
  if (int64_t(buffer.size()) < size) buffer.resize(size_t(size));
}

}  // namespace

WeightMatrix stackedExpertMatrix(const gguf::TensorInfo& tensor) {
  if (tensor.shape.size() != 3)
    throw Error("tensor '" + tensor.name + "' should have 3 dimensions (one matrix per expert)");
  gguf::TensorInfo flat = tensor;
  flat.shape = {tensor.shape[0], tensor.shape[1] * tensor.shape[2]};
  return weightMatrix(flat);
}

WeightMatrix matrixRows(const WeightMatrix& stacked, int64_t first, int64_t count) {
  WeightMatrix w = stacked;
  w.data += size_t(first) * w.rowBytes;
  w.rows = count;
  w.repacked = nullptr;
  return w;
}

size_t ExpertScratch::bytes() const {
  return sizeof(float) * (probabilities.size() + weights.size() + input.size() + gate.size() +
                          up.size() + output.size()) +
         sizeof(int32_t) * (chosen.size() + firstRow.size() + cursor.size() + groupedRow.size() + rowToken.size());
}

void expertFeedForward(ThreadPool& pool, const model::ModelConfig& c, const CpuExpertWeights& w,
                       const float* x, int64_t tokens, float* y, ExpertScratch& s,
                       MatmulScratch& matmulScratch) {
  const int64_t n = c.expertCount, k = c.expertUsedCount, embd = c.embeddingDim;
  const int64_t ff = c.expertFfnDim, pairs = tokens * k;
  grow(s.probabilities, tokens * n);
  grow(s.chosen, pairs);
  grow(s.weights, pairs);
  grow(s.firstRow, n + 1);
  grow(s.cursor, n);
  grow(s.groupedRow, pairs);
  grow(s.rowToken, pairs);
  grow(s.input, pairs * embd);
  grow(s.gate, pairs * ff);
  grow(s.up, pairs * ff);
  grow(s.output, pairs * embd);

  // Route: probabilities (T, n_expert), then each token's k experts and weights.
  matmul(pool, w.router, x, tokens, s.probabilities.data(), matmulScratch);
  pool.parallelFor(tokens, 16, [&](int64_t begin, int64_t end, int) {
    for (int64_t t = begin; t < end; ++t) {
      float* scores = s.probabilities.data() + t * n;
      if (!w.routerBias.empty())
        for (int64_t e = 0; e < n; ++e) scores[e] += w.routerBias[size_t(e)];
      if (c.expertGating == model::ExpertGating::Softmax) softmaxRow(scores, n);
      chooseExperts(c, s.probabilities.data() + t * n, s.chosen.data() + t * k,
                    s.weights.data() + t * k);
    }
  });

  // Group the (token, rank) pairs by expert, tokens in order within an expert.
  std::fill(s.firstRow.begin(), s.firstRow.begin() + n + 1, 0);
  for (int64_t i = 0; i < pairs; ++i) ++s.firstRow[size_t(s.chosen[size_t(i)]) + 1];
  for (int64_t e = 0; e < n; ++e) s.firstRow[size_t(e) + 1] += s.firstRow[size_t(e)];
  std::copy(s.firstRow.begin(), s.firstRow.begin() + n, s.cursor.begin());
  for (int64_t i = 0; i < pairs; ++i) {
    const int32_t row = s.cursor[size_t(s.chosen[size_t(i)])]++;
    s.groupedRow[size_t(i)] = row;
    s.rowToken[size_t(row)] = int32_t(i / k);
  }
  pool.parallelFor(pairs, 16, [&](int64_t begin, int64_t end, int) {
    for (int64_t row = begin; row < end; ++row)
      std::memcpy(s.input.data() + row * embd, x + int64_t(s.rowToken[size_t(row)]) * embd,
                  sizeof(float) * size_t(embd));
  });

  // Each chosen expert over its tokens: down(act(gate(x)) * up(x)).
  for (int64_t e = 0; e < n; ++e) {
    const int64_t first = s.firstRow[size_t(e)], count = s.firstRow[size_t(e) + 1] - first;
    if (count == 0) continue;
    const WeightMatrix gate = matrixRows(w.gate, e * ff, ff);
    const WeightMatrix up = matrixRows(w.up, e * ff, ff);
    const WeightMatrix down = matrixRows(w.down, e * embd, embd);
    const MatmulTarget targets[] = {{&gate, s.gate.data() + first * ff},
                                    {&up, s.up.data() + first * ff}};
    matmulShared(pool, targets, s.input.data() + first * embd, count, matmulScratch);
    pool.parallelFor(count, 1, [&](int64_t begin, int64_t end, int) {
      for (int64_t row = first + begin; row < first + end; ++row) {
        float* g = s.gate.data() + row * ff;
        float* u = s.up.data() + row * ff;
        addRow(w.gateBias, e, ff, g);
        addRow(w.upBias, e, ff, u);
        if (c.ffnActivation == model::FfnActivation::GeluTanhGlu)
          ops::geluTanhGluRow(g, u, g, ff);
        else if (c.ffnActivation == model::FfnActivation::SwigluOai)
          ops::swigluOaiRow(g, u, g, ff);
        else
          ops::siluGluRow(g, u, g, ff);
      }
    });
    matmul(pool, down, s.gate.data() + first * ff, count, s.output.data() + first * embd,
           matmulScratch);
    if (!w.downBias.empty())
      for (int64_t row = first; row < first + count; ++row)
        addRow(w.downBias, e, embd, s.output.data() + row * embd);
  }

  // y = sum over ranks of weight * the expert's output, added in rank order as llama.cpp adds
  // its views (each product rounded to float first).
  pool.parallelFor(tokens, 1, [&](int64_t begin, int64_t end, int) {
    for (int64_t t = begin; t < end; ++t) {
      float* out = y + t * embd;
      for (int64_t r = 0; r < k; ++r) {
        const float weight = s.weights[size_t(t * k + r)];
        const float* o = s.output.data() + int64_t(s.groupedRow[size_t(t * k + r)]) * embd;
        for (int64_t i = 0; i < embd; ++i) {
          const float product = o[i] * weight;
          out[i] = r == 0 ? product : out[i] + product;
        }
      }
    }
  });
}

}  // namespace ember::cpu
