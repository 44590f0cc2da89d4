// The CUDA paged attention (kernels/attention*.cu) and KV-cache write (kernels/kv_cache.cu)
// against references on the CPU:
//  - writeKvCache against ops::storeKv (engine/backend/cpu/ops/attention.h): bit for bit (the
//    same round-to-nearest-even fp16 conversion);
//  - pagedAttention against an exact softmax attention in double over the same fp16 K/V and the
//    fp16-rounded query: atol 1e-4, rtol 1e-4 (fp32 accumulation in another order);
//  - pagedAttention against the CPU backend's ops::attendHead: atol 1e-3, rtol 1e-3 (the CPU
//    rounds the softmax weights to fp16, as llama.cpp does: up to 2^-11 * max|v|).
// Soft-capped cases (gemma2) take each score as cap * tanh(q.k / cap) * scale in all three.
// Cases with sinks (gpt-oss) give each head a sink logit that joins its softmax (ggml's
// soft_max with sinks: in the max, and e^(sink - max) in the sum) in all three.
// Batches have several sequences with shuffled block tables, decode tokens and prompt chunks
// mixed, GQA ratios 1 to 32, head dims 64 to 256, a sliding window and contexts of ~3000
// positions (split along the context). Cache slots no sequence owns hold large values, so a
// read outside a block table or past a sequence's end shows.
#include <QtTest>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <span>
#include <vector>

#include "backend/cpu/ops/attention.h"
#include "backend/cpu/ops/half.h"
#include "ember/kernels/kernels.h"
#include "kernels/kernel_test_support.h"

using ember::kernels::test::DeviceBuffer;
using ember::kernels::test::mismatch;
using ember::kernels::test::randomVector;
namespace ops = ember::cpu::ops;
namespace kernels = ember::kernels;

namespace {

struct SequenceSpec {
  int32_t cached = 0;      // positions already in the cache before this step
  int32_t stepTokens = 1;  // query tokens of this step (their K/V are in the cache too)
};

struct AttentionCase {
  int32_t heads = 0, kvHeads = 0, headDim = 0, valueDim = 0, blockSize = 16;
  int32_t slidingWindow = 0;
  float softcap = 0.f;  // > 0: scores = softcap * tanh(q.k / softcap) * scale
  bool sinks = false;   // each head has a sink logit (sinkOf)
  std::vector<SequenceSpec> sequences;
  bool expectSplit = false;  // the planned workspace must be non-empty (context split)
};

}  // namespace

Q_DECLARE_METATYPE(AttentionCase)

namespace {

constexpr double kExactAtol = 1e-4, kExactRtol = 1e-4;
constexpr double kCpuAtol = 1e-3, kCpuRtol = 1e-3;

// A step's batch on the host: the KV pool, block tables, tokens and queries.
struct HostBatch {
  int32_t blockCount = 0;
  std::vector<uint16_t> keys, values;  // (blockCount, kvHeads, blockSize, headDim / valueDim)
  std::vector<std::vector<int32_t>> tables;
  std::vector<int32_t> flatTables;  // (sequences, maxBlocks), padded with -1
  int32_t maxBlocks = 0;
  std::vector<int32_t> tokenSequence, tokenPosition;
  std::vector<float> q;  // (tokens, heads, headDim)
  int32_t maxPosition = 0;

