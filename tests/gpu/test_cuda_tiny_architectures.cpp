// The CUDA backend on every architecture, through the tiny synthetic models (model/tiny_model.h:
// random F32 weights in each architecture's real structure, here with the 64-piece vocabulary of
// tests/engine/model/data/tiny-llama3.gguf). Reference: the CPU backend on the
// same file, itself checked against llama.cpp model by model in
// tests/engine/model/test_tiny_architectures.cpp. This covers the steps the real-weight rows of
// test_cuda_backend.cpp do not: gemma2's attention and output soft-caps, granite's residual and
// logit multipliers, YaRN (mistral3, llama + YaRN), LongRoPE's factors and attn_factor (phi3),
// olmo2's post-norms and whole-row QK-norm, smollm3's NoPE layers, fused QKV and gate-up, biases,
// and the mixtures of experts: qwen3moe's softmax routing, gpt-oss's biased router, biased
// experts, clamped SwiGLU and attention sinks (a 40-token prompt in chunks of 8 routes tokens of
// one chunk to several experts at once, so each expert runs over several rows).
//
// Tolerance (as test_cuda_backend.cpp): top-1 agreement on at least 99% of positions and a mean
// KL(cpu || cuda) below 1e-3 over a 40-token prompt in chunks of 8 (the fp32 matvec path: the
// random weights give near-ties that fp16 GEMM rounding would reorder) and 16 teacher-forced
// decode steps. Without a CUDA device the test skips with the reason.
#include <QtTest>

#include <memory>

#include "backend/cpu/cpu_backend.h"
#include "backend/cuda/cuda_backend.h"
#include "common/test_paths.h"
#include "engine/model/paged_sequence.h"
#include "gguf/gguf_file.h"
#include "gpu/backend_agreement.h"
#include "kernels/kernel_test_support.h"
#include "model/model_config.h"
#include "model/tiny_model.h"

using namespace ember;

namespace {

constexpr int32_t kBlockSize = 16;
constexpr int32_t kBlocks = 16;  // 256 positions
constexpr double kMinTop1 = 0.99;
constexpr double kMaxMeanKl = 1e-3;
constexpr int kDecodeSteps = 16;
constexpr int32_t kChunk = 8;

}  // namespace

class TestCudaTinyArchitectures : public QObject {
  Q_OBJECT

 private slots:
  void matchesCpuBackend_data() {
    QTest::addColumn<QString>("architecture");
    QTest::addColumn<QString>("preset");
    for (const std::string& a : model::tinyModelArchitectures())
      QTest::newRow(a.c_str()) << QString::fromStdString(a) << "tiny";
    QTest::newRow("llama + YaRN") << "llama" << "tiny-yarn";
    QTest::newRow("phi3 + LongRoPE") << "phi3" << "tiny-longrope";
    QTest::newRow("gpt-oss + MXFP4 experts") << "gpt-oss" << "tiny-mxfp4";
  }

  void matchesCpuBackend() {
    EMBER_REQUIRE_CUDA_DEVICE();
    QFETCH(QString, architecture);
    QFETCH(QString, preset);
    // The 64-piece vocabulary of a tiny model in the repository, so that the test needs no
    // shared test data on a lent GPU machine (and the embedding stays small).
    const QString vocabulary = test::sourceDir() + "/tests/engine/model/data/tiny-llama3.gguf";
    QTemporaryDir dir(QCoreApplication::applicationDirPath() + "/cuda-tiny-XXXXXX");
    QVERIFY(dir.isValid());
    const QString path = dir.filePath(architecture + ".gguf");
    model::TinyModelSpec spec;
    spec.architecture = architecture.toStdString();
    spec.preset = preset.toStdString();
    spec.vocabulary = vocabulary.toStdString();
    spec.seed = 7;
    model::writeTinyModel(spec, path.toStdString());

    const auto file = gguf::GgufFile::open(path.toStdString());
    const model::ModelConfig config = model::readModelConfig(*file);
    cpu::CpuBackend cpu(*file, config, 0);
    cuda::CudaBackend gpu(*file, config, {});
    cpu.allocateKvCache({kBlockSize, kBlocks});
    gpu.allocateKvCache({kBlockSize, kBlocks});
    const size_t vocab = size_t(config.vocabSize);

    std::vector<TokenId> ids;
    for (int32_t i = 0; i < 40; ++i) ids.push_back((i * 37 + 11) % config.vocabSize);
    test::PagedSequence cpuSeq(kBlockSize, 0, kBlocks, 7), gpuSeq(kBlockSize, 0, kBlocks, 7);
    test::Agreement a;
    const std::vector<float> cpuLogits = cpuSeq.prefillAll(cpu, ids, kChunk);
    test::compareRows(cpuLogits, gpuSeq.prefillAll(gpu, ids, kChunk), vocab, a);
    TokenId next = test::argmax({cpuLogits.data() + cpuLogits.size() - vocab, vocab});
    ForwardOutput cpuOut, gpuOut;
    for (int i = 0; i < kDecodeSteps; ++i) {
      cpuSeq.step(cpu, next, cpuOut);
      gpuSeq.step(gpu, next, gpuOut);
      test::compareRows(cpuOut.logits, gpuOut.logits, vocab, a);
      next = test::argmax(cpuOut.logits);
    }
    qInfo("%s: %s; %lld positions, top-1 %.4f, KL mean %.2e max %.2e", qPrintable(architecture),
          config.describe().c_str(), qlonglong(a.positions), a.top1Rate(), a.klMean(), a.klMax);
    QVERIFY2(a.top1Rate() >= kMinTop1, qPrintable(QString("top-1 %1").arg(a.top1Rate())));
    QVERIFY2(a.klMean() < kMaxMeanKl, qPrintable(QString("mean KL %1").arg(a.klMean())));
  }

};

QTEST_GUILESS_MAIN(TestCudaTinyArchitectures)
#include "test_cuda_tiny_architectures.moc"
