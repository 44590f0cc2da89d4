#include "backend/cuda/cuda_weights.h"

#include "gguf/fp16.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <functional>
#include <memory>

namespace ember::cuda {
namespace {

using gguf::GgmlType;

// A 1-D tensor as float32 on the host.
std::vector<float> vectorAsFloat(const gguf::TensorInfo& t) {
  std::vector<float> out(size_t(t.elementCount));
  const uint8_t* src = t.data.data();
  switch (t.type) {
    case GgmlType::F32:
      std::memcpy(out.data(), src, out.size() * sizeof(float));
      break;
    case GgmlType::F16:
      for (size_t i = 0; i < out.size(); ++i) {
        uint16_t h;
        std::memcpy(&h, src + 2 * i, 2);
        out[i] = gguf::fp16ToFloat(h);
      }
      break;
    case GgmlType::BF16:
      for (size_t i = 0; i < out.size(); ++i) {
        uint16_t b;
        std::memcpy(&b, src + 2 * i, 2);
        out[i] = std::bit_cast<float>(uint32_t(b) << 16);
      }
      break;
    default:
      throw ember::Error("cuda backend: tensor " + t.name + " is a vector of type " +
                         std::string(gguf::ggmlTypeName(t.type)) +
                         "; only F32, F16 and BF16 vectors are supported");
  }
  return out;
}

// Lays the tensors out in one allocation (first pass), then copies them in (second pass).
class Uploader {
 public:
  explicit Uploader(DeviceWeights& w) : w_(w) {}

  void matrix(const gguf::TensorInfo* t, DeviceMatrix& target) {
    const uint64_t rows = t->shape.size() > 1 ? t->shape[1] : 1;
    matrix(model::MatrixRows{t, 0, rows}, target);
  }

  // A stack of experts [cols, rows, n_expert] as one matrix (n_expert * rows, cols); the fp16
  // scratch need only hold one expert's matrix, the most cuBLAS is given at once.
  void stackedMatrix(const gguf::TensorInfo* t, DeviceMatrix& target) {
    if (!t) return;
    const uint64_t perExpert = t->shape.size() > 1 ? t->shape[1] : 1;
    matrix(model::MatrixRows{t, 0, uint64_t(t->elementCount) / t->shape[0]}, target, perExpert);
  }

  // Rows of a tensor (a part of a fused one gets its own copy of its rows). `scratchRows`: the
  // most rows of it given to cuBLAS at once, when fewer than all.
  void matrix(const model::MatrixRows& part, DeviceMatrix& target, uint64_t scratchRows = 0) {
    if (!part) return;  // a mixture-of-experts layer has no dense feed-forward
    const gguf::TensorInfo* t = part.tensor;
    const uint64_t tensorRows = uint64_t(t->elementCount) / t->shape[0];  // 3-D: all experts' rows
    const size_t rowBytes = t->byteSize / tensorRows;
    const auto type = kernels::WeightType(int32_t(t->type));
    if (!kernels::isSupportedWeightType(type))
      throw ember::Error("cuda backend: tensor " + t->name + " has type " +
                         std::string(gguf::ggmlTypeName(t->type)) +
                         ", which the CUDA kernels do not support");
    target.type = type;
    target.cols = int32_t(t->shape[0]);
    target.rows = int32_t(part.rows);
    w_.largestMatrixElements = std::max(
        w_.largestMatrixElements, int64_t(scratchRows ? scratchRows : part.rows) * target.cols);
    w_.largestCols = std::max(w_.largestCols, target.cols);
    const size_t bytes = rowBytes * part.rows;
    const uint8_t* source = t->data.data() + rowBytes * part.firstRow;
    const size_t offset = reserve(bytes);
    fills_.push_back([source, bytes, offset, &target](char* base) {
      target.data = base + offset;
      return std::pair{static_cast<const void*>(source), bytes};
    });
  }

  void vector(const gguf::TensorInfo* t, const float*& target) {
    if (!t) return;
    auto values = std::make_shared<std::vector<float>>(vectorAsFloat(*t));
    const size_t offset = reserve(values->size() * sizeof(float));
    fills_.push_back([values, offset, &target](char* base) {
      target = reinterpret_cast<const float*>(base + offset);
      return std::pair{static_cast<const void*>(values->data()), values->size() * sizeof(float)};
    });
  }