  int32_t tokens() const { return int32_t(tokenSequence.size()); }
};

HostBatch buildBatch(const AttentionCase& c, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> unit(-1.f, 1.f);
  HostBatch b;
  std::vector<int32_t> lengths;
  for (const SequenceSpec& s : c.sequences) lengths.push_back(s.cached + s.stepTokens);
  for (int32_t len : lengths) {
    const int32_t blocks = (len + c.blockSize - 1) / c.blockSize;
    b.maxBlocks = std::max(b.maxBlocks, blocks);
    b.blockCount += blocks;
  }
  b.blockCount += 3;  // spare blocks nobody owns
  std::vector<int32_t> ids(size_t(b.blockCount));
  std::iota(ids.begin(), ids.end(), 0);
  std::shuffle(ids.begin(), ids.end(), rng);

  // Unowned slots: keys that would dominate any softmax and values far out of range.
  const size_t rows = size_t(b.blockCount) * c.kvHeads * c.blockSize;
  b.keys.assign(rows * c.headDim, ops::floatToHalf(4.f));
  b.values.assign(rows * c.valueDim, ops::floatToHalf(100.f));
  ops::KvLayerView view{b.keys.data(), b.values.data(), b.blockCount, c.blockSize, c.kvHeads,
                        c.headDim, c.valueDim};
  size_t next = 0;
  for (size_t s = 0; s < lengths.size(); ++s) {
    const int32_t blocks = (lengths[s] + c.blockSize - 1) / c.blockSize;
    std::vector<int32_t> table(ids.begin() + long(next), ids.begin() + long(next + blocks));
    next += size_t(blocks);
    for (int32_t pos = 0; pos < lengths[s]; ++pos) {
      const int32_t block = table[size_t(pos / c.blockSize)];
      for (int32_t h = 0; h < c.kvHeads; ++h) {
        uint16_t* k = view.keyAt(block, h, pos % c.blockSize);
        uint16_t* v = view.valueAt(block, h, pos % c.blockSize);
        for (int32_t d = 0; d < c.headDim; ++d) k[d] = ops::floatToHalf(unit(rng));
        for (int32_t d = 0; d < c.valueDim; ++d) v[d] = ops::floatToHalf(unit(rng));
      }
    }
    std::vector<int32_t> padded = table;
    padded.resize(size_t(b.maxBlocks), -1);
    b.flatTables.insert(b.flatTables.end(), padded.begin(), padded.end());
    b.tables.push_back(std::move(table));
    for (int32_t i = 0; i < c.sequences[s].stepTokens; ++i) {
      b.tokenSequence.push_back(int32_t(s));
      b.tokenPosition.push_back(c.sequences[s].cached + i);
      b.maxPosition = std::max(b.maxPosition, c.sequences[s].cached + i + 1);
    }
  }
  // Queries a little larger than the keys, so that the softmax is far from uniform.
  b.q.resize(size_t(b.tokens()) * c.heads * c.headDim);
  for (float& x : b.q) x = 2.5f * unit(rng);
  return b;
}

// Head h's sink logit: spread over [-3, 3], about the scores' own size, so that it bites.
float sinkOf(int32_t head) { return 3.0f * std::sin(1.7f * float(head) + 0.3f); }

std::vector<float> sinksOf(const AttentionCase& c) {
  std::vector<float> sinks;
  for (int32_t h = 0; h < c.heads; ++h) sinks.push_back(sinkOf(h));
  return sinks;
}

int32_t firstVisible(const AttentionCase& c, int32_t position) {
  return c.slidingWindow > 0 ? std::max(0, position - c.slidingWindow + 1) : 0;
}

// One score from q.k, as the model's attention takes it (llama.cpp's soft-cap for gemma2).
double scoreOf(const AttentionCase& c, double dot, float scale) {
  if (c.softcap <= 0.f) return dot * scale;
  return double(c.softcap) * std::tanh(dot / c.softcap) * scale;
}

// Reference 1: softmax(score(q.k)) v in double, over the fp16 cache and the fp16-rounded query.
std::vector<float> exactAttention(const AttentionCase& c, HostBatch& b, float scale) {
  const int32_t group = c.heads / c.kvHeads;
  ops::KvLayerView view{b.keys.data(), b.values.data(), b.blockCount, c.blockSize, c.kvHeads,
                        c.headDim, c.valueDim};
  std::vector<float> out(size_t(b.tokens()) * c.heads * c.valueDim);
  std::vector<double> scores, acc(size_t(c.valueDim));
  for (int32_t t = 0; t < b.tokens(); ++t) {
    const auto& table = b.tables[size_t(b.tokenSequence[size_t(t)])];
    const int32_t last = b.tokenPosition[size_t(t)];
    const int32_t first = firstVisible(c, last);
    for (int32_t head = 0; head < c.heads; ++head) {
      const float* q = b.q.data() + (size_t(t) * c.heads + size_t(head)) * c.headDim;
      scores.assign(size_t(last - first + 1), 0.0);
      double maxScore = -INFINITY;
      for (int32_t p = first; p <= last; ++p) {
        const uint16_t* k =
            view.keyAt(table[size_t(p / c.blockSize)], head / group, p % c.blockSize);
        double dot = 0.0;
        for (int32_t d = 0; d < c.headDim; ++d)
          dot += double(ops::roundToHalf(q[d])) * double(ops::halfToFloat(k[d]));
        scores[size_t(p - first)] = scoreOf(c, dot, scale);
        maxScore = std::max(maxScore, scores[size_t(p - first)]);
      }
      if (c.sinks) maxScore = std::max(maxScore, double(sinkOf(head)));
      double sum = c.sinks ? std::exp(double(sinkOf(head)) - maxScore) : 0.0;
      std::fill(acc.begin(), acc.end(), 0.0);
      for (int32_t p = first; p <= last; ++p) {
        const double w = std::exp(scores[size_t(p - first)] - maxScore);
        sum += w;
        const uint16_t* v =
            view.valueAt(table[size_t(p / c.blockSize)], head / group, p % c.blockSize);
        for (int32_t d = 0; d < c.valueDim; ++d) acc[size_t(d)] += w * ops::halfToFloat(v[d]);
      }
      float* o = out.data() + (size_t(t) * c.heads + size_t(head)) * c.valueDim;
      for (int32_t d = 0; d < c.valueDim; ++d) o[d] = float(acc[size_t(d)] / sum);
    }
  }
  return out;
}

// Reference 2: the CPU backend's ops::attendHead, as cpu_backend_layer.cpp calls it (attendHeads
// with one query where the scores are soft-capped: only it takes the cap).
std::vector<float> cpuBackendAttention(const AttentionCase& c, HostBatch& b, float scale) {
  const int32_t group = c.heads / c.kvHeads;
  ops::KvLayerView view{b.keys.data(), b.values.data(), b.blockCount, c.blockSize, c.kvHeads,
                        c.headDim, c.valueDim};
  std::vector<float> out(size_t(b.tokens()) * c.heads * c.valueDim);
  std::vector<float> q(size_t(c.headDim));
  std::vector<float> scratch(
      size_t(ops::attentionTileScratchFloats(1, b.maxPosition, c.valueDim)));
  for (int32_t t = 0; t < b.tokens(); ++t) {
    const int32_t seq = b.tokenSequence[size_t(t)];
    const ops::StepKind step = c.sequences[size_t(seq)].stepTokens == 1
                                   ? ops::StepKind::OneToken
                                   : ops::StepKind::SeveralTokens;
    const int32_t last = b.tokenPosition[size_t(t)];
    for (int32_t head = 0; head < c.heads; ++head) {
      const float* src = b.q.data() + (size_t(t) * c.heads + size_t(head)) * c.headDim;
      std::copy(src, src + c.headDim, q.begin());
      ops::roundToHalfPrecision(q.data(), c.headDim);
      float* o = out.data() + (size_t(t) * c.heads + size_t(head)) * c.valueDim;
      if (c.softcap > 0.f || c.sinks) {
        const ops::AttentionQuery query{q.data(), firstVisible(c, last), last, o,
                                        c.sinks ? sinkOf(head) : ops::kNoSink};
        ops::attendHeads({&query, 1}, view, b.tables[size_t(seq)], head / group, scale, step,
                         scratch.data(), c.softcap);
        continue;
      }
      ops::attendHead(q.data(), view, b.tables[size_t(seq)], head / group,
                      firstVisible(c, last), last, scale, step, scratch.data(), o);
    }
  }
  return out;
}


AttentionCase makeCase(int32_t heads, int32_t kvHeads, int32_t headDim, int32_t valueDim,
                       int32_t blockSize, int32_t window, std::vector<SequenceSpec> sequences,
                       bool expectSplit = false, float softcap = 0.f, bool sinks = false) {
  AttentionCase c;
  c.heads = heads;
  c.kvHeads = kvHeads;
  c.headDim = headDim;
  c.valueDim = valueDim;
  c.blockSize = blockSize;
  c.slidingWindow = window;
  c.sequences = std::move(sequences);
  c.expectSplit = expectSplit;
  c.softcap = softcap;
  c.sinks = sinks;
  return c;
}

}  // namespace

