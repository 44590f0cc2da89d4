// The CPU forward pass: the model's layers (model/transformer_layer.h) run over the CPU's
// implementation of the layer operations, each over all T tokens of the step at once (the matrix
// products run with n = T). Every operation computes what llama.cpp's CPU graph computes for it,
// in the same order, so that logits match it (ops/attention.h says how).
#include <algorithm>
#include <cmath>
#include <cstring>

#include "backend/cpu/cpu_backend.h"
#include "backend/cpu/ops/activations.h"
#include "backend/cpu/ops/attention_amx.h"
#include "backend/cpu/ops/attention_int8.h"
#include "backend/cpu/ops/attention_query_lanes.h"
#include "backend/cpu/ops/norm.h"
#include "model/transformer_layer.h"

namespace ember::cpu {

using model::Activation;
using model::LayerTensor;

class CpuLayerOps final : public model::LayerOps {
 public:
  CpuLayerOps(CpuBackend& backend, const ForwardBatch& batch, int64_t tokens, int64_t outputs)
      : b_(backend),
        ws_(backend.ws_),
        c_(backend.config_),
        batch_(batch),
        stepTokens_(tokens),
        outputs_(outputs),
        tokens_(tokens) {}

  bool has(int32_t layer, LayerTensor tensor) const override {
    const CpuLayerWeights& w = b_.weights_.layers[size_t(layer)];
    switch (tensor) {
      case LayerTensor::Bq: return !w.bq.empty();
      case LayerTensor::Bk: return !w.bk.empty();
      case LayerTensor::Bv: return !w.bv.empty();
      case LayerTensor::Bo: return !w.bo.empty();
      case LayerTensor::AttnNorm: return !w.attnNorm.empty();
      case LayerTensor::FfnNorm: return !w.ffnNorm.empty();
      case LayerTensor::QNorm: return !w.qNorm.empty();
      case LayerTensor::KNorm: return !w.kNorm.empty();
      case LayerTensor::PostAttnNorm: return !w.postAttnNorm.empty();
      case LayerTensor::PostFfnNorm: return !w.postFfnNorm.empty();
      case LayerTensor::BGate: return !w.bGate.empty();
      case LayerTensor::BUp: return !w.bUp.empty();
      case LayerTensor::BDown: return !w.bDown.empty();
      default: return true;  // the matrices are always bound
    }
  }

  void project(int32_t layer, LayerTensor w, Activation x, Activation y) override {
    matmul(b_.pool_, matrix(layer, w), buffer(x), tokens_, buffer(y), ws_.matmul,
           pendingPrologue());
    pendingCount_ = 0;
  }

  // One product over all matrices: x quantized once, one pool round trip (matmulShared).
  void projectShared(int32_t layer, Activation x,
                     std::span<const Projection> outputs) override {
    MatmulTarget targets[kMaxSharedTargets];
    size_t count = 0;
    for (const Projection& p : outputs) targets[count++] = {&matrix(layer, p.w), buffer(p.y)};
    matmulShared(b_.pool_, {targets, count}, buffer(x), tokens_, ws_.matmul, pendingPrologue());
    pendingCount_ = 0;
  }

  void addBias(int32_t layer, LayerTensor bias, Activation y) override {
    defer({.kind = TokenStep::Kind::AddBias, .layer = layer, .tensor = bias, .y = y});
  }

  void rmsNorm(int32_t layer, LayerTensor weight, Activation x, int32_t width,
               Activation y) override {
    defer({.kind = TokenStep::Kind::RmsNorm, .layer = layer, .tensor = weight, .x = x, .y = y,
           .count = width});
  }

  void rope(int32_t layer, Activation x, int32_t heads) override {
    defer({.kind = TokenStep::Kind::Rope, .layer = layer, .x = x, .count = heads});
  }

  void writeKv(int32_t layer) override {
    defer({.kind = TokenStep::Kind::WriteKv, .layer = layer});
  }

