// A model load's progress and cancel on the real default model (SmolLM2-135M-Instruct Q4_1, CPU,
// fast kernels): the file's tensor data is read in chunks, then the matrices are repacked one by
// one, the fraction only grows and is 1 exactly once, at the end; a cancel in either stage throws
// LoadCancelled and the next load works. References: the file's tensor-data size and its matrix
// bytes as llama.cpp's gguf-py reader (GGUFReader.data_offset, ReaderTensor.n_bytes) gives them
// for this file: 98,362,432 bytes on disk, data from byte 1,785,664 (96,576,768 bytes); the 30
// layers' q/k/v/output/gate/up/down matrices plus the tied token embedding: 96,436,224 bytes.
#include <QtTest>
#include <filesystem>

#include "common/test_paths.h"
#include "ember/engine.h"
#include "ember/engine_host.h"

using namespace ember;

namespace {

const char* kModel = "SmolLM2-135M-Instruct.Q4_1.gguf";
constexpr uint64_t kFileBytes = 98362432;
constexpr uint64_t kTensorDataBytes = 96576768;
constexpr uint64_t kMatrixBytes = 96436224;

EngineOptions options(const QString& path) {
  EngineOptions o;
  o.modelPath = path.toStdString();
  o.backend = "cpu";
  o.kernels = "fast";
  o.threads = 2;
  o.contextLength = 512;
  o.maxSequences = 1;
  return o;
}

}  // namespace

class EngineLoadProgressTest : public QObject {
  Q_OBJECT
  QString model_;

 private slots:
  void initTestCase() {
    EMBER_REQUIRE_MODEL(model, kModel);
    model_ = model;
    QCOMPARE(uint64_t(std::filesystem::file_size(model_.toStdString())), kFileBytes);
  }

  void progressGrowsThroughBothStagesToOne() {
    std::vector<LoadProgress> events;
    LoadControl control;
    control.onProgress = [&](const LoadProgress& p) { events.push_back(p); };
    const auto engine = Engine::load(options(model_), &control);
    QVERIFY(engine);
    QVERIFY(events.size() > 10);
    uint64_t lastRead = 0, lastPrepared = 0;
    int reading = 0, preparing = 0;
    for (size_t i = 0; i < events.size(); ++i) {
      const LoadProgress& p = events[i];
      if (i > 0) QVERIFY2(p.fraction >= events[i - 1].fraction, qPrintable(QString::number(i)));
      QVERIFY(p.fraction >= 0 && p.fraction <= 1);
      if (p.stage == LoadProgress::Stage::Reading) {
        QCOMPARE(preparing, 0);  // reading comes first
        QCOMPARE(p.totalBytes, kTensorDataBytes);
        QVERIFY(p.doneBytes >= lastRead);
        lastRead = p.doneBytes;
        QVERIFY(p.fraction <= 0.5);
        ++reading;
      } else if (p.stage == LoadProgress::Stage::Preparing) {
        QCOMPARE(p.totalBytes, kMatrixBytes);
        QVERIFY(p.doneBytes > lastPrepared);
        lastPrepared = p.doneBytes;
        QVERIFY(p.fraction >= 0.5 && p.fraction < 1);
        ++preparing;
      } else {
        QCOMPARE(i, events.size() - 1);  // Done is the last event, the only one at 1
      }
      if (p.fraction == 1.0) QCOMPARE(p.stage, LoadProgress::Stage::Done);
    }
    QCOMPARE(lastRead, kTensorDataBytes);
    QCOMPARE(lastPrepared, kMatrixBytes);
    // 8 MiB chunks: ceil(96,576,768 / 8,388,608) = 12 reads, after the opening 0.
    QCOMPARE(reading, 13);
    QCOMPARE(preparing, 30 * 7 + 1);  // every layer matrix, then the (tied) output
    QCOMPARE(events.back().fraction, 1.0);
    QVERIFY(engine->vocabSize() > 0);
  }

  void cancelWhileReading() {
    int preparing = 0;
    LoadControl control;
    control.onProgress = [&](const LoadProgress& p) {
      if (p.stage == LoadProgress::Stage::Preparing) ++preparing;
      if (p.stage == LoadProgress::Stage::Reading && p.doneBytes > 0) control.cancel();
    };
    QVERIFY_THROWS_EXCEPTION(LoadCancelled, Engine::load(options(model_), &control));
    QCOMPARE(preparing, 0);
  }

  void cancelWhilePreparingThenLoadAgain() {
    uint64_t preparedWhenCancelled = 0;
    LoadControl control;
    control.onProgress = [&](const LoadProgress& p) {
      if (p.stage == LoadProgress::Stage::Preparing && !preparedWhenCancelled) {
        preparedWhenCancelled = p.doneBytes;
        control.cancel();
      }
      QVERIFY(p.stage != LoadProgress::Stage::Done);
    };
    QVERIFY_THROWS_EXCEPTION(LoadCancelled, Engine::load(options(model_), &control));
    QVERIFY(preparedWhenCancelled > 0 && preparedWhenCancelled < kMatrixBytes);
    // The engine left nothing behind that stops the next load; without a LoadControl it reads
    // nothing ahead.
    QVERIFY(Engine::load(options(model_)));
  }

  // Through the host (the app's path): cancelled from another thread, the host is Empty and
  // says why; a request then is refused as with no model, and a new load works.
  void hostCancelLeavesItEmptyAndUsable() {
    EngineHost host;
    LoadControl control;
    control.onProgress = [&](const LoadProgress& p) {
      if (p.fraction > 0.2) control.cancel();
    };
    QVERIFY_THROWS_EXCEPTION(LoadCancelled, host.load(options(model_), &control));
    const GeneratorStatus status = host.status();
    QCOMPARE(status.state, GeneratorStatus::State::Empty);
    QVERIFY(QString::fromStdString(status.message).contains("cancelled"));
    GenerationRequest r;
    r.messages = nlohmann::ordered_json::array({{{"role", "user"}, {"content", "Hi"}}});
    QVERIFY_THROWS_EXCEPTION(Error, host.submit(r, [](const RequestEvent&) {}));
    const ModelInfo info = host.load(options(model_));
    QCOMPARE(info.contextLength, 512);
    QCOMPARE(host.status().state, GeneratorStatus::State::Ready);
  }
};

QTEST_GUILESS_MAIN(EngineLoadProgressTest)
#include "test_engine_load_progress.moc"
