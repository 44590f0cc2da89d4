#include "backend/cpu/cpu_backend_weights.h"

#include "backend/cpu/repacked_kernels.h"

namespace ember::cpu {
namespace {

class Loader {
 public:
  WeightMatrix matrix(const gguf::TensorInfo* tensor) {
    bytes += tensor->byteSize;
    return weightMatrix(*tensor);
  }
  // Rows of a tensor (a part of a fused one is counted once, with its first part).
  WeightMatrix matrix(const model::MatrixRows& part) {
    WeightMatrix w = weightMatrix(*part.tensor);
    if (part.firstRow == 0) bytes += part.tensor->byteSize;
    w.data += part.firstRow * w.rowBytes;
    w.rows = int64_t(part.rows);
    return w;
  }
  // A 3-D tensor of one matrix per expert, as one stacked matrix.
  WeightMatrix stacked(const gguf::TensorInfo* tensor) {
    bytes += tensor->byteSize;
    return stackedExpertMatrix(*tensor);
  }
  // A 1-D tensor as float32 (empty for an absent optional tensor).
  std::vector<float> vector(const gguf::TensorInfo* tensor) {
    if (!tensor) return {};
    bytes += tensor->byteSize;
    const WeightMatrix w = weightMatrix(*tensor);
    std::vector<float> out(size_t(w.rows * w.cols));
    for (int64_t r = 0; r < w.rows; ++r) dequantizeRow(w, r, out.data() + r * w.cols);
    return out;
  }
  size_t bytes = 0;
};

}  // namespace

CpuWeights loadCpuWeights(const model::ModelWeights& weights) {
  Loader load;
  CpuWeights w;
  w.tokenEmbedding = load.matrix(weights.tokenEmbedding);
  w.output = weights.tiedOutput ? w.tokenEmbedding : load.matrix(weights.output);
  w.outputNorm = load.vector(weights.outputNorm);
  w.ropeFreqs = load.vector(weights.ropeFreqs);
  w.ropeFreqsLong = load.vector(weights.ropeFreqsLong);
  w.layers.reserve(weights.layers.size());
  for (const model::LayerWeights& l : weights.layers) {
    CpuLayerWeights c;
    c.wq = load.matrix(l.wq);
    c.wk = load.matrix(l.wk);
    c.wv = load.matrix(l.wv);
    c.wo = load.matrix(l.wo);
    if (l.ffnGateInp) {
      c.experts.router = load.matrix(l.ffnGateInp);
      c.experts.gate = load.stacked(l.ffnGateExps);
      c.experts.up = load.stacked(l.ffnUpExps);
      c.experts.down = load.stacked(l.ffnDownExps);
      c.experts.experts = int32_t(l.ffnGateInp->shape[1]);
      c.experts.routerBias = load.vector(l.ffnGateInpBias);
      c.experts.gateBias = load.vector(l.ffnGateExpsBias);
      c.experts.upBias = load.vector(l.ffnUpExpsBias);
      c.experts.downBias = load.vector(l.ffnDownExpsBias);
    } else {
      c.ffnGate = load.matrix(l.ffnGate);
      c.ffnUp = load.matrix(l.ffnUp);
      c.ffnDown = load.matrix(l.ffnDown);
    }
    c.attnNorm = load.vector(l.attnNorm);
    c.ffnNorm = load.vector(l.ffnNorm);
    c.postAttnNorm = load.vector(l.postAttnNorm);
    c.postFfnNorm = load.vector(l.postFfnNorm);
    c.qNorm = load.vector(l.qNorm);
    c.kNorm = load.vector(l.kNorm);
    c.bq = load.vector(l.bq);
    c.bk = load.vector(l.bk);
    c.bv = load.vector(l.bv);
    c.bo = load.vector(l.bo);
    c.attnSinks = load.vector(l.attnSinks);
    c.bGate = load.vector(l.ffnGateBias);
    c.bUp = load.vector(l.ffnUpBias);
    c.bDown = load.vector(l.ffnDownBias);
    w.layers.push_back(std::move(c));
  }
  w.bytes = load.bytes;
  return w;
}

}  // namespace ember::cpu