  void attention(int32_t layer, const model::AttentionStep& step) override;

  // The last layer's queries, attention, products and residual for the output tokens only: a
  // prompt's other tokens have their keys and values cached, and nothing reads the rest of
  // their rows (the last layer is 1/30 of SmolLM2-135M's prompt work, 1/18 of Gemma-3-270M's).
  // Each kept row computes what it would in the whole batch, so the logits keep their bits.
  void keepOutputRowsOnly() override {
    if (outputs_ == tokens_) return;
    flushPending();  // rope and the cache writes, over every token
    const int64_t qDim = c_.qDim(), width = c_.embeddingDim;
    for (int64_t r = 0; r < outputs_; ++r) {  // rows move up, in order: r <= t
      const int64_t t = ws_.outputTokens[size_t(r)];
      if (t != r) {
        std::memcpy(ws_.q.data() + r * qDim, ws_.q.data() + t * qDim, sizeof(float) * size_t(qDim));
        std::memcpy(ws_.hidden.data() + r * width, ws_.hidden.data() + t * width,
                    sizeof(float) * size_t(width));
        ws_.tokenSequence[size_t(r)] = ws_.tokenSequence[size_t(t)];
        ws_.tokenPosition[size_t(r)] = ws_.tokenPosition[size_t(t)];
      }
      ws_.outputTokens[size_t(r)] = int32_t(r);
    }
    tokens_ = outputs_;
  }
  // The int8 attention's keys and values for this layer and step (ws_.quantizedRows).
  void quantizeKv(int32_t layer, const model::AttentionStep& step,
                  const ops::QuantizedAttentionKernels& kernels);
  // The AMX attention's keys and values for this layer and step (ws_.amxRows).
  void splitKvForAmx(int32_t layer, const model::AttentionStep& step);

  void gatedActivation(model::FfnActivation activation) override {
    defer({.kind = TokenStep::Kind::Activation, .activation = activation});
  }

  void expertFeedForward(int32_t layer, Activation x, Activation y) override {
    flushPending();  // the router and the experts' products read whole batches of rows
    cpu::expertFeedForward(b_.pool_, c_, b_.weights_.layers[size_t(layer)].experts, buffer(x),
                           tokens_, buffer(y), ws_.experts, ws_.matmul);
  }

  void scale(Activation x, float factor) override {
    defer({.kind = TokenStep::Kind::Scale, .x = x, .factor = factor});
  }

  void addResidual(Activation delta) override {
    defer({.kind = TokenStep::Kind::AddResidual, .x = delta});
  }

  // After the last layer: the steps still queued (the last block's residual) run as the
  // prologue of the output product, on the tokens whose logits are wanted (the other tokens'
  // hidden rows are read by nothing after the layers). Output row r of the product: its token's
  // steps, then the copy of its hidden row and the output norm.
  void computeLogits(int64_t outputs, ForwardOutput& out) {
    for (int i = 0; i < pendingCount_; ++i)
      if (pending_[i].kind == TokenStep::Kind::WriteKv) flushPending();  // the cache needs all
    struct OutputRows {
      CpuLayerOps* self;
      static void run(void* ctx, int64_t r) {
        CpuLayerOps& ops = *static_cast<OutputRows*>(ctx)->self;
        const int64_t width = ops.c_.embeddingDim;
        const int64_t token = ops.ws_.outputTokens[size_t(r)];
        ops.runPending(token);
        float* row = ops.ws_.outputRows.data() + r * width;
        std::memcpy(row, ops.ws_.hidden.data() + token * width, sizeof(float) * size_t(width));
        ops::rmsNorm(row, ops.b_.weights_.outputNorm.data(), width, ops.c_.rmsNormEps, row);
      }
    } rows{this};
    b_.computeLogits(outputs, out, {&OutputRows::run, &rows});
    pendingCount_ = 0;
  }

