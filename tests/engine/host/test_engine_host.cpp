// EngineHost on the real default model (SmolLM2-135M-Instruct Q4_1): the engine on its own
// thread, driven from several caller threads.
// Reference: the same greedy request run alone on an Engine stepped by hand on this thread
// (the CPU kernels give bit-identical results whatever the batch, see test_engine_batching), so
// every answer through the host must equal it exactly; KV blocks are compared with the engine's
// own idle count read before any request ran.
#include <QtTest>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "common/test_paths.h"
#include "ember/engine_host.h"
#include "ember/error.h"

using namespace ember;

namespace {

const char* kModel = "SmolLM2-135M-Instruct.Q4_1.gguf";
const char* kQuestions[] = {"Name three colors.", "What is the capital of France?",
                            "Count from one to five.", "Say hello in Spanish."};

EngineOptions optionsFor(const QString& path) {
  EngineOptions o;
  o.modelPath = path.toStdString();
  o.threads = 2;
  o.contextLength = 512;
  o.maxSequences = 4;
  return o;
}

GenerationRequest greedy(const std::string& question, int64_t maxTokens) {
  GenerationRequest r;
  r.messages = nlohmann::ordered_json::array({{{"role", "user"}, {"content", question}}});
  r.sampling.temperature = 0;
  r.sampling.maxTokens = maxTokens;
  return r;
}

// Collects one request's events, from the host's thread, for a waiting test thread.
struct Collector {
  std::mutex mutex;
  std::condition_variable changed;
  std::string text;
  int pieces = 0;
  int finishedCount = 0;
  bool eventsOnCallerThread = false;
  std::thread::id callerThread = std::this_thread::get_id();
  RequestStats stats;

  EventSink sink() {
    return [this](const RequestEvent& e) {
      std::lock_guard lock(mutex);
      if (std::this_thread::get_id() == callerThread) eventsOnCallerThread = true;
      if (e.kind == RequestEvent::Kind::Text) {
        text += e.text;
        ++pieces;
      } else if (e.kind == RequestEvent::Kind::Finished) {
        ++finishedCount;
        stats = *e.stats;
      }
      changed.notify_all();
    };
  }
  bool waitFor(const std::function<bool()>& done, int ms = 120000) {
    std::unique_lock lock(mutex);
    return changed.wait_for(lock, std::chrono::milliseconds(ms), done);
  }
  bool waitFinished() {
    return waitFor([&] { return finishedCount > 0; });
  }
};

std::string aloneOnEngine(const QString& path, const std::string& question, int64_t maxTokens) {
  EngineOptions o = optionsFor(path);
  o.prefixCaching = false;
  auto engine = Engine::load(o);
  std::string text;
  engine->addRequest(greedy(question, maxTokens), [&](const RequestEvent& e) {
    if (e.kind == RequestEvent::Kind::Text) text += e.text;
  });
  while (engine->hasWork()) engine->step();
  return text;
}

int32_t freeBlocks(EngineHost& host) {
  int32_t free = -1;
  host.withEngine([&](Engine* e) { free = e ? e->freeKvBlocks() : -1; });
  return free;
}

}  // namespace

