// RemoteGenerator against a misbehaving upstream of our own (misbehaving_upstream.py, Python's
// http.server on loopback): the faults a real server will not produce on demand. What each case
// must give is what a user of a remote upstream needs: a clear error, the partial text
// kept, retries only before the first byte of an answer, and the key never in a message.
#include <QtTest>

#include "client/remote_generator.h"
#include "client/remote_http.h"
#include "common/test_paths.h"
#include "ember/error.h"
#include "remote_test_support.h"

using namespace ember;
using namespace ember::openai;
using namespace ember::test;
using std::chrono::milliseconds;

namespace {
constexpr const char* kKey = "sk-test-7f3a9c";

bool contains(const std::string& s, const char* part) { return s.find(part) != std::string::npos; }
}  // namespace

class TestRemoteFaults : public QObject {
  Q_OBJECT
  QProcess upstream_;
  int port_ = 0;

  RemoteServerOptions options(const std::string& key = kKey) const {
    RemoteServerOptions o;
    o.name = "faulty";
    o.baseUrl = "http://127.0.0.1:" + std::to_string(port_) + "/v1";
    o.apiKey = key;
    o.connectTimeout = milliseconds(2000);
    o.readTimeout = milliseconds(3000);
    o.maxRetries = 2;
    o.retryBackoff = milliseconds(50);
    return o;
  }
  nlohmann::json stats() const {
    // /stats is outside the OpenAI routes; read with the client's own one-shot GET.
    const auto r = httpGet("http://127.0.0.1:" + std::to_string(port_) + "/stats", "",
                           milliseconds(2000), milliseconds(5000));
    return nlohmann::json::parse(r.body);
  }

 private slots:
  void initTestCase() {
    upstream_.start(EMBER_PYTHON, {ember::test::sourceDir() +
                                       "/tests/openai/client/misbehaving_upstream.py",
                                   "--api-key", kKey, "--lifetime", "120"});
    QVERIFY2(upstream_.waitForReadyRead(10000), "the misbehaving upstream did not start");
    port_ = upstream_.readLine().trimmed().toInt();
    QVERIFY(port_ > 0);
  }
  void cleanupTestCase() {
    upstream_.closeWriteChannel();  // it exits when its stdin closes
    if (!upstream_.waitForFinished(3000)) upstream_.kill();
  }

  void goodStreamWithStats() {
    RemoteGenerator g(options());
    const Outcome o = runRequest(g, chatRequest("good", "hi"));
    QVERIFY(o.finished);
    QVERIFY2(o.stats.error.empty(), o.stats.error.c_str());
    QCOMPARE(o.text, std::string("Hello there! \u00e9t\u00e9"));  // split into 7-byte frames
    QCOMPARE(o.stats.finishReason, FinishReason::Stop);
    QCOMPARE(o.stats.promptTokens, 11);
    QCOMPARE(o.stats.cachedPromptTokens, 3);
    QCOMPARE(o.stats.generatedTokens, 5);
    QVERIFY(o.stats.ttftMs > 0 && o.stats.ttftMs <= o.stats.totalMs);
    QVERIFY(!o.stats.interTokenMs.empty());
    QCOMPARE(o.finishedEvents, 1);
  }

  void modelsAndHealth() {
    RemoteGenerator g(options());
    const auto models = g.fetchModels();
    QVERIFY(std::any_of(models.begin(), models.end(), [](auto& m) { return m.id == "good"; }));
    QCOMPARE(models.front().ownedBy, std::string("faulty"));
    const HealthCheck h = g.checkHealth();
    QVERIFY2(h.healthy, h.message.c_str());
    QCOMPARE(h.probed, std::string("/health"));
    QCOMPARE(g.status().state, GeneratorStatus::State::Ready);
  }