 private:
  // The layer's per-token element-wise steps (biases, norms, rope, the cache writes, the FFN
  // activation, scales, residual adds) do not run where the layer asks for them: they queue
  // here and run as the prologue of the next product or attention, token by token, spread over
  // the threads of its own round trip (ThreadPool::parallelForAfter). Run in place, a decode
  // step of a few chats does them on the calling thread while the other threads wait (13% of
  // an 8-chat step of SmolLM2-135M on 2 threads). Each step reads and writes only its own
  // token's rows, so running them token by token instead of step by step changes no value.
  struct TokenStep {
    enum class Kind { AddBias, RmsNorm, Rope, WriteKv, RoundQueries, Activation, Scale, AddResidual };
    Kind kind;
    int32_t layer = 0;
    LayerTensor tensor{};  // AddBias: the bias; RmsNorm: the weight
    Activation x{};        // RmsNorm, Rope, Scale: the input; AddResidual: the delta
    Activation y{};        // AddBias, RmsNorm: the output
    int32_t count = 0;     // RmsNorm: floats per normalized row; Rope: heads
    float factor = 1.0f;   // Scale; RoundQueries: the query scale
    model::FfnActivation activation{};
  };
  static constexpr int kMaxPending = 16;

  void defer(const TokenStep& step) {
    if (pendingCount_ == kMaxPending) flushPending();
    pending_[pendingCount_++] = step;
  }

  // Every queued step on token t, in the order the layer asked for them.
  void runPending(int64_t t) {
    for (int i = 0; i < pendingCount_; ++i) runStep(pending_[i], t);
  }

  // The queued steps over all tokens, now (for an operation that takes no prologue).
  void flushPending() {
    if (pendingCount_ == 0) return;
    b_.pool_.parallelFor(tokens_, 1, [&](int64_t begin, int64_t end, int) {
      for (int64_t t = begin; t < end; ++t) runPending(t);
    });
    pendingCount_ = 0;
  }

  // The queued steps as a product's row prologue (rows are tokens); the caller clears the queue
  // once the product has run.
  RowPrologue pendingPrologue() {
    if (pendingCount_ == 0) return {};
    return {[](void* ctx, int64_t t) { static_cast<CpuLayerOps*>(ctx)->runPending(t); }, this};
  }

  void runStep(const TokenStep& step, int64_t t) {
    switch (step.kind) {
      case TokenStep::Kind::AddBias: {
        const std::vector<float>& b = vector(step.layer, step.tensor);
        float* out = buffer(step.y) + t * int64_t(b.size());
        for (size_t i = 0; i < b.size(); ++i) out[i] += b[i];
        return;
      }
      case TokenStep::Kind::RmsNorm: {
        const int64_t stride = width(step.x), rows = stride / step.count;
        const float* x = buffer(step.x) + t * stride;
        float* y = buffer(step.y) + t * stride;
        const std::vector<float>& weight = vector(step.layer, step.tensor);
        for (int64_t r = 0; r < rows; ++r)
          ops::rmsNorm(x + r * step.count, weight.data(), step.count, c_.rmsNormEps,
                       y + r * step.count);
        return;
      }
      case TokenStep::Kind::Rope: {
        const int variant = b_.layerRopeVariant_[size_t(step.layer)];
        const float* angles =
            ws_.rope.data() + (int64_t(variant) * stepTokens_ + t) * c_.ropeDims;
        ops::applyRope(b_.ropeVariants_[size_t(variant)], angles,
                       buffer(step.x) + t * width(step.x), step.count, c_.headDim);
        return;
      }
      case TokenStep::Kind::WriteKv: {
        const int64_t kDim = c_.kvDim(), vDim = c_.vDim();
        const BatchSequence& s = batch_.sequences[size_t(ws_.tokenSequence[size_t(t)])];
        ops::storeKv(b_.kvLayer(step.layer), s.blockTable, ws_.tokenPosition[size_t(t)],
                     ws_.k.data() + t * kDim, ws_.v.data() + t * vDim);
        return;
      }
      case TokenStep::Kind::RoundQueries: {
        // llama.cpp scales Qcur in float where the architecture does, then takes q.k with q
        // converted to the fp16 of the cache.
        const int64_t qDim = c_.qDim();
        float* q = ws_.q.data() + t * qDim;
        if (step.factor != 1.0f)
          for (int64_t i = 0; i < qDim; ++i) q[i] *= step.factor;
        ops::roundToHalfPrecision(q, qDim);
        return;
      }
      case TokenStep::Kind::Activation: {
        const int64_t ff = c_.ffnDim;
        float* gate = ws_.gate.data() + t * ff;
        const float* up = ws_.up.data() + t * ff;
        if (step.activation == model::FfnActivation::GeluTanhGlu)
          ops::geluTanhGluRow(gate, up, gate, ff);
        else if (step.activation == model::FfnActivation::SwigluOai)
          ops::swigluOaiRow(gate, up, gate, ff);
        else
          ops::siluGluRow(gate, up, gate, ff);
        return;
      }
      case TokenStep::Kind::Scale: {
        float* data = buffer(step.x) + t * width(step.x);
        for (int64_t i = 0; i < width(step.x); ++i) data[i] *= step.factor;  // as ggml_scale
        return;
      }
      case TokenStep::Kind::AddResidual: {
        const int64_t embd = c_.embeddingDim;
        float* hidden = ws_.hidden.data() + t * embd;
        const float* delta = buffer(step.x) + t * embd;
        for (int64_t i = 0; i < embd; ++i) hidden[i] += delta[i];
        return;
      }
    }
  }

