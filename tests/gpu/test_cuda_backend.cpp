// The CUDA backend end to end. Reference: the CPU backend (engine/backend/cpu), itself checked
// against llama.cpp in tests/engine/model/test_fidelity_llamacpp.cpp, run over the same prompts
// (the llama.cpp golden prompts of tests/data/golden and the 962-token Gemma prompt that crosses
// its 512-position sliding window) with every position's logits, then 16 teacher-forced decode
// steps.
//
// Real weights on a lent GPU machine: it receives at most 64 MiB, so the whole model files do
// not travel. Each real-weight row takes the whole file when it finds one and otherwise a copy
// cut to its first blocks by `ember-cli cut-model` (scripts/prepare-gpu-run.sh carries
// SmolLM2-135M-Instruct.cut4.Q4_1.gguf: 4 of 30 layers, every tensor byte for byte the real
// model's), looking in $EMBER_GPU_MODELS_DIR first (tests/gpu/run.sh sets it) and then in the
// usual models folder. The reference stays the CPU backend on the same file, so a cut model
// checks the same kernels on the same weight types; only the depth differs. No cut of Gemma 3
// travels (its Q8_0 embedding alone is 170 MiB): its rows skip there. The prompts are the golden
// files' token ids, which are tracked in the repository and travel with it.
//
// Tolerance: top-1 agreement on at least 99% of positions and a mean KL(cpu || cuda) over the
// whole vocabulary below 1e-3. The two cannot agree bit for bit: prompt chunks go through fp16
// copies of weights and activations into cuBLAS (fp32 accumulation) and the kernels sum in their
// own order, while the CPU reproduces llama.cpp's integer dot products and summation order; a
// few near-ties flip, the distributions stay the same.
//
// Also: the step plan (host only, runs everywhere; reference: hand-computed metadata); a mixed
// batch (a prompt chunk with decode tokens of other sequences) against each sequence run alone,
// within the same tolerance per row; CUDA-graph replay against eager launches of the same padded
// steps, bit for bit; bad batches are clear errors and the backend keeps working.
#include <QtTest>
#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <memory>

#include "backend/cpu/cpu_backend.h"
#include "backend/cuda/cuda_backend.h"
#include "backend/cuda/cuda_step_plan.h"
#include "common/test_paths.h"
#include "engine/model/golden_logits.h"
#include "engine/model/paged_sequence.h"
#include "gpu/backend_agreement.h"
#include "gguf/gguf_file.h"
#include "kernels/kernel_test_support.h"
#include "model/model_config.h"

using namespace ember;
using test::PagedSequence;
using test::Agreement;
using test::compareRows;
using test::rowKl;

namespace {

constexpr int32_t kBlockSize = 16;
constexpr int32_t kBlocks = 512;  // 8192 positions: room for every sequence of a test
constexpr double kMinTop1 = 0.99;
constexpr double kMaxMeanKl = 1e-3;
constexpr int kDecodeSteps = 16;
const char* kSmol = "SmolLM2-135M-Instruct.Q4_1.gguf";
const char* kGemma = "gemma-3-270m-q4_k_m.gguf";
// Cut copies a row may use in place of the whole file (scripts/prepare-gpu-run.sh writes them).
const std::map<QString, QString> kCutCopies = {
    {kSmol, "SmolLM2-135M-Instruct.cut4.Q4_1.gguf"},
};

struct Model {
  std::unique_ptr<gguf::GgufFile> file;
  model::ModelConfig config;
};

Model openModel(const QString& path) {
  Model m;
  m.file = gguf::GgufFile::open(path.toStdString());
  m.config = model::readModelConfig(*m.file);
  return m;
}

std::unique_ptr<cuda::CudaBackend> cudaBackend(const Model& m, bool graphs = true) {
  cuda::CudaBackendOptions options;
  options.cudaGraphs = graphs;
  auto backend = std::make_unique<cuda::CudaBackend>(*m.file, m.config, options);
  backend->allocateKvCache({kBlockSize, kBlocks});
  return backend;
}

std::unique_ptr<cpu::CpuBackend> cpuBackend(const Model& m) {
  auto backend = std::make_unique<cpu::CpuBackend>(*m.file, m.config, 0);
  backend->allocateKvCache({kBlockSize, kBlocks});
  return backend;
}

// Largest minus second-largest logit of a row.
float top2Gap(std::span<const float> row) {
  float first = -INFINITY, second = -INFINITY;
  for (float x : row) {
    if (x > first) {
      second = first;
      first = x;
    } else if (x > second) {
      second = x;
    }
  }
  return first - second;
}

std::vector<int32_t> goldenPrompt(const QString& relative, const QString& name, QString* why) {
  const QString path = test::sourceDir() + "/" + relative;
  test::GoldenFile golden;
  if (!test::loadGolden(path, &golden, why)) return {};
  for (const test::GoldenPrompt& p : golden.prompts)
    if (p.name == name) return p.ids;
  *why = "no prompt " + name + " in " + path;
  return {};
}

}  // namespace

