// Progress events on the real default model (SmolLM2-135M-Instruct Q4_1): while a prompt is read
// the engine reports, per prompt chunk, how many of its tokens are in the cache; a request queued
// behind a full engine says it waits for a slot. References: the chunking arithmetic written out
// by hand (a step computes at most stepTokenBudget tokens, so a P-token prompt with K reused is
// read in ceil((P - K) / budget) chunks, each `budget` long but the last), and the engine's own
// RequestStats for the same request (promptTokens, cachedPromptTokens), which other tests check
// against llama.cpp's tokenizer.
#include <QtTest>

#include "common/test_paths.h"
#include "ember/engine.h"

using namespace ember;

namespace {

const char* kModel = "SmolLM2-135M-Instruct.Q4_1.gguf";

struct Recorded {
  std::vector<RequestEvent> progress;  // Kind::Progress, in order
  int textBeforeLastProgress = 0;      // text pieces seen before the prompt was fully read
  int texts = 0;
  RequestStats stats;
  bool finished = false;
};

EventSink recorder(Recorded& r) {
  return [&r](const RequestEvent& e) {
    if (e.kind == RequestEvent::Kind::Progress) {
      r.progress.push_back(e);
      if (r.texts > 0) ++r.textBeforeLastProgress;
    } else if (e.kind == RequestEvent::Kind::Text) {
      ++r.texts;
    } else {
      r.stats = *e.stats;
      r.finished = true;
    }
  };
}

GenerationRequest longChat(const std::string& topic) {
  GenerationRequest r;
  std::string text = "Summarise these notes about " + topic + " in one sentence.\n";
  for (int i = 1; i <= 16; ++i)
    text += "Note " + std::to_string(i) + ": the " + topic + " was checked again and found fine.\n";
  r.messages = nlohmann::ordered_json::array({{{"role", "user"}, {"content", text}}});
  r.sampling.temperature = 0;
  r.sampling.maxTokens = 4;
  return r;
}

// The events of one prompt read (no waiting ones): the first says where reading starts (the
// reused prefix), then one per chunk, each `budget` further but the last, which ends at M.
void checkReading(const std::vector<RequestEvent>& events, const RequestStats& stats,
                  int32_t budget) {
  QVERIFY(!events.empty());
  const int32_t prompt = stats.promptTokens;
  const int32_t reused = stats.cachedPromptTokens;
  QCOMPARE(events.front().promptDone, reused);
  const auto chunks = static_cast<size_t>((prompt - reused + budget - 1) / budget);
  QCOMPARE(events.size(), chunks + 1);
  for (size_t i = 0; i < events.size(); ++i) {
    QCOMPARE(events[i].promptTokens, prompt);
    QCOMPARE(events[i].cachedPromptTokens, reused);
    QVERIFY(!events[i].waiting);
    if (i == 0) continue;
    const int32_t expected = std::min(prompt, reused + static_cast<int32_t>(i) * budget);
    QCOMPARE(events[i].promptDone, expected);
  }
  QCOMPARE(events.back().promptDone, prompt);
}

}  // namespace

class EngineProgress : public QObject {
  Q_OBJECT
  std::string path_;

  std::unique_ptr<Engine> load(int32_t maxSequences, int32_t budget) {
    EngineOptions o;
    o.modelPath = path_;
    o.threads = 2;
    o.contextLength = 1024;
    o.maxSequences = maxSequences;
    o.stepTokenBudget = budget;
    return Engine::load(o);
  }

 private slots:
  void initTestCase() {
    EMBER_REQUIRE_MODEL(path, kModel);
    path_ = path.toStdString();
  }

  void promptIsReadInReportedChunks() {
    auto engine = load(2, 64);
    Recorded cold;
    engine->addRequest(longChat("boiler"), recorder(cold));
    while (engine->hasWork()) engine->step();
    QVERIFY(cold.finished);
    QVERIFY2(cold.stats.promptTokens > 3 * 64, "the prompt should take several chunks");
    QCOMPARE(cold.stats.cachedPromptTokens, 0);
    checkReading(cold.progress, cold.stats, 64);
    QCOMPARE(cold.textBeforeLastProgress, 0);  // all progress comes before the answer

    // The same prompt again: the prefix cache holds its full blocks, so reading starts there.
    Recorded warm;
    engine->addRequest(longChat("boiler"), recorder(warm));
    while (engine->hasWork()) engine->step();
    QVERIFY(warm.stats.cachedPromptTokens > 0);
    checkReading(warm.progress, warm.stats, 64);
  }

  void queuedRequestSaysItWaits() {
    auto engine = load(1, 512);  // one slot: the second request queues behind the first
    Recorded first, second;
    engine->addRequest(longChat("lift"), recorder(first));
    engine->addRequest(longChat("gate"), recorder(second));
    while (engine->hasWork()) engine->step();
    QVERIFY(first.finished && second.finished);
    for (const RequestEvent& e : first.progress) QVERIFY(!e.waiting);
    QVERIFY(!second.progress.empty());
    QVERIFY(second.progress.front().waiting);
    QCOMPARE(second.progress.front().promptTokens, second.stats.promptTokens);
    // Exactly one waiting event (it is reported once), then a normal read.
    const std::vector<RequestEvent> reading(second.progress.begin() + 1, second.progress.end());
    for (const RequestEvent& e : reading) QVERIFY(!e.waiting);
    checkReading(reading, second.stats, 512);
  }
};

QTEST_GUILESS_MAIN(EngineProgress)
#include "test_engine_progress.moc"