class EngineHostTest : public QObject {
  Q_OBJECT
 private slots:
  void submitFromSeveralThreadsMatchesAloneRuns() {
    EMBER_REQUIRE_MODEL(path, kModel);
    std::vector<std::string> reference;
    for (const char* q : kQuestions) reference.push_back(aloneOnEngine(path, q, 24));

    constexpr int kThreads = 4, kPerThread = 2;
    std::vector<std::unique_ptr<Collector>> collectors(kThreads * kPerThread);  // outlive host
    EngineHost host;
    host.load(optionsFor(path));
    const int32_t idleFree = freeBlocks(host);
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t)
      threads.emplace_back([&, t] {
        for (int k = 0; k < kPerThread; ++k) {
          auto& c = collectors[t * kPerThread + k];
          c = std::make_unique<Collector>();
          host.submit(greedy(kQuestions[(t + k) % 4], 24), c->sink());
        }
      });
    for (auto& t : threads) t.join();
    for (int i = 0; i < kThreads * kPerThread; ++i) {
      Collector& c = *collectors[i];
      QVERIFY(c.waitFinished());
      const int t = i / kPerThread, k = i % kPerThread;
      QCOMPARE(c.text, reference[(t + k) % 4]);
      QCOMPARE(c.finishedCount, 1);
      QVERIFY(!c.eventsOnCallerThread);
      QVERIFY(c.stats.finishReason == FinishReason::Length ||
              c.stats.finishReason == FinishReason::Eos);
    }
    const GeneratorStatus s = host.status();
    QCOMPARE(s.state, GeneratorStatus::State::Ready);
    QCOMPARE(s.running, 0);
    QCOMPARE(s.waiting, 0);
    QCOMPARE(freeBlocks(host), idleFree);
  }

  void abortWithinOneStepFreesKvBlocks() {
    EMBER_REQUIRE_MODEL(path, kModel);
    Collector c;  // outlives the host, whose thread calls into it
    EngineHost host;
    host.load(optionsFor(path));
    const int32_t idleFree = freeBlocks(host);
    GenerationRequest r = greedy(kQuestions[2], 400);
    r.ignoreEndOfGeneration = true;
    const RequestId id = host.submit(std::move(r), c.sink());
    QVERIFY(c.waitFor([&] { return c.pieces >= 3; }));
    int piecesAtAbort = 0;
    {
      std::lock_guard lock(c.mutex);
      piecesAtAbort = c.pieces;
    }
    host.abort(id);
    QVERIFY(c.waitFinished());
    QCOMPARE(c.stats.finishReason, FinishReason::Cancelled);
    // The step running when abort() was called may still add its piece; the next one ends it.
    QVERIFY2(c.pieces - piecesAtAbort <= 1, qPrintable(QString::number(c.pieces - piecesAtAbort)));
    QCOMPARE(freeBlocks(host), idleFree);
    QCOMPARE(host.status().running, 0);
    host.abort(id);  // finished ids are ignored
    host.abort(987654);
  }

  void loadWhileRunningFailsTheRunningRequests() {
    EMBER_REQUIRE_MODEL(path, kModel);
    Collector running, next;
    EngineHost host;
    host.load(optionsFor(path));
    GenerationRequest r = greedy(kQuestions[0], 400);
    r.ignoreEndOfGeneration = true;
    host.submit(std::move(r), running.sink());
    QVERIFY(running.waitFor([&] { return running.pieces >= 1; }));
    host.load(optionsFor(path));
    QVERIFY(running.waitFinished());
    QCOMPARE(running.finishedCount, 1);
    QCOMPARE(running.stats.finishReason, FinishReason::Error);
    QVERIFY(running.stats.error.find("model was changed") != std::string::npos);
    // The new model answers as the old one did alone.
    host.submit(greedy(kQuestions[1], 16), next.sink());
    QVERIFY(next.waitFinished());
    QCOMPARE(next.text, aloneOnEngine(path, kQuestions[1], 16));
  }

  void shutdownWithRequestsInFlightFinishesEachOnce() {
    EMBER_REQUIRE_MODEL(path, kModel);
    std::vector<std::unique_ptr<Collector>> collectors;
    {
      EngineHost host;
      host.load(optionsFor(path));
      for (int i = 0; i < 6; ++i) {  // 4 run, 2 wait for a slot
        collectors.push_back(std::make_unique<Collector>());
        GenerationRequest r = greedy(kQuestions[i % 4], 400);
        r.ignoreEndOfGeneration = true;
        host.submit(std::move(r), collectors.back()->sink());
      }
      QVERIFY(collectors[0]->waitFor([&] { return collectors[0]->pieces >= 1; }));
    }  // ~EngineHost
    for (auto& c : collectors) {
      QCOMPARE(c->finishedCount, 1);
      QCOMPARE(c->stats.finishReason, FinishReason::Error);
      QCOMPARE(c->stats.error, std::string("shutting down"));
    }
  }

  // submitAll hands the requests over together: each one's "reading begins" Progress event (sent
  // when a step first schedules it) comes before any answer's first text, which it would not if
  // the first request had a step to itself. Reference: the same requests run alone on an Engine.
  void submitAllEntersTheSameStep() {
    EMBER_REQUIRE_MODEL(path, kModel);
    std::vector<std::string> reference;
    for (const char* q : kQuestions) reference.push_back(aloneOnEngine(path, q, 12));
    std::mutex logMutex;
    std::vector<std::pair<size_t, const char*>> log;  // request index, "read" or "text"
    std::vector<std::unique_ptr<Collector>> collectors;
    {
      EngineHost host;
      host.load(optionsFor(path));
      // Three rounds (the later ones on cached prefixes): a loop of submit() calls leaves the
      // host's thread free to take the first request alone in any of them.
      for (int round = 0; round < 3; ++round) {
        log.clear();
        collectors.clear();
        std::vector<GenerationRequest> requests;
        std::vector<EventSink> sinks;
        for (size_t i = 0; i < 4; ++i) {
          collectors.push_back(std::make_unique<Collector>());
          requests.push_back(greedy(kQuestions[i], 12));
          sinks.push_back([&, i, inner = collectors.back()->sink()](const RequestEvent& e) {
            {
              std::lock_guard lock(logMutex);
              if (e.kind == RequestEvent::Kind::Progress && !e.waiting) log.emplace_back(i, "read");
              if (e.kind == RequestEvent::Kind::Text) log.emplace_back(i, "text");
            }
            inner(e);
          });
        }
        const std::vector<RequestId> ids = host.submitAll(std::move(requests), std::move(sinks));
        QCOMPARE(ids.size(), size_t(4));
        for (size_t i = 0; i < 4; ++i) {
          Collector& c = *collectors[i];
          QVERIFY(c.waitFinished());
          QCOMPARE(c.text, reference[i]);
          QVERIFY(c.stats.hostDelayMs >= 0);
          QVERIFY(c.stats.queueWaitMs >= c.stats.hostDelayMs);
          QVERIFY(c.stats.ttftMs >= c.stats.hostDelayMs);
        }
        std::lock_guard lock(logMutex);
        const auto firstText = std::find_if(log.begin(), log.end(), [](const auto& entry) {
          return std::string(entry.second) == "text";
        });
        std::vector<bool> readBeforeText(4, false);
        for (auto it = log.begin(); it != firstText; ++it) readBeforeText[it->first] = true;
        for (size_t i = 0; i < 4; ++i)
          QVERIFY2(readBeforeText[i], qPrintable(QString("round %1: request %2 began reading "
                                                         "after the first answer's text")
                                                     .arg(round)
                                                     .arg(i)));
      }

      // One bad request refuses the whole call: nothing is queued.
      Collector good, bad;
      std::vector<GenerationRequest> requests;
      requests.push_back(greedy(kQuestions[0], 4));
      requests.push_back(greedy(kQuestions[1], 4));
      requests.back().sampling.temperature = -1;
      std::vector<EventSink> sinks{good.sink(), bad.sink()};
      QVERIFY_THROWS_EXCEPTION(Error, host.submitAll(std::move(requests), std::move(sinks)));
      QCOMPARE(host.status().waiting, 0);
      QCOMPARE(good.finishedCount, 0);
      QVERIFY(host.submitAll({}, {}).empty());
    }
  }

  void refusesWhatCannotBeQueued() {
    EMBER_REQUIRE_MODEL(path, kModel);
    Collector c;
    EngineHost host;
    QCOMPARE(host.status().state, GeneratorStatus::State::Empty);
    QVERIFY(host.models().empty());
    QVERIFY_THROWS_EXCEPTION(Error, host.submit(greedy("hi", 4), c.sink()));

    // A bad file: the host reports Failed with the loader's message and stays usable.
    EngineOptions bad = optionsFor(path);
    bad.modelPath = "/nonexistent/model.gguf";
    QVERIFY_THROWS_EXCEPTION(Error, host.load(bad));
    QCOMPARE(host.status().state, GeneratorStatus::State::Failed);
    QVERIFY(!host.status().message.empty());

    host.load(optionsFor(path));
    const std::vector<GeneratorModel> models = host.models();
    QCOMPARE(models.size(), size_t(1));
    QCOMPARE(models[0].id, std::string("SmolLM2-135M-Instruct.Q4_1"));
    QCOMPARE(models[0].contextLength, 512);
    GenerationRequest hot = greedy("hi", 4);
    hot.sampling.temperature = -1;
    QVERIFY_THROWS_EXCEPTION(Error, host.submit(std::move(hot), c.sink()));
    GenerationRequest other = greedy("hi", 4);
    other.model = "../../etc/passwd";
    QVERIFY_THROWS_EXCEPTION(Error, host.submit(std::move(other), c.sink()));
    GenerationRequest empty;
    QVERIFY_THROWS_EXCEPTION(Error, host.submit(std::move(empty), c.sink()));
    QCOMPARE(c.finishedCount, 0);  // nothing was queued

    host.unload();
    QCOMPARE(host.status().state, GeneratorStatus::State::Empty);
    QVERIFY_THROWS_EXCEPTION(Error, host.submit(greedy("hi", 4), c.sink()));
  }
};

QTEST_GUILESS_MAIN(EngineHostTest)
#include "test_engine_host.moc"