namespace ember::test {

// The file a real-weight row runs on: `fileName`, else its cut copy, in $EMBER_GPU_MODELS_DIR
// and then in modelsDir(). Empty, with `why`, when there is neither.
QString findGpuTestModel(const QString& fileName, QString* why) {
  QStringList dirs;
  if (const QString gpuDir = qEnvironmentVariable("EMBER_GPU_MODELS_DIR"); !gpuDir.isEmpty())
    dirs << gpuDir;
  dirs << modelsDir();
  QStringList names{fileName};
  if (const auto cut = kCutCopies.find(fileName); cut != kCutCopies.end()) names << cut->second;
  for (const QString& dir : dirs)
    for (const QString& name : names)
      if (const QString path = dir + "/" + name; QFileInfo::exists(path)) return path;
  *why = QStringLiteral("none of %1 in %2; run scripts/fetch-models.sh, or scripts/"
                        "prepare-gpu-run.sh and set EMBER_GPU_MODELS_DIR to .gpu-carry/models")
             .arg(names.join(", "), dirs.join(", "));
  return {};
}

}  // namespace ember::test

#define EMBER_REQUIRE_GPU_TEST_MODEL(var, file) EMBER_REQUIRE_PATH(var, findGpuTestModel, file)

class TestCudaBackend : public QObject {
  Q_OBJECT

 private slots:
  // ---- the step plan: host code, runs without a device ----
  void planMixedBatch() {
    // Hand-computed: block size 4; sequence 0 = 3 prompt tokens at 0..2 in block 3, all logits;
    // sequence 1 = one decode token at position 5, its second block is block 0. Table entries
    // past what a sequence needs are not copied: they point at the scratch block (10).
    const std::vector<int32_t> tokens{5, 6, 7, 9}, table0{3, 1}, table1{2, 0};
    std::vector<BatchSequence> seqs(2);
    seqs[0] = {0, 3, 0, table0, BatchSequence::Logits::All};
    seqs[1] = {3, 1, 5, table1, BatchSequence::Logits::Last};
    cuda::StepPlan plan;
    cuda::planStep({tokens, seqs}, limits(), plan);
    QCOMPARE(plan.bucket, 0);
    QCOMPARE(plan.tokens, 4);
    QCOMPARE(plan.sequences, 2);
    QCOMPARE(plan.tableWidth, 2);
    QCOMPARE(plan.maxPosition, 6);
    QCOMPARE(plan.logitRows, 4);
    QCOMPARE(plan.returnedRows, 4);
    const std::vector<int32_t> expected{5, 6, 7, 9,     // ids
                                        0, 0, 0, 1,     // sequence
                                        0, 1, 2, 5,     // position
                                        12, 13, 14, 1,  // slot = block * 4 + position % 4
                                        0, 1, 2, 3,     // output rows
                                        3, 10, 2, 0};   // block tables (2 x 2)
    QCOMPARE(plan.metadata, expected);
  }