  float* buffer(Activation a) {
    switch (a) {
      case Activation::Hidden: return ws_.hidden.data();
      case Activation::Normed: return ws_.normed.data();
      case Activation::Q: return ws_.q.data();
      case Activation::K: return ws_.k.data();
      case Activation::V: return ws_.v.data();
      case Activation::Attention: return ws_.attention.data();
      case Activation::BlockOut:
      case Activation::PostNormed: return ws_.blockOut.data();  // post-norms run in place
      case Activation::Gate:
      case Activation::Activated: return ws_.gate.data();  // the activation runs in place
      case Activation::Up: return ws_.up.data();
    }
    return nullptr;
  }

  // Floats per token.
  int64_t width(Activation a) const {
    switch (a) {
      case Activation::Q: return c_.qDim();
      case Activation::K: return c_.kvDim();
      case Activation::V: return c_.vDim();
      case Activation::Attention: return c_.attnOutDim();
      case Activation::Gate:
      case Activation::Up:
      case Activation::Activated: return c_.ffnDim;
      default: return c_.embeddingDim;
    }
  }

  const WeightMatrix& matrix(int32_t layer, LayerTensor t) const {
    const CpuLayerWeights& w = b_.weights_.layers[size_t(layer)];
    switch (t) {
      case LayerTensor::Wq: return w.wq;
      case LayerTensor::Wk: return w.wk;
      case LayerTensor::Wv: return w.wv;
      case LayerTensor::Wo: return w.wo;
      case LayerTensor::FfnGate: return w.ffnGate;
      case LayerTensor::FfnUp: return w.ffnUp;
      default: return w.ffnDown;
    }
  }

  const std::vector<float>& vector(int32_t layer, LayerTensor t) const {
    const CpuLayerWeights& w = b_.weights_.layers[size_t(layer)];
    switch (t) {
      case LayerTensor::AttnNorm: return w.attnNorm;
      case LayerTensor::Bq: return w.bq;
      case LayerTensor::Bk: return w.bk;
      case LayerTensor::Bv: return w.bv;
      case LayerTensor::Bo: return w.bo;
      case LayerTensor::QNorm: return w.qNorm;
      case LayerTensor::KNorm: return w.kNorm;
      case LayerTensor::PostAttnNorm: return w.postAttnNorm;
      case LayerTensor::FfnNorm: return w.ffnNorm;
      case LayerTensor::BGate: return w.bGate;
      case LayerTensor::BUp: return w.bUp;
      case LayerTensor::BDown: return w.bDown;
      default: return w.postFfnNorm;
    }
  }