  void unreachableIsClearAndRetryable() {
    RemoteServerOptions o = options();
    o.baseUrl = "http://127.0.0.1:" + std::to_string(freePort()) + "/v1";
    o.maxRetries = 1;
    RemoteGenerator g(o);
    const Outcome out = runRequest(g, chatRequest("good", "hi"));
    QVERIFY(out.finished);
    QCOMPARE(out.stats.finishReason, FinishReason::Error);
    QVERIFY2(contains(out.stats.error, "cannot reach faulty at http://127.0.0.1:"),
             out.stats.error.c_str());
    QVERIFY(contains(out.stats.error, "after 2 tries"));
    QVERIFY(out.stats.retryable);
    QVERIFY_THROWS_EXCEPTION(Error, g.fetchModels());
    QVERIFY(!g.checkHealth().healthy);
  }

  void wrongKeyIs401AndNeverShown() {
    RemoteGenerator g(options("sk-wrong-SECRET123"));
    const Outcome o = runRequest(g, chatRequest("good", "hi"));
    QVERIFY2(contains(o.stats.error, "faulty refused the API key (HTTP 401: Invalid API key)"),
             o.stats.error.c_str());
    QVERIFY(!contains(o.stats.error, "SECRET123"));
    QVERIFY(!o.stats.retryable);
    try {
      g.fetchModels();
      QFAIL("a wrong key listed models");
    } catch (const Error& e) {
      QVERIFY(contains(e.what(), "HTTP 401") && !contains(e.what(), "SECRET123"));
    }
  }

  void unknownModelIs404() {
    RemoteGenerator g(options());
    const Outcome o = runRequest(g, chatRequest("nope", "hi"));
    QVERIFY2(contains(o.stats.error, "does not know the model 'nope'"), o.stats.error.c_str());
    QVERIFY(contains(o.stats.error, "The model `nope` does not exist."));
  }

  void tooManyRequestsWaitsRetryAfter() {
    RemoteGenerator g(options());
    const auto start = Clock::now();
    const Outcome o = runRequest(g, chatRequest("429-once", "hi"));
    QVERIFY2(o.stats.error.empty(), o.stats.error.c_str());
    QCOMPARE(o.text, std::string("Hello there! \u00e9t\u00e9"));
    QVERIFY(Clock::now() - start >= milliseconds(1000));  // Retry-After: 1
    QCOMPARE(stats()["requests"]["429-once"].get<int>(), 2);
    // A Retry-After longer than maxRetryAfter fails at once and says how long.
    const auto t0 = Clock::now();
    const Outcome busy = runRequest(g, chatRequest("429-long", "hi"));
    QVERIFY2(contains(busy.stats.error, "overloaded") &&
                 contains(busy.stats.error, "retry after 3600 s"),
             busy.stats.error.c_str());
    QVERIFY(Clock::now() - t0 < milliseconds(2000));
    QVERIFY(busy.stats.retryable);
  }

  void unavailableIsRetriedWithBackoff() {
    RemoteGenerator g(options());
    const Outcome o = runRequest(g, chatRequest("503-twice", "hi"));
    QVERIFY2(o.stats.error.empty(), o.stats.error.c_str());
    QCOMPARE(stats()["requests"]["503-twice"].get<int>(), 3);
    QCOMPARE(o.waitingEvents, 2);  // one "waiting" Progress event per retry
  }

  void serverErrorIs500() {
    RemoteGenerator g(options());
    const Outcome o = runRequest(g, chatRequest("500", "hi"));
    QVERIFY2(contains(o.stats.error, "faulty failed to answer (HTTP 500: boom)"),
             o.stats.error.c_str());
    QCOMPARE(stats()["requests"]["500"].get<int>(), 1);  // a 500 is not retried
  }

  void silenceIsAReadTimeoutAndKeepsText() {
    RemoteServerOptions o = options();
    o.readTimeout = milliseconds(400);
    RemoteGenerator g(o);
    const Outcome out = runRequest(g, chatRequest("slow", "hi"));
    QCOMPARE(out.text, std::string("Hel"));
    QVERIFY2(contains(out.stats.error, "sent nothing for 400 ms"), out.stats.error.c_str());
    QVERIFY(contains(out.stats.error, "text that arrived is kept"));
    QVERIFY(!out.stats.retryable);
  }