  void planDecodeBucket() {
    // Three decode tokens -> bucket 4, table width 256 positions / 4 = 64; the sequence without
    // logits and the padding token go after the wanted rows; padding lives in scratch block 10.
    const std::vector<int32_t> tokens{11, 12, 13}, t0{1, 2}, t1{5}, t2{6, 7};
    std::vector<BatchSequence> seqs(3);
    seqs[0] = {0, 1, 4, t0, BatchSequence::Logits::Last};
    seqs[1] = {1, 1, 0, t1, BatchSequence::Logits::None};
    seqs[2] = {2, 1, 7, t2, BatchSequence::Logits::Last};
    cuda::StepPlan plan;
    cuda::planStep({tokens, seqs}, limits(), plan);
    QCOMPARE(plan.bucket, 4);
    QCOMPARE(plan.tokens, 4);
    QCOMPARE(plan.sequences, 4);
    QCOMPARE(plan.tableWidth, 64);
    QCOMPARE(plan.maxPosition, 256);
    QCOMPARE(plan.logitRows, 4);
    QCOMPARE(plan.returnedRows, 2);
    const auto at = [&](size_t offset, size_t n) {
      return std::vector<int32_t>(plan.metadata.begin() + ptrdiff_t(offset),
                                  plan.metadata.begin() + ptrdiff_t(offset + n));
    };
    QCOMPARE(at(plan.tokenIdsAt(), 4), (std::vector<int32_t>{11, 12, 13, 0}));
    QCOMPARE(at(plan.tokenSequenceAt(), 4), (std::vector<int32_t>{0, 1, 2, 3}));
    QCOMPARE(at(plan.tokenPositionAt(), 4), (std::vector<int32_t>{4, 0, 7, 0}));
    QCOMPARE(at(plan.slotMappingAt(), 4), (std::vector<int32_t>{8, 20, 31, 40}));
    QCOMPARE(at(plan.outputIndexAt(), 4), (std::vector<int32_t>{0, 2, 1, 3}));
    std::vector<int32_t> tables(4 * 64, 10);
    tables[0] = 1, tables[1] = 2, tables[64] = 5, tables[128] = 6, tables[129] = 7;
    QCOMPARE(at(plan.blockTablesAt(), 4 * 64), tables);
    QCOMPARE(plan.metadata.size(), plan.blockTablesAt() + 4 * 64);
  }

  void planRejectsBadBatches_data() {
    QTest::addColumn<int32_t>("token");
    QTest::addColumn<int32_t>("block");
    QTest::addColumn<QString>("message");
    QTest::newRow("token outside the vocabulary") << 100 << 0 << "outside the vocabulary";
    QTest::newRow("block outside the pool") << 1 << 10 << "outside the pool";  // 10 = scratch
  }
  void planRejectsBadBatches() {
    QFETCH(int32_t, token);
    QFETCH(int32_t, block);
    QFETCH(QString, message);
    const std::vector<int32_t> tokens{token}, table{block};
    const BatchSequence s{0, 1, 0, table, BatchSequence::Logits::Last};
    cuda::StepPlan plan;
    try {
      cuda::planStep({tokens, {&s, 1}}, limits(), plan);
      QFAIL("no error");
    } catch (const ember::Error& e) {
      QVERIFY2(QString(e.what()).contains(message), e.what());
    }
  }