class TestKernelsAttention : public QObject {
  Q_OBJECT

 private slots:
  void invalidArgumentsAreRejected() {
    // No device needed: the launcher checks shapes before touching the device.
    kernels::AttentionBatch batch;
    batch.tokens = 1;
    batch.sequences = 1;
    batch.maxBlocksPerSequence = 1;
    kernels::AttentionShape shape;
    shape.heads = 6;
    shape.kvHeads = 4;  // 6 heads do not split into 4 groups
    shape.headDim = shape.valueDim = 64;
    float dummy = 0.f;
    QCOMPARE(kernels::pagedAttention(&dummy, nullptr, nullptr, batch, shape, &dummy, nullptr, 0,
                                     nullptr),
             cudaErrorInvalidValue);
    shape.kvHeads = 2;
    shape.headDim = 512;  // beyond the supported 256
    QCOMPARE(kernels::pagedAttention(&dummy, nullptr, nullptr, batch, shape, &dummy, nullptr, 0,
                                     nullptr),
             cudaErrorInvalidValue);
    shape.headDim = 64;
    shape.softcap = -1.f;  // a cap must be positive (or 0: none)
    QCOMPARE(kernels::pagedAttention(&dummy, nullptr, nullptr, batch, shape, &dummy, nullptr, 0,
                                     nullptr),
             cudaErrorInvalidValue);
    shape.softcap = 0.f;
    batch.tokens = 0;  // nothing to do
    QCOMPARE(kernels::pagedAttention(nullptr, nullptr, nullptr, batch, shape, nullptr, nullptr,
                                     0, nullptr),
             cudaSuccess);
    QCOMPARE(kernels::writeKvCache(nullptr, nullptr, nullptr, 3, 0, 64, 64, 16, nullptr,
                                   nullptr, nullptr),
             cudaErrorInvalidValue);
    // One long decode token wants a split, a batch of many prompt tokens does not.
    QVERIFY(kernels::pagedAttentionWorkspaceBytes(1, 3000, shape) > 0);
    QCOMPARE(kernels::pagedAttentionWorkspaceBytes(2048, 2048, shape), size_t(0));
  }

