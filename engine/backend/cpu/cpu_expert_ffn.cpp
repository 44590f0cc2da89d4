#include "backend/cpu/cpu_expert_ffn.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "backend/cpu/ops/activations.h"
#include "model/expert_routing.h"
#include "ember/error.h"

namespace ember::cpu {
namespace {

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
  return sizeof(float) * (probabilities.size() + routing.weights.size() + input.size() +
                          gate.size() + up.size() + output.size()) +
         sizeof(int32_t) * (routing.chosen.size() + routing.firstRow.size() +
                            routing.cursor.size() + routing.groupedRow.size() +
                            routing.rowToken.size());
}

void expertFeedForward(ThreadPool& pool, const model::ModelConfig& c, const CpuExpertWeights& w,
                       const float* x, int64_t tokens, float* y, ExpertScratch& s,
                       MatmulScratch& matmulScratch) {
  const int64_t n = c.expertCount, k = c.expertUsedCount, embd = c.embeddingDim;
  const int64_t ff = c.expertFfnDim, pairs = tokens * k;
  grow(s.probabilities, tokens * n);
  grow(s.input, pairs * embd);
  grow(s.gate, pairs * ff);
  grow(s.up, pairs * ff);
  grow(s.output, pairs * embd);

  // Route: router logits (T, n_expert), then each token's k experts and weights, and the
  // (token, rank) pairs grouped by expert (the same routing the CUDA backend uses).
  matmul(pool, w.router, x, tokens, s.probabilities.data(), matmulScratch);
  model::routeExperts(c, s.probabilities.data(), tokens,
                      w.routerBias.empty() ? nullptr : w.routerBias.data(), s.routing);
  const model::ExpertRouting& r = s.routing;
  pool.parallelFor(pairs, 16, [&](int64_t begin, int64_t end, int) {
    for (int64_t row = begin; row < end; ++row)
      std::memcpy(s.input.data() + row * embd, x + int64_t(r.rowToken[size_t(row)]) * embd,
                  sizeof(float) * size_t(embd));
  });

  // Each chosen expert over its tokens: down(act(gate(x)) * up(x)).
  for (int64_t e = 0; e < n; ++e) {
    const int64_t first = r.firstRow[size_t(e)], count = r.firstRow[size_t(e) + 1] - first;
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
      for (int64_t rank = 0; rank < k; ++rank) {
        const float weight = r.weights[size_t(t * k + rank)];
        const float* o = s.output.data() + int64_t(r.groupedRow[size_t(t * k + rank)]) * embd;
        for (int64_t i = 0; i < embd; ++i) {
          const float product = o[i] * weight;
          out[i] = rank == 0 ? product : out[i] + product;
        }
      }
    }
  });
}

}  // namespace ember::cpu