  void cutStreamKeepsPartialText() {
    RemoteGenerator g(options());
    const Outcome o = runRequest(g, chatRequest("cut", "hi"));
    QCOMPARE(o.text, std::string("partial"));
    QCOMPARE(o.stats.finishReason, FinishReason::Error);
    QVERIFY2(contains(o.stats.error, "faulty cut the stream after 2 text chunks"),
             o.stats.error.c_str());
    const Outcome ended = runRequest(g, chatRequest("ended", "hi"));
    QCOMPARE(ended.text, std::string("partial"));
    QVERIFY2(contains(ended.stats.error, "without finishing the answer"), ended.stats.error.c_str());
    QCOMPARE(stats()["requests"]["cut"].get<int>(), 1);  // never retried once text arrived
  }

  void malformedDataKeepsPartialText() {
    RemoteGenerator g(options());
    const Outcome o = runRequest(g, chatRequest("malformed", "hi"));
    QCOMPARE(o.text, std::string("fine"));
    QVERIFY2(contains(o.stats.error, "malformed stream data"), o.stats.error.c_str());
    const Outcome json = runRequest(g, chatRequest("json", "hi"));
    QVERIFY2(contains(json.stats.error, "instead of an event stream"), json.stats.error.c_str());
  }

  void cancelClosesTheConnection() {
    RemoteGenerator g(options());
    const int disconnectsBefore = stats()["disconnects"].get<int>();
    Collector c;
    RequestId id = 0;
    std::atomic<bool> idSet = false;
    id = g.submit(chatRequest("drip", "hi"), c.sink(3, [&] {
      while (!idSet) std::this_thread::yield();
      g.abort(id);
    }));
    idSet = true;
    const auto abortedAround = Clock::now();
    const Outcome o = c.wait();
    QVERIFY(o.finished);
    QCOMPARE(o.stats.finishReason, FinishReason::Cancelled);
    QVERIFY(o.pieces.size() >= 3 && o.pieces.size() <= 4);  // 60 would come without the cancel
    QCOMPARE(o.finishedEvents, 1);
    QVERIFY(o.finishedAt - abortedAround < milliseconds(2000));
    // The upstream sees the closed connection at its next write (50 ms later).
    QElapsedTimer t;
    t.start();
    while (stats()["disconnects"].get<int>() == disconnectsBefore && t.elapsed() < 3000)
      QTest::qWait(50);
    QCOMPARE(stats()["disconnects"].get<int>(), disconnectsBefore + 1);
    g.abort(id);     // a finished id is ignored
    g.abort(99999);  // so is an unknown one
  }

  void concurrentRequestsAllFinish() {
    RemoteGenerator g(options());
    std::vector<std::unique_ptr<Collector>> collectors;
    for (int i = 0; i < 8; ++i) {
      collectors.push_back(std::make_unique<Collector>());
      g.submit(chatRequest("good", "hi"), collectors.back()->sink());
    }
    for (auto& c : collectors) {
      const Outcome o = c->wait();
      QVERIFY2(o.stats.error.empty(), o.stats.error.c_str());
      QCOMPARE(o.text, std::string("Hello there! \u00e9t\u00e9"));
    }
    QCOMPARE(g.status().running, 0);
  }

  void shutdownEndsOpenRequests() {
    Collector c;
    {
      RemoteGenerator g(options());
      g.submit(chatRequest("drip", "hi"), c.sink());
      QTest::qWait(100);
    }  // destroyed mid-stream
    const Outcome o = c.wait(1000);
    QVERIFY(o.finished);
    QCOMPARE(o.stats.finishReason, FinishReason::Cancelled);
  }

  void badAddressesAreRejected() {
    RemoteServerOptions o = options();
    o.baseUrl = "127.0.0.1:8000/v1";
    QVERIFY_THROWS_EXCEPTION(Error, RemoteGenerator{o});
  }
};

QTEST_GUILESS_MAIN(TestRemoteFaults)
#include "test_remote_faults.moc"