  void writeKvCache_data() {
    QTest::addColumn<int>("tokens");
    QTest::addColumn<int>("kvHeads");
    QTest::addColumn<int>("headDim");
    QTest::addColumn<int>("valueDim");
    QTest::addColumn<int>("blockSize");
    QTest::newRow("19 tokens, 3 x 64, blocks of 16") << 19 << 3 << 64 << 64 << 16;
    QTest::newRow("1 token, 8 x 128") << 1 << 8 << 128 << 128 << 16;
    QTest::newRow("111 tokens, 1 x 256, blocks of 32") << 111 << 1 << 256 << 256 << 32;
    QTest::newRow("5 tokens, 2 x 96 / 80, blocks of 7") << 5 << 2 << 96 << 80 << 7;
  }
  void writeKvCache() {
    EMBER_REQUIRE_CUDA_DEVICE();
    QFETCH(int, tokens);
    QFETCH(int, kvHeads);
    QFETCH(int, headDim);
    QFETCH(int, valueDim);
    QFETCH(int, blockSize);
    std::mt19937 rng(51u + tokens);
    std::uniform_real_distribution<float> dist(-70000.f, 70000.f);  // past fp16's range too
    std::vector<float> k(size_t(tokens) * kvHeads * headDim), v(size_t(tokens) * kvHeads * valueDim);
    for (float& x : k) x = dist(rng) * (rng() % 2 ? 1e-4f : 1.f);
    for (float& x : v) x = dist(rng) * 1e-6f;  // subnormal fp16 values among them
    const int32_t blockCount = tokens / blockSize + 3;
    // Distinct shuffled slots; the last token is padding (slot -1, not written).
    std::vector<int32_t> slotMapping(size_t(blockCount) * blockSize);
    std::iota(slotMapping.begin(), slotMapping.end(), 0);
    std::shuffle(slotMapping.begin(), slotMapping.end(), rng);
    slotMapping.resize(size_t(tokens));
    if (tokens > 1) slotMapping.back() = -1;

    // Reference: ops::storeKv with an identity block table, position = slot index.
    const size_t rows = size_t(blockCount) * kvHeads * blockSize;
    std::vector<uint16_t> keys(rows * headDim, 0x7bffu), values(rows * valueDim, 0x7bffu);
    std::vector<uint16_t> wantKeys = keys, wantValues = values;
    ops::KvLayerView view{wantKeys.data(), wantValues.data(), blockCount, blockSize, kvHeads,
                          headDim, valueDim};
    std::vector<int32_t> identity(static_cast<size_t>(blockCount));
    std::iota(identity.begin(), identity.end(), 0);
    for (int32_t t = 0; t < tokens; ++t)
      if (slotMapping[size_t(t)] >= 0)
        ops::storeKv(view, identity, slotMapping[size_t(t)], k.data() + size_t(t) * kvHeads * headDim,
                     v.data() + size_t(t) * kvHeads * valueDim);

    DeviceBuffer<float> dk(k), dv(v);
    DeviceBuffer<int32_t> dslotMapping(slotMapping);
    DeviceBuffer<uint16_t> dkeys(keys), dvalues(values);
    QVERIFY(dk.ok() && dv.ok() && dslotMapping.ok() && dkeys.ok() && dvalues.ok());
    EMBER_CHECK_CUDA(kernels::writeKvCache(
        dk.get(), dv.get(), dslotMapping.get(), tokens, kvHeads, headDim, valueDim, blockSize,
        reinterpret_cast<__half*>(dkeys.get()), reinterpret_cast<__half*>(dvalues.get()),
        nullptr));
    EMBER_CHECK_CUDA(cudaDeviceSynchronize());
    QVERIFY(dkeys.download() == wantKeys);
    QVERIFY(dvalues.download() == wantValues);
  }

