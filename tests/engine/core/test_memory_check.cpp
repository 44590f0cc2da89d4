// The load-time "will it fit" check of the KV pool (runtime/engine/memory_check.h). References:
// hand-computed bytes for SmolLM2-135M's shapes (config.json on Hugging Face: 30 layers, 576
// wide, FFN 1536, 9 heads, 3 KV heads of 64, vocabulary 49152), worked out in the comments
// below, and model::planMemory's own message for the same inputs (its arithmetic is tested in
// tests/engine/model/test_memory_plan.cpp). The CPU backend reports no free memory, so a CPU
// load is never refused by this check.
#include <QtTest>

#include <fstream>
#include <sstream>

#include "backend/backend_factory.h"
#include "ember/error.h"
#include "common/test_paths.h"
#include "gguf/gguf_file.h"
#include "model/model_config.h"
#include "runtime/engine/memory_check.h"

using namespace ember;

namespace {

model::ModelConfig smolLm2Shapes() {
  model::ModelConfig c;
  c.architectureName = "llama";
  c.layerCount = 30;
  c.embeddingDim = 576;
  c.ffnDim = 1536;
  c.headCount = 9;
  c.kvHeadCount = 3;
  c.headDim = 64;
  c.valueDim = 64;
  c.contextLength = 8192;
  c.vocabSize = 49152;
  return c;
}

// Per token: 2 bytes x 30 layers x 3 KV heads x (64 + 64) = 23040; a block of 16: 368640.
constexpr uint64_t kKvPerToken = 23040;
constexpr uint64_t kKvPerBlock = 16 * kKvPerToken;
// estimateWorkspaceBytes(step 512, 4 sequences): activations 4 x (3x576 + 576 + 192 + 192 +
// 2x1536) = 23040 bytes per token x 512 = 11796480; logits 4 x 49152 x 4 = 786432; one FFN
// matrix in 16 bits 2 x 576 x 1536 = 1769472; library workspace 64 MiB = 67108864. Sum:
constexpr uint64_t kWorkspace = 81461248;
constexpr uint64_t kWeights = 100000000;  // a round figure the backend "holds"

KvPoolRequest request(int32_t blockCount, int32_t context = 4096, int32_t sequences = 4) {
  return {{16, blockCount}, kKvPerBlock, context, sequences, 512};
}

// A backend that only answers the memory questions.
class MemoryOnlyBackend final : public Backend {
 public:
  MemoryOnlyBackend(BackendMemoryInfo held, std::optional<uint64_t> freeBytes)
      : held_(held), free_(freeBytes) {}
  std::string name() const override { return "test device"; }
  BackendMemoryInfo memoryInfo() const override { return held_; }
  size_t kvBytesPerBlock(int32_t blockSize) const override { return kKvPerToken * blockSize; }
  void allocateKvCache(const KvCacheShape& shape) override { shape_ = shape; }
  const KvCacheShape& kvCacheShape() const override { return shape_; }
  void forward(const ForwardBatch&, ForwardOutput&) override { throw Error("not a model"); }
  size_t vocabSize() const override { return 49152; }
  std::optional<uint64_t> freeMemoryBytes() const override { return free_; }

 private:
  BackendMemoryInfo held_;
  std::optional<uint64_t> free_;
  KvCacheShape shape_;
};

uint64_t memInfoField(const std::string& name) {
  std::ifstream meminfo("/proc/meminfo");
  std::string line;
  while (std::getline(meminfo, line)) {
    std::istringstream fields(line);
    std::string key;
    uint64_t kib = 0;
    if (fields >> key >> kib && key == name + ":") return kib * 1024;
  }
  return 0;
}

}  // namespace

class MemoryCheckTest : public QObject {
  Q_OBJECT
 private slots:
  void plannedBytes_data() {
    QTest::addColumn<int32_t>("blockCount");
    QTest::addColumn<int32_t>("context");
    QTest::addColumn<quint64>("heldWorkspace");
    QTest::addColumn<int32_t>("plannedSequences");
    QTest::addColumn<quint64>("kvBytes");
    QTest::addColumn<quint64>("workspace");
    // 4 sequences x 4096 tokens = 1024 blocks x 368640 = 377487360.
    QTest::newRow("4 x 4096") << 1024 << 4096 << quint64(0) << 4 << quint64(377487360)
                              << quint64(kWorkspace);
    // 1000 tokens take 63 blocks (1008 tokens) per sequence: 252 blocks x 368640 = 92897280.
    QTest::newRow("context 1000 in whole blocks")
        << 252 << 1000 << quint64(0) << 4 << quint64(92897280) << quint64(kWorkspace);
    // A pool from a byte budget (300 blocks, not 4 x 256): one stretch of 4800 tokens,
    // 4800 x 23040 = 110592000.
    QTest::newRow("byte budget") << 300 << 4096 << quint64(0) << 1 << quint64(110592000)
                                 << quint64(kWorkspace);
    // The backend already holds 100 MiB of workspace, more than the estimate: that counts.
    QTest::newRow("held workspace") << 1024 << 4096 << quint64(104857600) << 4
                                    << quint64(377487360) << quint64(104857600);
  }
  void plannedBytes() {
    QFETCH(int32_t, blockCount);
    QFETCH(int32_t, context);
    QFETCH(quint64, heldWorkspace);
    QFETCH(int32_t, plannedSequences);
    QFETCH(quint64, kvBytes);
    QFETCH(quint64, workspace);
    BackendMemoryInfo held;
    held.weightBytes = kWeights;
    held.workspaceBytes = heldWorkspace;
    const uint64_t freeBytes = 1000000000;
    const model::MemoryPlan plan =
        planKvPool(smolLm2Shapes(), held, request(blockCount, context), freeBytes);
    QCOMPARE(plan.weightBytes, kWeights);
    QCOMPARE(quint64(plan.kvCacheBytes), kvBytes);
    QCOMPARE(quint64(plan.workspaceBytes), workspace);
    QCOMPARE(quint64(plan.neededBytes), kWeights + kvBytes + workspace);
    // What the backend holds is available again (it is counted in the need).
    QCOMPARE(quint64(plan.availableBytes), freeBytes + kWeights + heldWorkspace);
    QVERIFY(plan.fits);
    QVERIFY(plan.message.find(" for " + std::to_string(plannedSequences) + " x ") !=
            std::string::npos);
  }