  CpuBackend& b_;
  CpuWorkspace& ws_;
  const model::ModelConfig& c_;
  const ForwardBatch& batch_;
  const int64_t stepTokens_;  // the step's tokens (the rope angles' rows)
  const int64_t outputs_;     // the tokens whose logits are wanted
  int64_t tokens_;            // the rows the operations run over: all, or the outputs'

  TokenStep pending_[kMaxPending];
  int pendingCount_ = 0;
};

void CpuLayerOps::splitKvForAmx(int32_t layer, const model::AttentionStep& step) {
  // Each several-token sequence's rows from the first position one of its queries sees (whole
  // 32-position steps) to its last, once for all its tiles.
  constexpr int32_t kStep = 32;
  const ops::KvLayerView kv = b_.kvLayer(layer);
  const size_t sequences = batch_.sequences.size();
  ws_.amxRows.assign(sequences * size_t(c_.kvHeadCount), ops::AmxKv{});
  std::vector<int64_t> offsets(ws_.amxRows.size() + 1, 0);
  std::vector<int32_t> seenFirst(sequences, 0);
  for (size_t si = 0; si < sequences; ++si) {
    const BatchSequence& s = batch_.sequences[si];
    int32_t first = 0, count = 0;
    if (s.tokenCount > 1) {
      const int32_t last = s.startPosition + s.tokenCount - 1;
      seenFirst[si] = step.window > 0 ? std::max(0, s.startPosition - step.window + 1) : 0;
      first = seenFirst[si] - seenFirst[si] % kStep;
      count = (last + 1 - first + kStep - 1) / kStep * kStep;
    }
    for (int32_t h = 0; h < c_.kvHeadCount; ++h) {
      const size_t i = si * size_t(c_.kvHeadCount) + size_t(h);
      ws_.amxRows[i].first = first;
      ws_.amxRows[i].count = count;
      // rounded up to 2 bytes: the halves of the next entry stay aligned
      offsets[i + 1] = offsets[i] + (ops::amxKvBytes(count, c_.headDim, c_.valueDim) + 1) / 2 * 2;
    }
  }
  if (int64_t(ws_.amxKv.size()) < offsets.back() / 2) ws_.amxKv.resize(size_t(offsets.back() / 2));
  for (size_t i = 0; i + 1 < offsets.size(); ++i) {
    const ops::AmxKv r = ws_.amxRows[i];
    ws_.amxRows[i] = ops::carveAmxKv(reinterpret_cast<uint8_t*>(ws_.amxKv.data()) + offsets[i],
                                     r.first, r.count, c_.headDim, c_.valueDim);
  }
  // Work items of 64 positions (the last one of an entry may be 32).
  constexpr int32_t kChunk = 64;
  std::vector<int64_t> chunkStart(ws_.amxRows.size() + 1, 0);
  for (size_t i = 0; i < ws_.amxRows.size(); ++i)
    chunkStart[i + 1] = chunkStart[i] + (ws_.amxRows[i].count + kChunk - 1) / kChunk;
  b_.pool_.parallelFor(chunkStart.back(), 1, [&](int64_t begin, int64_t end, int) {
    for (int64_t item = begin; item < end; ++item) {
      const size_t i = size_t(std::upper_bound(chunkStart.begin(), chunkStart.end(), item) -
                              chunkStart.begin() - 1);
      const ops::AmxKv& rows = ws_.amxRows[i];
      const size_t si = i / size_t(c_.kvHeadCount);
      const BatchSequence& s = batch_.sequences[si];
      const int32_t from = rows.first + int32_t(item - chunkStart[i]) * kChunk;
      ops::fillAmxKv(kv, s.blockTable, int32_t(i % size_t(c_.kvHeadCount)), seenFirst[si],
                     s.startPosition + s.tokenCount - 1, rows, from,
                     std::min(from + kChunk, rows.first + rows.count));
    }
  });
}

void CpuLayerOps::quantizeKv(int32_t layer, const model::AttentionStep& step,
                             const ops::QuantizedAttentionKernels& kernels) {
  // Each several-token sequence's rows from the first position one of its queries sees (whole
  // 64-position blocks) to its last, once for all its tiles.
  const ops::KvLayerView kv = b_.kvLayer(layer);
  const size_t sequences = batch_.sequences.size();
  ws_.quantizedRows.assign(sequences * size_t(c_.kvHeadCount), ops::QuantizedKv{});
  std::vector<int64_t> offsets(sequences * size_t(c_.kvHeadCount) + 1, 0);
  int64_t longest = 0;
  for (size_t si = 0; si < sequences; ++si) {
    const BatchSequence& s = batch_.sequences[si];
    int32_t first = 0, count = 0;
    if (s.tokenCount > 1) {
      const int32_t last = s.startPosition + s.tokenCount - 1;
      first = step.window > 0 ? std::max(0, s.startPosition - step.window + 1) : 0;
      first -= first % ops::kWeightBlock;
      count = (last + 1 - first + ops::kWeightBlock - 1) / ops::kWeightBlock * ops::kWeightBlock;
      longest = std::max<int64_t>(longest, last + 1 - first);
    }
    for (int32_t h = 0; h < c_.kvHeadCount; ++h) {
      const size_t i = si * size_t(c_.kvHeadCount) + size_t(h);
      ws_.quantizedRows[i].first = first;
      ws_.quantizedRows[i].count = count;
      offsets[i + 1] = offsets[i] + ops::quantizedKvBytes(count, c_.headDim, c_.valueDim);
    }
  }
  if (int64_t(ws_.quantizedKv.size()) < offsets.back()) ws_.quantizedKv.resize(size_t(offsets.back()));
  ws_.reserveQuantizedAttention(
      b_.pool_.size(), ops::quantizedAttentionScratchBytes(longest, c_.headDim, c_.valueDim));
  for (size_t i = 0; i + 1 < offsets.size(); ++i) {
    const ops::QuantizedKv& r = ws_.quantizedRows[i];
    ws_.quantizedRows[i] = ops::carveQuantizedKv(ws_.quantizedKv.data() + offsets[i], r.first,
                                                 r.count, c_.headDim, c_.valueDim);
  }
  // Work items of 64 positions.
  constexpr int32_t kChunk = 64;
  std::vector<int64_t> chunkStart(ws_.quantizedRows.size() + 1, 0);
  for (size_t i = 0; i < ws_.quantizedRows.size(); ++i)
    chunkStart[i + 1] = chunkStart[i] + ws_.quantizedRows[i].count / kChunk;
  b_.pool_.parallelFor(chunkStart.back(), 1, [&](int64_t begin, int64_t end, int) {
    for (int64_t item = begin; item < end; ++item) {
      const size_t i = size_t(std::upper_bound(chunkStart.begin(), chunkStart.end(), item) -
                              chunkStart.begin() - 1);
      const ops::QuantizedKv& rows = ws_.quantizedRows[i];
      const BatchSequence& s = batch_.sequences[i / size_t(c_.kvHeadCount)];
      const int32_t from = rows.first + int32_t(item - chunkStart[i]) * kChunk;
      ops::fillQuantizedKv(kernels, kv, s.blockTable, int32_t(i % size_t(c_.kvHeadCount)),
                           s.startPosition + s.tokenCount - 1, rows, from, from + kChunk);
    }
  });
}

void CpuLayerOps::attention(int32_t layer, const model::AttentionStep& step) {
  const int64_t qDim = c_.qDim();
  defer({.kind = TokenStep::Kind::RoundQueries, .factor = step.queryScale});

  // Causal attention in tiles (cpu_backend_workspace.h): consecutive tokens of one sequence times
  // the query heads of a GQA group, one work item per (tile, kv head, head slice).
  const ops::KvLayerView kv = b_.kvLayer(layer);
  static const std::vector<float> kNoSinks;
  const std::vector<float>& sinks =  // (n_head) or empty
      step.sinks ? b_.weights_.layers[size_t(layer)].attnSinks : kNoSinks;
  const int32_t groupSize = c_.headCount / c_.kvHeadCount;
  // Approx kernels: several-token steps in int8 (ops/attention_int8.h) where the CPU has VNNI
  // but not AMX, in tiles of 16 tokens where they fit (3 heads x 16 = 48 queries: whole groups of 16 lanes).
  const ops::QuantizedAttentionKernels* quantized =
      b_.quantizedAttention() && step.softcap <= 0.0f && sinks.empty()
          ? ops::quantizedAttentionKernels()
          : nullptr;
  // Their key and value copies read the cache: the queued steps (its writes) first.
  if (quantized || b_.amxAttention()) flushPending();
  if (quantized) quantizeKv(layer, step, *quantized);
  // Or on AMX where the CPU has it (ops/attention_amx.h), in tiles of 16 tokens where they fit
  // (16-row tiles of queries; 3 heads x 16 = 48). A tile it declines (a non-finite operand) goes
  // to attendHeads in tiles of the reference's size, whose scratch the workspace holds.
  // Approx takes plain bf16 products and the light softmax: as fast as the int8 attention here
  // and closer to llama.cpp (exact part products and the reference softmax measured as close to
  // llama.cpp as these but slower; neither reaches fast's greedy bound).
  constexpr ops::AmxPrecision kApproxAmxPrecision{1, 1, true};
  const bool amx = b_.amxAttention();
  if (amx) splitKvForAmx(layer, step);
  const AttentionTiling referenceTiling = attentionTiling(c_);
  AttentionTiling tiling = referenceTiling;
  if ((quantized || amx) && tiling.heads * 16 <= ops::kMaxTileQueries) tiling.tokens = 16;
  // Several-token tiles on AVX-512 go to the query-lanes kernel (the reference's bits), whose
  // registers hold 16 queries: tiles of up to 16 tokens fill them (SmolLM2's 3 heads x 16 = 48
  // queries where the reference's 8-token tiles leave a third of 32 lanes empty). A tile it
  // declines runs on attendHeads in tiles of the reference's size, whose scratch the workspace
  // holds.
  const bool queryLanes = !quantized && !amx && step.softcap <= 0.0f && sinks.empty() &&
                          ops::queryLanesAvailable();
  if (queryLanes) tiling.tokens = std::clamp(ops::kMaxTileQueries / tiling.heads, 1, 16);
  const int32_t headSlices = (groupSize + tiling.heads - 1) / tiling.heads;
  int64_t tiles = 0;
  for (int64_t t = 0; t < tokens_;) {
    ws_.attentionTiles[size_t(tiles++)] = int32_t(t);
    const int32_t sequence = ws_.tokenSequence[size_t(t)];
    const int64_t start = t;
    while (++t < tokens_ && t - start < tiling.tokens && ws_.tokenSequence[size_t(t)] == sequence) {
    }
  }
  ws_.attentionTiles[size_t(tiles)] = int32_t(tokens_);
  const int64_t items = tiles * c_.kvHeadCount * headSlices;
  // The queued steps (rope, the cache writes, the queries' rounding) as the prologue: every
  // token's keys and values are in the cache before any item reads them.
  const auto queued = [&](int64_t begin, int64_t end, int) {
    for (int64_t t = begin; t < end; ++t) runPending(t);
  };
  b_.pool_.parallelForAfter(pendingCount_ > 0 ? tokens_ : 0, queued, items, 1,
                            [&](int64_t begin, int64_t end, int thread) {
    float* scratch = ws_.attentionScratch.data() + int64_t(thread) * ws_.scratchStride;
    ops::AttentionQuery queries[ops::kMaxTileQueries];
    for (int64_t item = begin; item < end; ++item) {
      const int64_t tile = item / (int64_t(c_.kvHeadCount) * headSlices);
      const int32_t kvHead = int32_t(item / headSlices % c_.kvHeadCount);
      const int32_t headBegin = kvHead * groupSize + int32_t(item % headSlices) * tiling.heads;
      const int32_t headEnd = std::min(headBegin + tiling.heads, (kvHead + 1) * groupSize);
      const int32_t tokenBegin = ws_.attentionTiles[size_t(tile)];
      const int32_t tokenEnd = ws_.attentionTiles[size_t(tile) + 1];
      const BatchSequence& s = batch_.sequences[size_t(ws_.tokenSequence[size_t(tokenBegin)])];
      int count = 0;
      for (int32_t t = tokenBegin; t < tokenEnd; ++t) {
        const int32_t position = ws_.tokenPosition[size_t(t)];
        // A sliding-window layer sees positions p with position - p < window (llama.cpp's
        // LLAMA_SWA_TYPE_STANDARD mask).
        const int32_t first = step.window > 0 ? std::max(0, position - step.window + 1) : 0;
        for (int32_t head = headBegin; head < headEnd; ++head)
          queries[count++] = {
              ws_.q.data() + t * qDim + int64_t(head) * c_.headDim, first, position,
              ws_.attention.data() + t * c_.attnOutDim() + int64_t(head) * c_.valueDim,
              sinks.empty() ? ops::kNoSink : sinks[size_t(head)]};
      }
      // llama.cpp's summation order for a one-token step, chosen by the sequence's own token count,
      // so a sequence computes the same whatever else shares the step.
      const ops::StepKind stepKind =
          s.tokenCount == 1 ? ops::StepKind::OneToken : ops::StepKind::SeveralTokens;
      if (quantized && stepKind == ops::StepKind::SeveralTokens)
        ops::attendHeadsQuantized(
            *quantized, {queries, size_t(count)},
            ws_.quantizedRows[size_t(ws_.tokenSequence[size_t(tokenBegin)]) * c_.kvHeadCount +
                              size_t(kvHead)],
            c_.headDim, c_.valueDim, step.scoreScale,
            ws_.quantizedScratch.data() + int64_t(thread) * ws_.quantizedStride);
      else if (!(amx && stepKind == ops::StepKind::SeveralTokens &&
                 ops::attendHeadsAmx(
                     {queries, size_t(count)},
                     ws_.amxRows[size_t(ws_.tokenSequence[size_t(tokenBegin)]) * c_.kvHeadCount +
                                 size_t(kvHead)],
                     c_.headDim, c_.valueDim, step.scoreScale, step.softcap,
                     kApproxAmxPrecision)) &&
               !(queryLanes && stepKind == ops::StepKind::SeveralTokens &&
                 ops::attendHeadsQueryLanes({queries, size_t(count)}, kv, s.blockTable, kvHead,
                                            step.scoreScale)))
        for (int i = 0; i < count; i += referenceTiling.queries())
          ops::attendHeads({queries + i, size_t(std::min(referenceTiling.queries(), count - i))},
                           kv, s.blockTable, kvHead, step.scoreScale, stepKind, scratch,
                           step.softcap);
    }
  });
  pendingCount_ = 0;
}

void CpuBackend::forward(const ForwardBatch& batch, ForwardOutput& out) {
  int64_t outputs = 0;
  planBatch(batch, outputs);
  const int64_t tokens = int64_t(batch.tokens.size());
  embedTokens(batch, tokens);
  computeRopeAngles(tokens);
  CpuLayerOps ops(*this, batch, tokens, outputs);
  model::runTransformerLayers(config_, ops);
  ops.computeLogits(outputs, out);
}

}  // namespace ember::cpu