  void pagedAttention_data() {
    QTest::addColumn<AttentionCase>("attention");
    using S = SequenceSpec;
    // heads, kvHeads, headDim, valueDim, blockSize, window, {cached + step tokens}...
    QTest::newRow("decode, GQA 1, d64")
        << makeCase(4, 4, 64, 64, 16, 0, {S{0, 1}, S{19, 1}, S{111, 1}, S{989, 1}, S{5, 1}});
    QTest::newRow("prompt chunks, GQA 4, d128")
        << makeCase(8, 2, 128, 128, 16, 0, {S{0, 37}, S{64, 19}, S{3, 1}});
    QTest::newRow("mixed decode + prompt, GQA 8, d128")
        << makeCase(16, 2, 128, 128, 16, 0,
                    {S{200, 1}, S{0, 50}, S{17, 1}, S{100, 13}, S{40, 2}, S{7, 1}});
    QTest::newRow("GQA 3 (SmolLM2), d64, blocks of 32")
        << makeCase(9, 3, 64, 64, 32, 0, {S{0, 64}, S{129, 1}, S{30, 23}});
    QTest::newRow("gemma3 d256, GQA 4, sliding window 64")
        << makeCase(4, 1, 256, 256, 32, 64, {S{300, 1}, S{100, 40}, S{0, 70}, S{63, 2}});
    QTest::newRow("long decode, split context, GQA 1, d128")
        << makeCase(8, 8, 128, 128, 16, 0, {S{2999, 1}, S{3000, 1}, S{1500, 1}}, true);
    QTest::newRow("long prompt chunk, split, GQA 8, d64")
        << makeCase(8, 1, 64, 64, 16, 0, {S{2900, 100}}, true);
    QTest::newRow("long, d256, GQA 8, window 512")
        << makeCase(8, 1, 256, 256, 16, 512, {S{3000, 1}, S{2000, 24}}, true);
    QTest::newRow("MQA (GQA 32): prompt tokens one CTA each")
        << makeCase(32, 1, 64, 64, 16, 0, {S{10, 5}, S{70, 1}, S{0, 3}});
    QTest::newRow("odd shapes: d96 / v80, blocks of 7")
        << makeCase(6, 2, 96, 80, 7, 0, {S{0, 19}, S{111, 1}, S{20, 9}});
    // |q.k| reaches ~8 here, so a cap of 2 bites on most scores.
    QTest::newRow("gemma2 soft-cap 2, GQA 2, d64, window 32")
        << makeCase(4, 2, 64, 64, 16, 32, {S{0, 40}, S{70, 1}, S{5, 3}}, false, 2.f);
    QTest::newRow("soft-cap 2, long decode, split context, d128")
        << makeCase(4, 4, 128, 128, 16, 0, {S{2999, 1}, S{0, 50}}, true, 2.f);
    QTest::newRow("gpt-oss sinks, GQA 8, d64, window 32")
        << makeCase(16, 2, 64, 64, 16, 32, {S{0, 40}, S{70, 1}, S{5, 3}}, false, 0.f, true);
    QTest::newRow("sinks, long decode, split context, d64")
        << makeCase(8, 8, 64, 64, 16, 0, {S{2999, 1}, S{0, 30}}, true, 0.f, true);
  }
  // No device needed: the two CPU references agree with each other within the CPU tolerance
  // (checks the test's batch building and that tolerance; the GPU is held to both below).
  void referencesAgree_data() { pagedAttention_data(); }
  void referencesAgree() {
    QFETCH(AttentionCase, attention);
    const float scale = 1.0f / std::sqrt(float(attention.headDim));
    HostBatch b = buildBatch(attention, 61u + uint32_t(attention.heads * 7 + attention.headDim));
    const QString bad = mismatch(cpuBackendAttention(attention, b, scale),
                                 exactAttention(attention, b, scale), kCpuAtol, kCpuRtol);
    QVERIFY2(bad.isEmpty(), qPrintable(bad));
  }

