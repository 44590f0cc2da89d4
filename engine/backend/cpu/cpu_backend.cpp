#include "backend/cpu/cpu_backend.h"

#include "backend/batch_check.h"

#include <algorithm>
#include <cstring>

#include "backend/cpu/ops/activations.h"
#include "backend/cpu/ops/attention_amx.h"
#include "backend/cpu/ops/attention_int8.h"
#include "backend/cpu/repacked_kernels.h"
#include "model/model_weights.h"

namespace ember::cpu {

CpuBackend::CpuBackend(const gguf::GgufFile& file, const model::ModelConfig& config, int threads,
                       KernelMode kernels, const PrepareProgress& progress)
    : config_(config),
      kernels_(kernels),
      weights_(loadCpuWeights(model::bindModelWeights(file, config))),
      pool_(threads) {
  if (kernels_ != KernelMode::Reference)
    repackCpuWeights(weights_, pool_, kernels_ == KernelMode::Approx, file.isFileMapped(),
                     progress);
  layerRopeVariant_.reserve(config_.layers.size());
  for (const model::LayerAttention& layer : config_.layers) {
    ops::RopeParams p;
    p.dims = config_.ropeDims;
    p.freqBase = layer.ropeFreqBase;
    p.freqScale = layer.ropeFreqScale;
    p.freqFactors = weights_.ropeFreqs.empty() ? nullptr : weights_.ropeFreqs.data();
    p.style = config_.ropeStyle;
    p.extFactor = config_.ropeExtFactor;
    p.attnFactor = config_.ropeAttnFactor;
    if (p.extFactor != 0.0f)
      model::yarnCorrectionDims(p.dims, config_.ropeOriginalContext, p.freqBase,
                                config_.yarnBetaFast, config_.yarnBetaSlow, p.corrDims);
    auto same = [&](const ops::RopeParams& o) {
      return o.freqBase == p.freqBase && o.freqScale == p.freqScale;
    };
    auto it = std::find_if(ropeVariants_.begin(), ropeVariants_.end(), same);
    if (it == ropeVariants_.end()) it = ropeVariants_.insert(ropeVariants_.end(), p);
    layerRopeVariant_.push_back(int(it - ropeVariants_.begin()));
  }
}

bool CpuBackend::quantizedAttention() const {
  return kernels_ == KernelMode::Approx && !amxAttention() &&
         ops::quantizedAttentionKernels() != nullptr &&
         ops::quantizedAttentionFits(config_.headDim, config_.valueDim);
}

bool CpuBackend::amxAttention() const {
  return kernels_ == KernelMode::Approx && ops::amxAttentionAvailable() &&
         ops::amxAttentionFits(config_.headDim, config_.valueDim);
}

std::string CpuBackend::name() const {
  const SimdLevel level = kernels_ == KernelMode::Reference ? simdLevel() : fastSimdLevel();
  return std::string("cpu (") + simdLevelName(level) + ", " + kernelModeName(kernels_) +
         " kernels, " +
         (kernels_ == KernelMode::Approx && amxRepackedKernels() ? "amx, " : "") +
         (quantizedAttention() ? "int8 attention, " : amxAttention() ? "amx attention, " : "") +
         std::to_string(pool_.size()) + " threads)";
}

BackendMemoryInfo CpuBackend::memoryInfo() const {
  BackendMemoryInfo info;
  info.weightBytes = weights_.bytes - weights_.replacedBytes + weights_.repackedBytes;
  info.kvCacheBytes = kvHalvesPerLayer_ * size_t(config_.layerCount) * sizeof(uint16_t);
  info.workspaceBytes = ws_.bytes();
  return info;
}

size_t CpuBackend::kvBytesPerBlock(int32_t blockSize) const {
  const size_t perToken = size_t(config_.kvHeadCount) * size_t(config_.headDim + config_.valueDim);
  return perToken * size_t(blockSize) * size_t(config_.layerCount) * sizeof(uint16_t);
}

void CpuBackend::allocateKvCache(const KvCacheShape& shape) {
  if (shape.blockSize <= 0 || shape.blockCount <= 0)
    throw ember::Error("cpu backend: KV cache needs a positive block size and block count");
  kvCache_.reset();
  kvHalvesPerLayer_ = kvBytesPerBlock(shape.blockSize) / sizeof(uint16_t) /
                      size_t(config_.layerCount) * size_t(shape.blockCount);
  kvCache_ =
      std::make_unique_for_overwrite<uint16_t[]>(kvHalvesPerLayer_ * size_t(config_.layerCount));
  kvShape_ = shape;
  // LongRoPE: the long factors when a sequence may run past the original context.
  if (!weights_.ropeFreqsLong.empty()) {
    const bool useLong = shape.contextLength > config_.ropeOriginalContext;
    for (ops::RopeParams& p : ropeVariants_)
      p.freqFactors = useLong ? weights_.ropeFreqsLong.data() : weights_.ropeFreqs.data();
  }
}

ops::KvLayerView CpuBackend::kvLayer(int32_t layer) const {
  ops::KvLayerView kv;
  kv.blockCount = kvShape_.blockCount;
  kv.blockSize = kvShape_.blockSize;
  kv.kvHeads = config_.kvHeadCount;
  kv.headDim = config_.headDim;
  kv.valueDim = config_.valueDim;
  kv.keys = kvCache_.get() + kvHalvesPerLayer_ * size_t(layer);
  kv.values = kv.keys + int64_t(kv.blockCount) * kv.kvHeads * kv.blockSize * kv.headDim;
  return kv;
}

bool CpuBackend::copyBlock(int32_t from, int32_t to) {
  if (!kvCache_ || from < 0 || to < 0 || from >= kvShape_.blockCount || to >= kvShape_.blockCount)
    return false;
  for (int32_t il = 0; il < config_.layerCount; ++il) {
    const ops::KvLayerView kv = kvLayer(il);
    const size_t keyHalves = size_t(kv.kvHeads) * size_t(kv.blockSize) * size_t(kv.headDim);
    const size_t valueHalves = size_t(kv.kvHeads) * size_t(kv.blockSize) * size_t(kv.valueDim);
    std::memcpy(kv.keyAt(to, 0, 0), kv.keyAt(from, 0, 0), keyHalves * sizeof(uint16_t));
    std::memcpy(kv.valueAt(to, 0, 0), kv.valueAt(from, 0, 0), valueHalves * sizeof(uint16_t));
  }
  return true;
}

// A block's bytes: per layer its keys (kvHeads, blockSize, headDim) then its values.
bool CpuBackend::readKvBlock(int32_t block, std::span<std::byte> out) {
  if (!kvCache_ || block < 0 || block >= kvShape_.blockCount ||
      out.size() != kvBytesPerBlock(kvShape_.blockSize))
    return false;
  std::byte* dst = out.data();
  for (int32_t il = 0; il < config_.layerCount; ++il) {
    const ops::KvLayerView kv = kvLayer(il);
    const size_t keyBytes = size_t(kv.kvHeads) * size_t(kv.blockSize) * size_t(kv.headDim) * 2;
    const size_t valueBytes = size_t(kv.kvHeads) * size_t(kv.blockSize) * size_t(kv.valueDim) * 2;
    std::memcpy(dst, kv.keyAt(block, 0, 0), keyBytes);
    std::memcpy(dst + keyBytes, kv.valueAt(block, 0, 0), valueBytes);
    dst += keyBytes + valueBytes;
  }
  return true;
}

bool CpuBackend::writeKvBlock(int32_t block, std::span<const std::byte> in) {
  if (!kvCache_ || block < 0 || block >= kvShape_.blockCount ||
      in.size() != kvBytesPerBlock(kvShape_.blockSize))
    return false;
  const std::byte* src = in.data();
  for (int32_t il = 0; il < config_.layerCount; ++il) {
    const ops::KvLayerView kv = kvLayer(il);
    const size_t keyBytes = size_t(kv.kvHeads) * size_t(kv.blockSize) * size_t(kv.headDim) * 2;
    const size_t valueBytes = size_t(kv.kvHeads) * size_t(kv.blockSize) * size_t(kv.valueDim) * 2;
    std::memcpy(kv.keyAt(block, 0, 0), src, keyBytes);
    std::memcpy(kv.valueAt(block, 0, 0), src + keyBytes, valueBytes);
    src += keyBytes + valueBytes;
  }
  return true;
}

int64_t CpuBackend::planBatch(const ForwardBatch& batch, int64_t& outputs) {
  BatchLimits limits{config_.vocabSize, config_.contextLength, kvShape_.blockSize,
                     kvCache_ ? kvShape_.blockCount : 0};
  const BatchExtent extent = checkForwardBatch(batch, limits, "cpu");
  const int64_t tokens = int64_t(batch.tokens.size());
  const int64_t span = extent.maxEnd;  // a global layer's last query sees every position
  outputs = extent.logitRows;
  ws_.reserve(config_, int(ropeVariants_.size()), pool_.size(), tokens, outputs, span);
  int64_t row = 0;
  for (size_t si = 0; si < batch.sequences.size(); ++si) {
    const BatchSequence& s = batch.sequences[si];
    for (int32_t i = 0; i < s.tokenCount; ++i) {
      ws_.tokenSequence[size_t(s.firstToken + i)] = int32_t(si);
      ws_.tokenPosition[size_t(s.firstToken + i)] = s.startPosition + i;
      const bool wanted = s.logits == BatchSequence::Logits::All ||
                          (s.logits == BatchSequence::Logits::Last && i == s.tokenCount - 1);
      if (wanted) ws_.outputTokens[size_t(row++)] = s.firstToken + i;
    }
  }
  return span;
}

void CpuBackend::embedTokens(const ForwardBatch& batch, int64_t tokens) {
  const int64_t width = config_.embeddingDim;
  const float scale = config_.embeddingScale;
  pool_.parallelFor(tokens, 1, [&](int64_t begin, int64_t end, int) {
    for (int64_t t = begin; t < end; ++t) {
      float* row = ws_.hidden.data() + t * width;
      if (weights_.tokenEmbeddingRepacked)  // the same floats (embeddingReadsRepacked)
        dequantizeRepackedRow(*weights_.tokenEmbeddingRepacked, batch.tokens[size_t(t)], row);
      else
        dequantizeRow(weights_.tokenEmbedding, batch.tokens[size_t(t)], row);
      if (scale != 1.0f)
        for (int64_t i = 0; i < width; ++i) row[i] *= scale;
    }
  });
}

void CpuBackend::computeRopeAngles(int64_t tokens) {
  const int64_t stride = config_.ropeDims;  // floats per token: dims/2 (cos, sin) pairs
  for (size_t variant = 0; variant < ropeVariants_.size(); ++variant) {
    float* table = ws_.rope.data() + int64_t(variant) * tokens * stride;
    for (int64_t t = 0; t < tokens; ++t)
      ops::ropeAngles(ropeVariants_[variant], ws_.tokenPosition[size_t(t)], table + t * stride);
  }
}

void CpuBackend::computeLogits(int64_t outputs, ForwardOutput& out, RowPrologue outputRows) {
  out.rows = size_t(outputs);
  out.logits.resize(size_t(outputs) * size_t(config_.vocabSize));
  if (outputs == 0) return;
  matmul(pool_, weights_.output, ws_.outputRows.data(), outputs, out.logits.data(), ws_.matmul,
         outputRows);
  if (config_.logitScale != 1.0f)  // granite: as ggml_scale, in float
    for (float& v : out.logits) v *= config_.logitScale;
  if (config_.finalLogitSoftcap > 0.0f)
    ops::softcap(out.logits.data(), int64_t(out.logits.size()), config_.finalLogitSoftcap);
}

std::unique_ptr<Backend> makeCpuBackend(const gguf::GgufFile& file, int threads,
                                        KernelMode kernels, const PrepareProgress& progress) {
  return std::make_unique<CpuBackend>(file, model::readModelConfig(file), threads, kernels,
                                      progress);
}

}  // namespace ember::cpu