  void upload(const PrepareProgress& progress) {
    const CudaSite site{"load", -1};
    w_.memory = DeviceMemory(total_, site, "the model's weights");
    char* base = w_.memory.as<char>();
    for (size_t i = 0; i < fills_.size(); ++i) {
      const auto [source, bytes] = fills_[i](base);
      char* dst = base + offsets_[i];
      checkCuda(cudaMemcpy(dst, source, bytes, cudaMemcpyHostToDevice), site,
                "cudaMemcpy (weights)");
      // Synchronous copies: the tensor is on the device. A throw (cancel) frees the memory.
      if (progress) progress(offsets_[i] + alignDevice(bytes), total_);
    }
  }

 private:
  size_t reserve(size_t bytes) {
    const size_t offset = total_;
    offsets_.push_back(offset);
    total_ += alignDevice(bytes);
    return offset;
  }

  DeviceWeights& w_;
  size_t total_ = 0;
  std::vector<size_t> offsets_;
  // Each sets its target pointer and says what to copy there.
  std::vector<std::function<std::pair<const void*, size_t>(char*)>> fills_;
};

}  // namespace

DeviceMatrix matrixRows(const DeviceMatrix& stacked, int32_t first, int32_t count) {
  DeviceMatrix m = stacked;
  m.data = static_cast<const char*>(stacked.data) +
           size_t(first) * kernels::weightRowBytes(stacked.type, stacked.cols);
  m.rows = count;
  return m;
}

DeviceWeights uploadWeights(const model::ModelWeights& weights,
                            const PrepareProgress& progress) {
  DeviceWeights w;
  w.layers.resize(weights.layers.size());  // fixed before the uploader keeps pointers into it
  Uploader up(w);
  up.matrix(weights.tokenEmbedding, w.tokenEmbedding);
  if (!weights.tiedOutput) up.matrix(weights.output, w.output);
  up.vector(weights.outputNorm, w.outputNorm);
  up.vector(weights.ropeFreqs, w.ropeFreqs);
  up.vector(weights.ropeFreqsLong, w.ropeFreqsLong);
  for (size_t i = 0; i < weights.layers.size(); ++i) {
    const model::LayerWeights& l = weights.layers[i];
    DeviceLayerWeights& d = w.layers[i];
    up.matrix(l.wq, d.wq);
    up.matrix(l.wk, d.wk);
    up.matrix(l.wv, d.wv);
    up.matrix(l.wo, d.wo);
    up.matrix(l.ffnGate, d.ffnGate);
    up.matrix(l.ffnUp, d.ffnUp);
    up.matrix(l.ffnDown, d.ffnDown);
    up.vector(l.attnNorm, d.attnNorm);
    up.vector(l.ffnNorm, d.ffnNorm);
    up.vector(l.postAttnNorm, d.postAttnNorm);
    up.vector(l.postFfnNorm, d.postFfnNorm);
    up.vector(l.qNorm, d.qNorm);
    up.vector(l.kNorm, d.kNorm);
    up.vector(l.bq, d.bq);
    up.vector(l.bk, d.bk);
    up.vector(l.bv, d.bv);
    up.vector(l.bo, d.bo);
    up.vector(l.ffnGateBias, d.bGate);
    up.vector(l.ffnUpBias, d.bUp);
    up.vector(l.ffnDownBias, d.bDown);
    up.vector(l.attnSinks, d.attnSinks);
    if (l.ffnGateInp) {
      DeviceExpertWeights& e = d.experts;
      e.expertCount = int32_t(l.ffnGateInp->shape[1]);
      up.matrix(l.ffnGateInp, e.router);
      up.stackedMatrix(l.ffnGateExps, e.gate);
      up.stackedMatrix(l.ffnUpExps, e.up);
      up.stackedMatrix(l.ffnDownExps, e.down);
      up.vector(l.ffnGateExpsBias, e.gateBias);
      up.vector(l.ffnUpExpsBias, e.upBias);
      up.vector(l.ffnDownExpsBias, e.downBias);
      if (l.ffnGateInpBias) e.routerBias = vectorAsFloat(*l.ffnGateInpBias);
    }
  }
  up.upload(progress);
  if (weights.tiedOutput) w.output = w.tokenEmbedding;
  return w;
}

}  // namespace ember::cuda