  void pagedAttention() {
    EMBER_REQUIRE_CUDA_DEVICE();
    QFETCH(AttentionCase, attention);
    const AttentionCase& c = attention;
    const float scale = 1.0f / std::sqrt(float(c.headDim));
    HostBatch b = buildBatch(c, 61u + uint32_t(c.heads * 7 + c.headDim));
    const std::vector<float> exact = exactAttention(c, b, scale);
    const std::vector<float> cpu = cpuBackendAttention(c, b, scale);

    DeviceBuffer<float> dq(b.q);
    DeviceBuffer<uint16_t> dkeys(b.keys), dvalues(b.values);
    DeviceBuffer<int32_t> dseq(b.tokenSequence), dpos(b.tokenPosition), dtables(b.flatTables);
    DeviceBuffer<float> dout(size_t(b.tokens()) * c.heads * c.valueDim);
    DeviceBuffer<float> dsinks(sinksOf(c));
    QVERIFY(dsinks.ok());
    QVERIFY(dq.ok() && dkeys.ok() && dvalues.ok() && dseq.ok() && dpos.ok() && dtables.ok() &&
            dout.ok());
    kernels::AttentionBatch batch;
    batch.tokens = b.tokens();
    batch.sequences = int32_t(c.sequences.size());
    batch.tokenSequence = dseq.get();
    batch.tokenPosition = dpos.get();
    batch.blockTables = dtables.get();
    batch.maxBlocksPerSequence = b.maxBlocks;
    batch.maxPosition = b.maxPosition;
    kernels::AttentionShape shape;
    shape.heads = c.heads;
    shape.kvHeads = c.kvHeads;
    shape.headDim = c.headDim;
    shape.valueDim = c.valueDim;
    shape.blockSize = c.blockSize;
    // As CudaBackend::attentionShape: with a cap, the model's score scale follows it.
    shape.scale = c.softcap > 0.f ? 1.f : scale;
    shape.softcap = c.softcap;
    shape.capScale = c.softcap > 0.f ? scale : 1.f;
    shape.slidingWindow = c.slidingWindow;
    shape.sinks = c.sinks ? dsinks.get() : nullptr;

    const size_t workspaceBytes =
        kernels::pagedAttentionWorkspaceBytes(batch.tokens, batch.maxPosition, shape);
    if (c.expectSplit) QVERIFY(workspaceBytes > 0);
    DeviceBuffer<uint8_t> workspace(workspaceBytes);
    QVERIFY(workspace.ok());
    // With the planned workspace (split as planned), then with none (no split): same results.
    for (const bool withWorkspace : {true, false}) {
      EMBER_CHECK_CUDA(cudaMemset(dout.get(), 0xff, dout.size() * sizeof(float)));  // NaNs
      EMBER_CHECK_CUDA(kernels::pagedAttention(
          dq.get(), reinterpret_cast<const __half*>(dkeys.get()),
          reinterpret_cast<const __half*>(dvalues.get()), batch, shape, dout.get(),
          withWorkspace ? workspace.get() : nullptr, withWorkspace ? workspaceBytes : 0,
          nullptr));
      EMBER_CHECK_CUDA(cudaDeviceSynchronize());
      const std::vector<float> got = dout.download();
      const QString badExact = mismatch(got, exact, kExactAtol, kExactRtol);
      QVERIFY2(badExact.isEmpty(),
               qPrintable((withWorkspace ? "split: " : "unsplit: ") + badExact));
      const QString badCpu = mismatch(got, cpu, kCpuAtol, kCpuRtol);
      QVERIFY2(badCpu.isEmpty(),
               qPrintable((withWorkspace ? "split vs cpu: " : "unsplit vs cpu: ") + badCpu));
    }
  }
};

QTEST_APPLESS_MAIN(TestKernelsAttention)
#include "test_kernels_attention.moc"