  // ---- on the device ----
  void matchesCpuBackend_data() {
    QTest::addColumn<QString>("modelFile");
    QTest::addColumn<QString>("golden");
    QTest::addColumn<QString>("prompt");
    QTest::addColumn<int32_t>("chunk");
    const QString smolGolden = "tests/data/golden/SmolLM2-135M-Instruct.Q4_1.json";
    const QString gemmaGolden = "tests/data/golden/gemma-3-270m-q4_k_m.json";
    QTest::newRow("smollm2 raw_long, chunks of 128") << kSmol << smolGolden << "raw_long" << 128;
    QTest::newRow("smollm2 chat_multiturn, one step")
        << kSmol << smolGolden << "chat_multiturn" << 512;
    QTest::newRow("smollm2 raw_code, chunks of 5 (matvec path)")
        << kSmol << smolGolden << "raw_code" << 5;
    QTest::newRow("gemma3 raw_long, chunks of 128") << kGemma << gemmaGolden << "raw_long" << 128;
    QTest::newRow("gemma3 962 tokens past the 512 window, chunks of 256")
        << kGemma << "tests/engine/model/data/gemma-3-270m-q4_k_m.swa.json" << "raw_long_twice"
        << 256;
    // The tiny F32 models of tests/engine/model/data cover what the real ones do not (qwen2's
    // biases, Llama 3's rope_freqs with linear scaling, a gemma3 window of 4), over a synthetic
    // 40-token prompt in chunks of 8: the fp32 matvec path, so near-ties of their random
    // weights are not reordered by fp16 GEMM rounding.
    for (const char* tiny : {"tiny-qwen2", "tiny-llama3", "tiny-gemma3"})
      QTest::newRow(tiny) << QString("tiny:") + tiny << "" << "" << 8;
  }
  void matchesCpuBackend() {
    EMBER_REQUIRE_CUDA_DEVICE();
    QFETCH(QString, modelFile);
    QFETCH(QString, golden);
    QFETCH(QString, prompt);
    QFETCH(int32_t, chunk);
    QString path;
    std::vector<int32_t> ids;
    if (modelFile.startsWith("tiny:")) {
      path = test::sourceDir() + "/tests/engine/model/data/" + modelFile.mid(5) + ".gguf";
      for (int32_t i = 0; i < 40; ++i) ids.push_back((i * 37 + 11) % 64);  // the tiny vocabulary
    } else {
      EMBER_REQUIRE_GPU_TEST_MODEL(modelPath, modelFile);
      path = modelPath;
      QString why;
      ids = goldenPrompt(golden, prompt, &why);
      QVERIFY2(!ids.empty(), qPrintable(why));
    }
    const Model m = openModel(path);
    auto cpu = cpuBackend(m);
    auto gpu = cudaBackend(m);
    const size_t vocab = size_t(m.config.vocabSize);
    PagedSequence cpuSeq(kBlockSize, 0, kBlocks, 7), gpuSeq(kBlockSize, 0, kBlocks, 7);
    Agreement a;
    const std::vector<float> cpuLogits = cpuSeq.prefillAll(*cpu, ids, chunk);
    compareRows(cpuLogits, gpuSeq.prefillAll(*gpu, ids, chunk), vocab, a);
    // Teacher-forced decode: both backends get the CPU's greedy token.
    TokenId next = test::argmax({cpuLogits.data() + cpuLogits.size() - vocab, vocab});
    ForwardOutput cpuOut, gpuOut;
    for (int i = 0; i < kDecodeSteps; ++i) {
      cpuSeq.step(*cpu, next, cpuOut);
      gpuSeq.step(*gpu, next, gpuOut);
      compareRows(cpuOut.logits, gpuOut.logits, vocab, a);
      next = test::argmax(cpuOut.logits);
    }
    const cuda::GraphStats& graphs = gpu->graphStats();
    qInfo("%s on %s (%d layers): %lld positions, top-1 %.4f, KL mean %.2e max %.2e, "
          "%lld graph replays %s",
          gpu->name().c_str(), qPrintable(QFileInfo(path).fileName()), m.config.layerCount,
          qlonglong(a.positions), a.top1Rate(), a.klMean(), a.klMax,
          qlonglong(graphs.replays), graphs.disabledReason.c_str());
    QVERIFY2(a.top1Rate() >= kMinTop1, qPrintable(QString("top-1 %1").arg(a.top1Rate())));
    QVERIFY2(a.klMean() < kMaxMeanKl, qPrintable(QString("mean KL %1").arg(a.klMean())));
  }