  void tooBigMessage() {
    // 400 MB free besides the 100 MB of weights held: available 500000000. Needed: 100000000 +
    // 377487360 + 81461248 = 558948608. KV budget 500000000 - 181461248 = 318538752, which
    // holds 318538752 / (4 x 23040) = 3456 tokens per sequence, 3328 in steps of 256, or
    // 318538752 / (4096 x 23040) = 3 sequences of 4096.
    BackendMemoryInfo held;
    held.weightBytes = kWeights;
    const model::MemoryPlan plan = planKvPool(smolLm2Shapes(), held, request(1024), 400000000);
    QVERIFY(!plan.fits);
    QCOMPARE(plan.neededBytes, uint64_t(558948608));
    QCOMPARE(plan.largestContext, 3328);
    QCOMPARE(plan.sequencesAtContext, 3);
    QCOMPARE(QString::fromStdString(kvPoolErrorMessage(plan, "cuda:0 (test)")),
             QStringLiteral("the model does not fit in the memory of cuda:0 (test): needs "
                            "533.1 MiB (weights 95.4 MiB + KV cache 360.0 MiB for 4 x 4096 "
                            "tokens + workspace 77.7 MiB) but 476.8 MiB is free; the largest "
                            "context that fits is 3328 tokens (or 3 sequences of 4096 tokens)"));
  }

  void backendThatCannotHoldItThrows() {
    BackendMemoryInfo held;
    held.weightBytes = kWeights;
    const MemoryOnlyBackend backend(held, uint64_t(400000000));
    const model::MemoryPlan plan = planKvPool(smolLm2Shapes(), held, request(1024), 400000000);
    try {
      requireKvPoolFits(backend, smolLm2Shapes(), request(1024));
      QFAIL("a pool that does not fit was accepted");
    } catch (const Error& e) {
      QCOMPARE(std::string(e.what()), kvPoolErrorMessage(plan, "test device"));
    }
    // 3328 tokens per sequence (208 blocks each) fit: no error.
    requireKvPoolFits(backend, smolLm2Shapes(), request(4 * 208, 3328));
    // Weights alone beyond the free memory: the message says so.
    const MemoryOnlyBackend tiny(held, uint64_t(1000));
    try {
      requireKvPoolFits(tiny, smolLm2Shapes(), request(1024));
      QFAIL("accepted with 1000 bytes free");
    } catch (const Error& e) {
      QVERIFY2(std::string(e.what()).find("the weights and workspace alone need") !=
                   std::string::npos,
               e.what());
    }
    // A backend that cannot say is not checked.
    const MemoryOnlyBackend unknown(held, std::nullopt);
    requireKvPoolFits(unknown, smolLm2Shapes(), request(INT32_MAX / 2));
  }

  void badPoolIsAnError() {
    QVERIFY_THROWS_EXCEPTION(Error, planKvPool(smolLm2Shapes(), {}, request(0), 1000));
  }

  void cpuLoadIsNotChecked() {
    // The CPU backend reports no free memory, so even a pool no machine holds passes the check
    // (the allocation itself is the CPU's limit): a CPU load is never refused by it.
    EMBER_REQUIRE_MODEL(path, "SmolLM2-135M-Instruct.Q4_1.gguf");
    const auto file = gguf::GgufFile::open(path.toStdString());
    const auto backend = makeBackend(*file, "cpu", 1);
    QVERIFY(!backend->freeMemoryBytes().has_value());
    const model::ModelConfig config = model::readModelConfig(*file);
    requireKvPoolFits(*backend, config,
                      {{16, INT32_MAX / 2}, backend->kvBytesPerBlock(16), 4096, 4, 512});
  }

  void systemMemoryForCpu() {
    // With "cpu" the free memory is /proc/meminfo's MemAvailable: positive, at most MemTotal.
    const std::optional<FreeMemory> free = deviceFreeMemory("cpu");
    QVERIFY(free.has_value());
    QCOMPARE(QString::fromStdString(free->where), QStringLiteral("system RAM"));
    QVERIFY(free->bytes > 0);
    QVERIFY(free->bytes <= memInfoField("MemTotal"));
  }
};

QTEST_APPLESS_MAIN(MemoryCheckTest)
#include "test_memory_check.moc"
