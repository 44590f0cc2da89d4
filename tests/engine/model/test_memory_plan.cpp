// Memory planning ("will it fit"): planMemory's sums, fit decision, largest fitting context and
// message, against numbers computed by hand in the comments; kvBytesPerToken and weightBytes
// against the models' own shapes (SmolLM2-135M: 30 layers x 3 kv heads x (64 + 64) x 2 bytes =
// 23040 bytes per token; Llama-3-8B: 32 x 8 x (128 + 128) x 2 = 131072).
#include <QtTest>
#include <limits>

#include "ember/error.h"
#include "common/test_paths.h"
#include "gguf/gguf_file.h"
#include "model/memory_plan.h"
#include "model/model_config.h"
#include "tiny_model_builder.h"

using namespace ember;
using namespace ember::model;

namespace {

constexpr uint64_t GiB = uint64_t(1) << 30;

MemoryPlanInput inputOf(uint64_t weights, uint64_t kvPerToken, int32_t context, int32_t sequences,
                        uint64_t workspace, uint64_t available) {
  MemoryPlanInput in;
  in.weightBytes = weights;
  in.kvBytesPerToken = kvPerToken;
  in.contextLength = context;
  in.sequences = sequences;
  in.workspaceBytes = workspace;
  in.availableBytes = available;
  return in;
}

}  // namespace

class TestMemoryPlan : public QObject {
  Q_OBJECT

 private slots:
  void plans_data() {
    QTest::addColumn<quint64>("weights");
    QTest::addColumn<quint64>("kvPerToken");
    QTest::addColumn<int>("context");
    QTest::addColumn<int>("sequences");
    QTest::addColumn<quint64>("workspace");
    QTest::addColumn<quint64>("available");
    QTest::addColumn<bool>("fits");
    QTest::addColumn<int>("largestContext");
    QTest::addColumn<int>("sequencesAtContext");
    // 1000 + 10 x 100 x 2 = 3000 bytes needed; 2000 left for KV: 2000 / 20 = 100 tokens,
    // 2000 / 1000 = 2 sequences.
    QTest::newRow("exactly fits") << quint64(1000) << quint64(10) << 100 << 2 << quint64(0)
                                  << quint64(3000) << true << 100 << 2;
    // One byte short: 1999 / 20 = 99 tokens (under the 256 granularity, so not rounded).
    QTest::newRow("one byte short") << quint64(1000) << quint64(10) << 100 << 2 << quint64(0)
                                    << quint64(2999) << false << 99 << 1;
    // 999 tokens fit; rounded down to a multiple of 256: 768.
    QTest::newRow("rounded to 256") << quint64(0) << quint64(1) << 1000 << 1 << quint64(0)
                                    << quint64(999) << false << 768 << 0;
    // Weights + workspace = 3000 of 3000: nothing left for the cache.
    QTest::newRow("weights fill it") << quint64(2500) << quint64(1) << 10 << 1 << quint64(500)
                                     << quint64(3000) << false << 0 << 0;
    QTest::newRow("weights too big") << quint64(5000) << quint64(1) << 10 << 1 << quint64(0)
                                     << quint64(3000) << false << 0 << 0;
    // Llama-3-8B-like: 4 GiB weights, 131072 B/token x 8192 x 8 = 8 GiB KV, 1 GiB workspace =
    // 13 GiB; 10 GiB free leaves 5 GiB for KV: 5 GiB / (8 x 131072) = 5120 tokens, 5 GiB / 1 GiB
    // per 8192-token sequence = 5 sequences.
    QTest::newRow("llama3-8b in 10 GiB") << quint64(4 * GiB) << quint64(131072) << 8192 << 8 << quint64(GiB)
                                         << quint64(10 * GiB) << false << 5120 << 5;
    // With 16 GiB free: 11 GiB / 1 MiB per token = 11264 tokens; 11 sequences of 8192.
    QTest::newRow("llama3-8b in 16 GiB") << quint64(4 * GiB) << quint64(131072) << 8192 << 8 << quint64(GiB)
                                         << quint64(16 * GiB) << true << 11264 << 11;
    // kv x context x sequences overflows 64 bits: the need saturates and nothing fits.
    const quint64 huge = std::numeric_limits<uint64_t>::max() / 2;
    QTest::newRow("overflow") << quint64(0) << huge << 1000 << 1000 << quint64(0)
                              << std::numeric_limits<quint64>::max() << false << 0 << 0;
  }
  void plans() {
    QFETCH(quint64, weights);
    QFETCH(quint64, kvPerToken);
    QFETCH(int, context);
    QFETCH(int, sequences);
    QFETCH(quint64, workspace);
    QFETCH(quint64, available);
    const MemoryPlan plan =
        planMemory(inputOf(weights, kvPerToken, context, sequences, workspace, available));
    QFETCH(bool, fits);
    QFETCH(int, largestContext);
    QFETCH(int, sequencesAtContext);
    QCOMPARE(plan.fits, fits);
    QCOMPARE(plan.largestContext, largestContext);
    QCOMPARE(plan.sequencesAtContext, sequencesAtContext);
    QCOMPARE(plan.weightBytes + plan.workspaceBytes, weights + workspace);
    if (plan.neededBytes != std::numeric_limits<uint64_t>::max())
      QCOMPARE(plan.kvCacheBytes, kvPerToken * uint64_t(context) * uint64_t(sequences));
  }