  void mixedBatchMatchesAlone_data() {
    QTest::addColumn<QString>("modelFile");
    QTest::newRow("smollm2") << kSmol;
    QTest::newRow("gemma3") << kGemma;
  }
  void mixedBatchMatchesAlone() {
    // Sequence A: a 40-token prompt chunk; B and C: one decode token each after prompts of 30
    // and 600 tokens. Reference: each run alone on the same backend (its own blocks).
    EMBER_REQUIRE_CUDA_DEVICE();
    QFETCH(QString, modelFile);
    EMBER_REQUIRE_GPU_TEST_MODEL(path, modelFile);
    const Model m = openModel(path);
    auto gpu = cudaBackend(m);
    const size_t vocab = size_t(m.config.vocabSize);
    const auto prompt = [&](int32_t n, int32_t salt) {
      std::vector<int32_t> ids(static_cast<size_t>(n));
      for (int32_t i = 0; i < n; ++i) ids[size_t(i)] = (i * 7919 + salt * 104729) % 5000 + 100;
      return ids;
    };
    const std::vector<int32_t> a = prompt(40, 1), b = prompt(31, 2), c = prompt(601, 3);
    // Alone: A in blocks [0, 8), B in [100, 108), C in [200, 250).
    PagedSequence aAlone(kBlockSize, 0, 8, 1), bAlone(kBlockSize, 100, 8, 2),
        cAlone(kBlockSize, 200, 50, 3);
    std::vector<float> alone = aAlone.prefillAll(*gpu, a, 64);
    alone.erase(alone.begin(), alone.end() - ptrdiff_t(vocab));  // A's last row
    ForwardOutput out;
    bAlone.prefillAll(*gpu, std::span(b).first(30), 64);
    const auto bRow = bAlone.step(*gpu, b.back(), out);
    alone.insert(alone.end(), bRow.begin(), bRow.end());
    cAlone.prefillAll(*gpu, std::span(c).first(600), 256);
    const auto cRow = cAlone.step(*gpu, c.back(), out);
    alone.insert(alone.end(), cRow.begin(), cRow.end());

    // Mixed: B and C prefilled again in other blocks, then one step with A's chunk + B + C.
    PagedSequence aMixed(kBlockSize, 300, 8, 4), bMixed(kBlockSize, 320, 8, 5),
        cMixed(kBlockSize, 340, 50, 6);
    bMixed.prefillAll(*gpu, std::span(b).first(30), 64);
    cMixed.prefillAll(*gpu, std::span(c).first(600), 256);
    std::vector<int32_t> tokens(a);
    tokens.push_back(b.back());
    tokens.push_back(c.back());
    const std::vector<BatchSequence> seqs{aMixed.next(0, 40, BatchSequence::Logits::Last),
                                          bMixed.next(40, 1, BatchSequence::Logits::Last),
                                          cMixed.next(41, 1, BatchSequence::Logits::Last)};
    gpu->forward({tokens, seqs}, out);
    QCOMPARE(out.rows, size_t(3));
    // Per row: KL below the tolerance, and the same top-1 token unless the row alone has a
    // near-tie (top-2 gap under 0.05: fp16 rounding may order those either way).
    for (size_t r = 0; r < 3; ++r) {
      const std::span<const float> ref(alone.data() + r * vocab, vocab);
      const std::span<const float> mixed(out.logits.data() + r * vocab, vocab);
      const double kl = rowKl(ref, mixed);
      qInfo("row %zu: KL %.2e, top-2 gap %.3f", r, kl, double(top2Gap(ref)));
      QVERIFY2(kl < kMaxMeanKl, qPrintable(QString("row %1: KL %2").arg(r).arg(kl)));
      if (top2Gap(ref) >= 0.05f) QCOMPARE(test::argmax(mixed), test::argmax(ref));
    }
  }

