#include "model/expert_routing.h"

#include <algorithm>
#include <cmath>

namespace ember::model {
namespace {

// Softmax in place in ggml's order: exp(x - max) in float, summed in double, times float 1/sum.
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

void chooseExperts(const ModelConfig& c, const float* scores, int32_t* chosen, float* weights) {
  const int32_t n = c.expertCount, k = c.expertUsedCount;
  for (int32_t r = 0; r < k; ++r) {  // k is small (2-8): selection by scanning
    int32_t best = -1;
    for (int32_t e = 0; e < n; ++e) {
      if (std::find(chosen, chosen + r, e) != chosen + r) continue;
      if (best < 0 || scores[e] > scores[best]) best = e;
    }
    chosen[r] = best;
    weights[r] = scores[best];
  }
  if (c.expertGating == ExpertGating::SoftmaxOfChosen) softmaxRow(weights, k);
  if (c.expertWeightsNorm) {
    double sum = 0.0;  // ggml_sum_rows sums in double
    for (int32_t r = 0; r < k; ++r) sum += double(weights[r]);
    const float divisor = std::max(float(sum), 6.103515625e-5f);
    for (int32_t r = 0; r < k; ++r) weights[r] /= divisor;
  }
  if (c.expertWeightsScale != 1.0f)
    for (int32_t r = 0; r < k; ++r) weights[r] *= c.expertWeightsScale;
}

template <typename T>
void grow(std::vector<T>& v, int64_t size) {
  if (int64_t(v.size()) < size) v.resize(size_t(size));
}

}  // namespace

void routeExperts(const ModelConfig& c, float* scores, int64_t tokens, const float* routerBias,
                  ExpertRouting& out) {
  const int64_t n = c.expertCount, k = c.expertUsedCount, pairs = tokens * k;
  grow(out.chosen, pairs);
  grow(out.weights, pairs);
  grow(out.firstRow, n + 1);
  grow(out.groupedRow, pairs);
  grow(out.rowToken, pairs);
  grow(out.cursor, n);
  for (int64_t t = 0; t < tokens; ++t) {
    float* row = scores + t * n;
    if (routerBias)
      for (int64_t e = 0; e < n; ++e) row[e] += routerBias[e];
    if (c.expertGating == ExpertGating::Softmax) softmaxRow(row, n);
    chooseExperts(c, row, out.chosen.data() + t * k, out.weights.data() + t * k);
  }
  // Counting sort of the pairs by expert; within an expert the tokens stay in order.
  std::fill(out.firstRow.begin(), out.firstRow.begin() + n + 1, 0);
  for (int64_t i = 0; i < pairs; ++i) ++out.firstRow[size_t(out.chosen[size_t(i)]) + 1];
  for (int64_t e = 0; e < n; ++e) out.firstRow[size_t(e) + 1] += out.firstRow[size_t(e)];
  std::copy(out.firstRow.begin(), out.firstRow.begin() + n, out.cursor.begin());
  for (int64_t i = 0; i < pairs; ++i) {
    const int32_t row = out.cursor[size_t(out.chosen[size_t(i)])]++;
    out.groupedRow[size_t(i)] = row;
    out.rowToken[size_t(row)] = int32_t(i / k);
  }
}

}  // namespace ember::model
