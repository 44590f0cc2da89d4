#pragma once
// The CPU backend's view of a model's weights: matrices stay in the mapped file in their GGUF
// type (WeightMatrix); the small 1-D tensors (norm weights, biases, rope factors) are converted
// to float32 once, so the forward pass reads them directly whatever type the file stores.
#include <cstddef>
#include <memory>
#include <vector>

#include "backend/cpu/cpu_expert_ffn.h"
#include "backend/cpu/matmul.h"
#include "backend/prepare_progress.h"
#include "backend/cpu/repack.h"
#include "model/model_weights.h"

namespace ember::cpu {

struct CpuLayerWeights {
  WeightMatrix wq, wk, wv, wo;           // attention projections (parts of attn_qkv when fused)
  WeightMatrix ffnGate, ffnUp, ffnDown;  // feed-forward (gate, up: parts of ffn_up when fused)
  std::vector<float> attnNorm;           // (n_embd) or empty (olmo2)
  std::vector<float> ffnNorm;            // (n_embd) or empty (olmo2)
  std::vector<float> postAttnNorm;       // (n_embd) or empty
  std::vector<float> postFfnNorm;        // (n_embd) or empty
  std::vector<float> qNorm, kNorm;       // (head_dim), the whole q / k width (olmo2), or empty
  std::vector<float> bq;                 // (n_head * head_dim) or empty
  std::vector<float> bk;                 // (n_kv_head * head_dim) or empty
  std::vector<float> bv;                 // (n_kv_head * value_dim) or empty
  std::vector<float> bo;                 // (n_embd) or empty
  std::vector<float> bGate, bUp;         // (n_ff) or empty: the feed-forward biases
  std::vector<float> bDown;              // (n_embd) or empty
  std::vector<float> attnSinks;          // (n_head) or empty
  CpuExpertWeights experts;              // mixture of experts (then ffnGate/Up/Down are empty)
};

struct CpuWeights {
  WeightMatrix tokenEmbedding;    // (n_vocab, n_embd)
  WeightMatrix output;            // (n_vocab, n_embd), the embedding when tied
  std::vector<float> outputNorm;  // (n_embd)
  std::vector<float> ropeFreqs;   // (rope_dims / 2) or empty
  std::vector<float> ropeFreqsLong;  // (rope_dims / 2) LongRoPE's long factors, or empty
  std::vector<CpuLayerWeights> layers;
  size_t bytes = 0;  // bytes of the file's tensors in use
  // Fast kernels: the repacked matrices the WeightMatrix::repacked pointers above refer to.
  std::vector<std::unique_ptr<RepackedMatrix>> repacked;
  size_t repackedBytes = 0;
  size_t replacedBytes = 0;  // file bytes of the repacked matrices, no longer read
  // The tied output's repacked copy when the token lookups read it (embeddingReadsRepacked),
  // else null (the lookups read the file's rows).
  const RepackedMatrix* tokenEmbeddingRepacked = nullptr;
};

// Whether a repacked row of `type` dequantizes to exactly the floats of the source's row
// (dequantizeRow): Q8_0, Q4_1, Q5_0 and Q5_1, whose layouts keep q, d and m as stored and whose
// dequantization is the same d * (q - offset) + m in float (the repacked form adds m = +0 where
// the source has none, which turns a -0 into +0 and changes no other value). Q4_0 (its m is
// -8 d, rounded otherwise) and the K-quants are not.
bool embeddingReadsRepacked(gguf::GgmlType type);

// Throws ember::Error naming the tensor when its type is not supported.
CpuWeights loadCpuWeights(const model::ModelWeights& weights);

// Fast kernels: repacks every matrix of a repackable type except the token embedding (read row
// by row from the file; a tied output matrix gets its own repacked copy, which the lookups then
// read instead of the file when embeddingReadsRepacked: the embedding's file pages, released
// while repacking, are not faulted back in by the lookups), one matrix at a time,
// each on the whole pool. The file pages of a matrix that was repacked are handed back to the kernel
// (madvise) right after, so resident memory grows by the repacked bytes less the file bytes
// they replace, never by the whole model twice.
// kQuants: also the Q4_K/Q5_K/Q6_K matrices (KernelMode::Approx).
// releaseFilePages: only for weights in a read-only file mapping (GgufFile::isFileMapped).
// `progress` (optional) hears the bytes of the matrices walked so far, after each one.
void repackCpuWeights(CpuWeights& weights, ThreadPool& pool, bool kQuants, bool releaseFilePages,
                      const PrepareProgress& progress = {});

}  // namespace ember::cpu