  void graphReplayEqualsEager() {
    // Three sequences decoding together (bucket 4) and, after, one alone (bucket 1), across the
    // 256-position boundary of the graph's table width (a second capture). Reference: the same
    // steps on a backend with graphs off, which launches the same padded kernels eagerly.
    EMBER_REQUIRE_CUDA_DEVICE();
    EMBER_REQUIRE_GPU_TEST_MODEL(path, kSmol);
    const Model m = openModel(path);
    auto graphed = cudaBackend(m, true), eager = cudaBackend(m, false);
    const std::vector<int32_t> lengths{40, 250, 7};
    std::vector<float> graphedLogits, eagerLogits;
    for (auto* backend : {graphed.get(), eager.get()}) {
      std::vector<float>& logits = backend == graphed.get() ? graphedLogits : eagerLogits;
      std::vector<PagedSequence> seqs;
      for (size_t s = 0; s < lengths.size(); ++s) {
        seqs.emplace_back(kBlockSize, int32_t(s) * 40, 40, uint32_t(s));
        std::vector<int32_t> ids(static_cast<size_t>(lengths[s]));
        for (size_t i = 0; i < ids.size(); ++i) ids[i] = int32_t(100 + (i * 31 + s * 17) % 3000);
        seqs.back().prefillAll(*backend, ids, 128);
      }
      ForwardOutput out;
      for (int step = 0; step < 12; ++step) {
        std::vector<int32_t> tokens;
        std::vector<BatchSequence> batch;
        for (size_t s = 0; s < seqs.size(); ++s) {
          batch.push_back(seqs[s].next(int32_t(s), 1, BatchSequence::Logits::Last));
          tokens.push_back(int32_t(200 + step * 3 + int32_t(s)));
        }
        backend->forward({tokens, batch}, out);
        logits.insert(logits.end(), out.logits.begin(), out.logits.end());
        for (PagedSequence& s : seqs) s.advance(1);
      }
      for (int step = 0; step < 4; ++step) {
        const std::span<const float> row = seqs[0].step(*backend, 300 + step, out);
        logits.insert(logits.end(), row.begin(), row.end());
      }
    }
    const cuda::GraphStats& stats = graphed->graphStats();
    QVERIFY2(stats.enabled, stats.disabledReason.c_str());
    QVERIFY2(stats.replays >= 10, qPrintable(QString("%1 replays").arg(stats.replays)));
    QCOMPARE(eager->graphStats().replays, int64_t(0));
    QCOMPARE(graphedLogits.size(), eagerLogits.size());
    QVERIFY(std::memcmp(graphedLogits.data(), eagerLogits.data(),
                        graphedLogits.size() * sizeof(float)) == 0);
  }

  void badBatchIsAnErrorAndTheBackendLivesOn() {
    // Reference: the CPU backend's messages for the same faults ("invalid batch: ...").
    EMBER_REQUIRE_CUDA_DEVICE();
    EMBER_REQUIRE_GPU_TEST_MODEL(path, kSmol);
    const Model m = openModel(path);
    cuda::CudaBackendOptions options;
    cuda::CudaBackend gpu(*m.file, m.config, options);
    QVERIFY(QString::fromStdString(gpu.name()).startsWith("cuda:"));
    const std::vector<int32_t> table{0};
    const BatchSequence s{0, 1, 0, table, BatchSequence::Logits::Last};
    ForwardOutput out;
    const std::vector<int32_t> good{1}, bad{m.config.vocabSize};
    QVERIFY_THROWS_EXCEPTION(ember::Error, gpu.forward({good, {&s, 1}}, out));  // no KV yet
    gpu.allocateKvCache({kBlockSize, 4});
    QCOMPARE(gpu.memoryInfo().kvCacheBytes, gpu.kvBytesPerBlock(kBlockSize) * 5);  // + scratch
    QVERIFY(gpu.memoryInfo().weightBytes > 0 && gpu.memoryInfo().workspaceBytes > 0);
    QVERIFY_THROWS_EXCEPTION(ember::Error, gpu.forward({bad, {&s, 1}}, out));
    gpu.forward({good, {&s, 1}}, out);
    QCOMPARE(out.rows, size_t(1));
    QCOMPARE(out.logits.size(), size_t(m.config.vocabSize));
    QVERIFY(std::all_of(out.logits.begin(), out.logits.end(), [](float x) { return std::isfinite(x); }));
  }

 private:
  static cuda::StepLimits limits() {
    cuda::StepLimits l;
    l.vocabSize = 100;
    l.contextLength = 1024;
    l.blockSize = 4;
    l.blockCount = 10;
    l.scratchBlock = 10;
    return l;
  }
};

QTEST_APPLESS_MAIN(TestCudaBackend)
#include "test_cuda_backend.moc"