  // The largest context is a boundary: it fits, and one granule (or one token, below a
  // granule) more does not; where it is 0, one token does not fit.
  void largestContextIsTheBoundary_data() { plans_data(); }
  void largestContextIsTheBoundary() {
    QFETCH(quint64, weights);
    QFETCH(quint64, kvPerToken);
    QFETCH(int, sequences);
    QFETCH(quint64, workspace);
    QFETCH(quint64, available);
    QFETCH(int, largestContext);
    const auto at = [&](int32_t context) {
      return planMemory(inputOf(weights, kvPerToken, context, sequences, workspace, available));
    };
    if (largestContext == 0) {  // not even one token fits
      QVERIFY(!at(1).fits);
      return;
    }
    QVERIFY(at(largestContext).fits);
    QVERIFY(!at(largestContext + (largestContext >= 256 ? 256 : 1)).fits);
  }

  void messages() {
    // The hand-computed Llama-3-8B row above.
    const MemoryPlan tooBig = planMemory(inputOf(4 * GiB, 131072, 8192, 8, GiB, 10 * GiB));
    QCOMPARE(QString::fromStdString(tooBig.message),
             QString("needs 13.0 GiB (weights 4.0 GiB + KV cache 8.0 GiB for 8 x 8192 tokens + "
                     "workspace 1.0 GiB) but 10.0 GiB is free; the largest context that fits is "
                     "5120 tokens (or 5 sequences of 8192 tokens)"));
    const MemoryPlan fits = planMemory(inputOf(4 * GiB, 131072, 8192, 8, GiB, 16 * GiB));
    QCOMPARE(QString::fromStdString(fits.message),
             QString("needs 13.0 GiB (weights 4.0 GiB + KV cache 8.0 GiB for 8 x 8192 tokens + "
                     "workspace 1.0 GiB) and 16.0 GiB is free; up to 11264 tokens per sequence "
                     "would fit"));
    const MemoryPlan weightsTooBig = planMemory(inputOf(6 * GiB, 131072, 8192, 1, GiB, 4 * GiB));
    QVERIFY2(weightsTooBig.message.ends_with("; the weights and workspace alone need 7.0 GiB"),
             weightsTooBig.message.c_str());
    // The sums themselves: 6 GiB + 131072 x 8192 (1 GiB) + 1 GiB.
    QCOMPARE(weightsTooBig.kvCacheBytes, GiB);
    QCOMPARE(weightsTooBig.neededBytes, 8 * GiB);
  }

  void rejectsBadInput() {
    QVERIFY_THROWS_EXCEPTION(Error, planMemory(inputOf(1, 1, 0, 1, 0, 10)));
    QVERIFY_THROWS_EXCEPTION(Error, planMemory(inputOf(1, 1, 10, 0, 0, 10)));
    QVERIFY_THROWS_EXCEPTION(Error, planMemory(inputOf(1, 0, 10, 1, 0, 10)));
  }

  void formatsBytes_data() {
    QTest::addColumn<quint64>("bytes");
    QTest::addColumn<QString>("text");
    QTest::newRow("zero") << quint64(0) << "0 bytes";
    QTest::newRow("1023") << quint64(1023) << "1023 bytes";
    QTest::newRow("1 KiB") << quint64(1024) << "1.0 KiB";
    QTest::newRow("1.5 MiB") << quint64(1572864) << "1.5 MiB";
    QTest::newRow("4.3 GiB") << quint64(4617089843ull) << "4.3 GiB";  // 4.3 x 2^30 = 4617089843.2
  }
  void formatsBytes() {
    QFETCH(quint64, bytes);
    QFETCH(QString, text);
    QCOMPARE(QString::fromStdString(formatBytes(bytes)), text);
  }

  void kvBytesPerTokenOfShapes() {
    ModelConfig llama3;  // Meta-Llama-3-8B: 32 layers, 8 kv heads of 128
    llama3.layerCount = 32;
    llama3.kvHeadCount = 8;
    llama3.headDim = llama3.valueDim = 128;
    QCOMPARE(kvBytesPerToken(llama3), uint64_t(131072));
    // The tiny builder's llama: 2 layers, 1 kv head, head dim 8 / 2 = 4: 2 x 2 x 1 x 8 = 32.
    const auto tiny = test::buildTinyModel({});
    QCOMPARE(kvBytesPerToken(readModelConfig(*tiny)), uint64_t(32));
  }

  void weightBytesOfTinyModel() {
    // F32 tensors of the tiny llama (embd 8, ff 16, heads 2, kv 1, vocab 10, 2 layers):
    // token_embd 80 + output_norm 8 + 2 x (8 + 64 + 32 + 32 + 64 + 8 + 3 x 128) = 1272 floats.
    const auto tiny = test::buildTinyModel({});
    QCOMPARE(weightBytes(*tiny), uint64_t(1272 * 4));
  }

  void realSmolLM2() {
    EMBER_REQUIRE_MODEL(path, "SmolLM2-135M-Instruct.Q4_1.gguf");
    const auto file = gguf::GgufFile::open(path.toStdString());
    QCOMPARE(kvBytesPerToken(readModelConfig(*file)), uint64_t(23040));
    // Every tensor's bytes lie in the data section, each at an aligned offset: the sum is at
    // most the section's size and short of it by less than one alignment per tensor.
    const uint64_t section = file->fileSize() - file->dataOffset();
    const uint64_t sum = weightBytes(*file);
    QVERIFY(sum <= section);
    QVERIFY(section - sum < file->tensors().size() * file->alignment());
  }
};

QTEST_APPLESS_MAIN(TestMemoryPlan)
#include "test_memory_plan.moc"
