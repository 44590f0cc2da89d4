// Router over two real RemoteGenerators, each in front of a misbehaving upstream
// (tests/openai/client/misbehaving_upstream.py) on loopback: balancing under 16 concurrent
// requests, one upstream killed during traffic (new requests go to the other, none that had not
// streamed fails), ejection by the health checks and re-admission when it is back on its port.
#include <QtTest>

#include "../client/remote_test_support.h"
#include "common/test_paths.h"
#include "router/router.h"
#include "router/upstream_spec.h"

using namespace ember;
using namespace ember::openai;
using namespace ember::test;
using std::chrono::milliseconds;

namespace {
struct Upstream {
  QProcess process;
  int port = 0;
  bool start(int wantedPort = 0) {
    process.start(EMBER_PYTHON, {sourceDir() + "/tests/openai/client/misbehaving_upstream.py",
                                 "--lifetime", "120", "--port", QString::number(wantedPort)});
    if (!process.waitForReadyRead(10000)) return false;
    port = process.readLine().trimmed().toInt();
    return port > 0;
  }
  void stop() {
    process.kill();
    process.waitForFinished(3000);
  }
  ~Upstream() { stop(); }
};

const UpstreamCounters& counterOf(const std::vector<UpstreamCounters>& all, const std::string& n) {
  for (const auto& c : all)
    if (c.name == n) return c;
  qFatal("no upstream %s", n.c_str());
}

bool waitUntil(const std::function<bool()>& done, int timeoutMs) {
  QElapsedTimer t;
  t.start();
  while (!done() && t.elapsed() < timeoutMs) QTest::qWait(20);
  return done();
}
}  // namespace

class TestRouterRemote : public QObject {
  Q_OBJECT
 private slots:
  void balancesFailsOverAndReadmits() {
    Upstream one, two;
    QVERIFY(one.start());
    QVERIFY(two.start());
    RouterOptions options;
    options.healthInterval = milliseconds(200);
    options.ejectAfterFailures = 2;
    options.readmitAfterSuccesses = 2;
    // As ember-serve builds it from --upstream NAME=URL.
    const auto routerPtr = routerFor({"one=http://127.0.0.1:" + std::to_string(one.port) + "/v1",
                                      "two=http://127.0.0.1:" + std::to_string(two.port) + "/v1"},
                                     nullptr, options);
    Router& router = *routerPtr;
    QCOMPARE(router.models().size(), size_t(11));  // both list the same 11 names

    // 16 concurrent requests: least outstanding spreads them over both.
    std::vector<std::unique_ptr<Collector>> batch;
    for (int i = 0; i < 16; ++i) {
      batch.push_back(std::make_unique<Collector>());
      router.submit(chatRequest("good", "q" + std::to_string(i)), batch.back()->sink());
    }
    for (auto& c : batch) QVERIFY2(c->wait().stats.error.empty(), c->wait().stats.error.c_str());
    auto counters = router.counters();
    const uint64_t toOne = counterOf(counters, "one").completed;
    const uint64_t toTwo = counterOf(counters, "two").completed;
    qInfo("16 concurrent requests: one %llu, two %llu", static_cast<unsigned long long>(toOne),
          static_cast<unsigned long long>(toTwo));
    QCOMPARE(toOne + toTwo, uint64_t(16));
    QVERIFY(toOne >= 6 && toTwo >= 6);

    // Traffic: 4 long streams (2 on each), then "two" dies.
    std::vector<std::unique_ptr<Collector>> streams;
    for (int i = 0; i < 4; ++i) {
      streams.push_back(std::make_unique<Collector>());
      router.submit(chatRequest("drip", "s" + std::to_string(i)), streams.back()->sink());
    }
    QTest::qWait(300);
    const int twoPort = two.port;
    two.stop();
    // New requests right away: the refused ones are retried on "one"; none fails.
    for (int i = 0; i < 8; ++i) {
      const Outcome o = runRequest(router, chatRequest("good", "after" + std::to_string(i)));
      QVERIFY2(o.stats.error.empty(), o.stats.error.c_str());
    }
    int cut = 0;
    for (auto& c : streams) {
      const Outcome o = c->wait();
      if (o.stats.finishReason == FinishReason::Error) {
        ++cut;  // it had streamed: the client sees the cut, with its text
        QVERIFY(!o.text.empty());
      }
    }
    QCOMPARE(cut, 2);
    QVERIFY(waitUntil([&] { return !counterOf(router.counters(), "two").healthy; }, 3000));
    QCOMPARE(router.status().state, GeneratorStatus::State::Ready);
    counters = router.counters();
    QCOMPARE(counterOf(counters, "two").ejections, uint64_t(1));

    // Back on its port: re-admitted after two good checks, and it takes requests again.
    QVERIFY(two.start(twoPort));
    QVERIFY(waitUntil([&] { return counterOf(router.counters(), "two").healthy; }, 5000));
    QCOMPARE(counterOf(router.counters(), "two").readmissions, uint64_t(1));
    const uint64_t before = counterOf(router.counters(), "two").completed;
    std::vector<std::unique_ptr<Collector>> more;
    for (int i = 0; i < 6; ++i) {
      more.push_back(std::make_unique<Collector>());
      router.submit(chatRequest("good", "back" + std::to_string(i)), more.back()->sink());
    }
    for (auto& c : more) QVERIFY(c->wait().stats.error.empty());
    QVERIFY(counterOf(router.counters(), "two").completed > before);
  }
};

QTEST_GUILESS_MAIN(TestRouterRemote)
#include "test_router_remote.moc"