namespace ember::cpu {

bool embeddingReadsRepacked(gguf::GgmlType type) {
  return type == gguf::GgmlType::Q8_0 || type == gguf::GgmlType::Q4_1 ||
         type == gguf::GgmlType::Q5_0 || type == gguf::GgmlType::Q5_1;
}

void repackCpuWeights(CpuWeights& w, ThreadPool& pool, bool kQuants, bool releaseFilePages,
                      const PrepareProgress& progress) {
  auto repack = [&](WeightMatrix& m) {
    if (m.data == nullptr || m.repacked != nullptr || !isRepackable(m.type)) return;
    // Q4_K with 8k rows and Q6_K repack without loss (the reference kernels' bits) in both
    // modes; the other K-quants only for "approx".
    const bool exactQ4K = isExactQ4KRepackable(m), exactQ6K = isExactQ6KRepackable(m);
    const bool kQuant = m.type == gguf::GgmlType::Q4_K || m.type == gguf::GgmlType::Q5_K ||
                        m.type == gguf::GgmlType::Q6_K;
    if (kQuant && !exactQ4K && !exactQ6K && !kQuants) return;
    std::unique_ptr<RepackedMatrix> r = exactQ4K   ? repackQ4KExact(m, pool, releaseFilePages)
                                        : exactQ6K ? repackQ6KExact(m, pool, releaseFilePages)
                                                   : repackMatrix(m, pool, releaseFilePages);
    if (!r) return;
    // "approx": every lossless type (Q4_0, Q4_1, Q5_0, Q5_1, Q8_0) on the fused kernels, one
    // float step per block instead of llama.cpp's 8 lanes, at every token count (so a token
    // gets the same bits alone as in a batch). Its logits are only close to llama.cpp's, but its
    // products are faster: 1.5-1.7x on AVX-512 at 8 tokens (Gemma's Q5_0 prompts about 1.3x),
    // and they run on AMX's tile unit where the CPU has it (repacked_kernels_amx.cpp). "fast"
    // keeps llama.cpp's lanes: with the fused formula SmolLM2-135M's greedy continuations
    // followed llama.cpp's on 1 of 6 prompts (test_fidelity_llamacpp wants 5), since the int8
    // requantization of every layer's input turns last-bit differences into whole steps.
    if (kQuants) r->llamaLanes = false;
    // The output matrix takes the fused kernels in "fast" too: its logits feed no later int8
    // requantization, so the last-bit differences of the one-step block sums stay last-bit
    // differences (a greedy pick flips only where the two best logits lie ~1e-6 apart), while the
    // product of a batched decode step does 14 vector operations per block and token instead of
    // 26. It is the largest matrix of a small model (SmolLM2-135M: 28M of its 135M weights).
    if (&m == &w.output) r->llamaLanes = false;
    m.repacked = r.get();
    w.repackedBytes += r->bytes();
    // The file pages went back as the rows were repacked. A tied output matrix is the token
    // embedding too: the lookups read its repacked copy where that gives the source's values,
    // else they fault the file's pages back in (whole page-cache folios, up to 2 MiB per token
    // on recent kernels: a 512-token prompt brought all of Gemma 3's 178 MB embedding back).
    // SixK's rows dequantize to the source's floats bit for bit too (test_cpu_q6k_exact).
    const bool tied = m.data == w.tokenEmbedding.data;
    if (tied && (embeddingReadsRepacked(m.type) || r->layout == RepackedLayout::SixK))
      w.tokenEmbeddingRepacked = r.get();
    if (!tied || w.tokenEmbeddingRepacked == r.get()) w.replacedBytes += m.rowBytes * size_t(m.rows);
    w.repacked.push_back(std::move(r));
  };
  std::vector<WeightMatrix*> matrices;
  for (CpuLayerWeights& l : w.layers)
    for (WeightMatrix* m : {&l.wq, &l.wk, &l.wv, &l.wo, &l.ffnGate, &l.ffnUp, &l.ffnDown})
      matrices.push_back(m);
  matrices.push_back(&w.output);
  uint64_t total = 0, done = 0;
  for (const WeightMatrix* m : matrices) total += m->rowBytes * uint64_t(m->rows);
  for (WeightMatrix* m : matrices) {
    repack(*m);
    done += m->rowBytes * uint64_t(m->rows);
    if (progress) progress(done, total);  // between matrices: may throw to cancel the load
  }
}

}  // namespace ember::cpu
