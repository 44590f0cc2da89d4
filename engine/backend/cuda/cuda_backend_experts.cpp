// The CUDA mixture-of-experts feed-forward (its buffers and plan: cuda_expert_ffn.h):
//   logits = router(x)                                   (T, E)      device, then host
//   routing = model::routeExperts(logits)                 chosen, weights, grouping   host
//   in[g]  = x[rowToken[g]]                              (G, n_embd) gathered by expert
//   per chosen expert e over its rows [first, first + n):
//     h = act(gate_e(in) [+ gate bias]) * (up_e(in) [+ up bias])
//     out = down_e(h) [+ down bias]
//   y[t] = sum over ranks r of weight[t, r] * out[groupedRow[t, r]]
#include <algorithm>
#include <cstring>

#include "backend/cuda/cuda_backend.h"

namespace ember::cuda {

namespace k = ember::kernels;

void ExpertBuffers::reserve(const model::ModelConfig& c, int32_t tokens, const CudaSite& site) {
  if (tokens <= capacity_) return;
  const int32_t capacity = std::max({tokens, capacity_ * 2, 64});
  const size_t T = size_t(capacity), E = size_t(c.expertCount), K = size_t(c.expertUsedCount);
  const size_t G = T * K, embd = size_t(c.embeddingDim), ff = size_t(c.expertFfnDim);
  size_t offset = 0;
  const auto place = [&](size_t bytes) {
    const size_t at = offset;
    offset += alignDevice(bytes);
    return at;
  };
  const size_t at[] = {place(T * E * sizeof(float)),     place(G * embd * sizeof(float)),
                       place(G * ff * sizeof(float)),    place(G * ff * sizeof(float)),
                       place(G * embd * sizeof(float)),  place(3 * G * sizeof(int32_t))};
  capacity_ = 0;
  device_.reset();
  host_.reset();
  device_ = DeviceMemory(offset, site, "the mixture-of-experts buffers");
  logits = device_.as<float>(at[0]);
  input = device_.as<float>(at[1]);
  gate = device_.as<float>(at[2]);
  up = device_.as<float>(at[3]);
  output = device_.as<float>(at[4]);
  rowToken = device_.as<int32_t>(at[5]);
  groupedRow = rowToken + G;
  weights = reinterpret_cast<float*>(groupedRow + G);
  host_ = PinnedMemory(alignDevice(T * E * sizeof(float)) + 3 * G * sizeof(int32_t), site,
                       "the mixture-of-experts staging");
  hostLogits = static_cast<float*>(host_.get());
  hostRouting = reinterpret_cast<int32_t*>(static_cast<char*>(host_.get()) +
                                           alignDevice(T * E * sizeof(float)));
  capacity_ = capacity;
}

void CudaBackend::expertFeedForward(int32_t layer, const float* x, int32_t tokens, float* y) {
  const model::ModelConfig& c = config_;
  const DeviceExpertWeights& w = weights_.layers[size_t(layer)].experts;
  const int32_t n = c.expertCount, topK = c.expertUsedCount, embd = c.embeddingDim;
  const int32_t ff = c.expertFfnDim, pairs = tokens * topK;
  ExpertBuffers& b = experts_;
  b.reserve(c, tokens, site_);

  // Route on the host: the logits over, the grouping back.
  project(w.router, x, tokens, b.logits);
  check(cudaMemcpyAsync(b.hostLogits, b.logits, size_t(tokens) * n * sizeof(float),
                        cudaMemcpyDeviceToHost, stream_),
        "cudaMemcpyAsync (router logits)");
  check(cudaStreamSynchronize(stream_), "cudaStreamSynchronize (router logits)");
  model::routeExperts(c, b.hostLogits, tokens, w.routerBias.empty() ? nullptr : w.routerBias.data(),
                      b.routing);
  int32_t* staged = b.hostRouting;
  std::memcpy(staged, b.routing.rowToken.data(), size_t(pairs) * sizeof(int32_t));
  std::memcpy(staged + pairs, b.routing.groupedRow.data(), size_t(pairs) * sizeof(int32_t));
  std::memcpy(staged + 2 * pairs, b.routing.weights.data(), size_t(pairs) * sizeof(float));
  // The device arrays are laid out with the capacity's G, the staging packed with this step's.
  check(cudaMemcpyAsync(b.rowToken, staged, size_t(pairs) * sizeof(int32_t),
                        cudaMemcpyHostToDevice, stream_),
        "cudaMemcpyAsync (expert rows)");
  check(cudaMemcpyAsync(b.groupedRow, staged + pairs, size_t(pairs) * sizeof(int32_t),
                        cudaMemcpyHostToDevice, stream_),
        "cudaMemcpyAsync (expert ranks)");
  check(cudaMemcpyAsync(b.weights, staged + 2 * pairs, size_t(pairs) * sizeof(float),
                        cudaMemcpyHostToDevice, stream_),
        "cudaMemcpyAsync (expert weights)");
  check(k::gatherRows(x, b.rowToken, pairs, embd, b.input, stream_), "gatherRows (experts)");

  for (int32_t e = 0; e < n; ++e) {
    const int32_t first = b.routing.firstRow[size_t(e)];
    const int32_t count = b.routing.firstRow[size_t(e) + 1] - first;
    if (count == 0) continue;
    float* g = b.gate + size_t(first) * ff;
    float* u = b.up + size_t(first) * ff;
    float* out = b.output + size_t(first) * embd;
    const float* in = b.input + size_t(first) * embd;
    project(matrixRows(w.gate, e * ff, ff), in, count, g);
    project(matrixRows(w.up, e * ff, ff), in, count, u);
    if (w.gateBias) check(k::addBias(g, w.gateBias + size_t(e) * ff, count, ff, stream_), "addBias (expert gate)");
    if (w.upBias) check(k::addBias(u, w.upBias + size_t(e) * ff, count, ff, stream_), "addBias (expert up)");
    const int64_t elements = int64_t(count) * ff;
    if (c.ffnActivation == model::FfnActivation::SwigluOai)
      check(k::swigluOai(g, u, elements, 1.702f, 7.0f, g, stream_), "swigluOai");  // llama.cpp's
    else
      check(k::gatedActivation(g, u, elements, c.ffnActivation == model::FfnActivation::GeluTanhGlu,
                               g, stream_),
            "gatedActivation (experts)");
    project(matrixRows(w.down, e * embd, embd), g, count, out);
    if (w.downBias) check(k::addBias(out, w.downBias + size_t(e) * embd, count, embd, stream_), "addBias (expert down)");
  }
  check(k::combineExperts(b.output, b.groupedRow, b.weights, tokens, topK, embd, y, stream_),
        "combineExperts");
  // The staging buffer is rewritten by the next layer only after its own synchronize, which
  // also waits for these copies.
}

}  // namespace ember::cuda
