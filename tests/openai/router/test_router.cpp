// Router over deterministic fake upstreams (fake_upstream.h). Expected routes are worked out by
// hand from the rules in router.h: least outstanding with ties in turn, eject after 3 failed
// checks and re-admit after 2, retry elsewhere only before anything streamed, conversation
// affinity within an imbalance of 4. The prefix-cache figures compare affinity with round robin
// on the same 8-turn conversations.
#include <QtTest>

#include "../client/remote_test_support.h"
#include "ember/error.h"
#include "fake_upstream.h"
#include "router/conversation_affinity.h"
#include "router/router.h"

using namespace ember;
using namespace ember::openai;
using namespace ember::test;

namespace {
RouterUpstream upstreamOf(const std::shared_ptr<FakeUpstream>& fake, const std::string& name) {
  RouterUpstream u;
  u.name = name;
  u.generator = fake;
  u.probe = [fake] { return fake->probe(); };
  return u;
}

RouterOptions manualHealth() {
  RouterOptions o;
  o.healthInterval = std::chrono::hours(1);  // the tests call checkHealthNow()
  return o;
}

const UpstreamCounters& counterOf(const std::vector<UpstreamCounters>& all, const std::string& name) {
  for (const auto& c : all)
    if (c.name == name) return c;
  qFatal("no upstream %s", name.c_str());
}

bool waitUntil(const std::function<bool()>& done, int timeoutMs = 5000) {
  QElapsedTimer t;
  t.start();
  while (!done() && t.elapsed() < timeoutMs) QTest::qWait(5);
  return done();
}
}  // namespace

class TestRouter : public QObject {
  Q_OBJECT
 private slots:
  void modelsAreTheUnionOfHealthyUpstreams() {
    auto a = std::make_shared<FakeUpstream>("a", std::vector<std::string>{"m", "x"});
    auto b = std::make_shared<FakeUpstream>("b", std::vector<std::string>{"m", "y"});
    Router router({upstreamOf(a, "a"), upstreamOf(b, "b")}, manualHealth());
    std::vector<std::string> ids;
    for (const auto& m : router.models()) ids.push_back(m.id);
    QCOMPARE(ids, (std::vector<std::string>{"m", "x", "y"}));
    // By model: x only on a, y only on b.
    QCOMPARE(runRequest(router, chatRequest("x", "hi")).text, std::string("answer to hi"));
    QCOMPARE(runRequest(router, chatRequest("y", "hi")).text, std::string("answer to hi"));
    QCOMPARE(a->received(), 1);
    QCOMPARE(b->received(), 1);
    try {
      router.submit(chatRequest("z", "hi"), [](const RequestEvent&) {});
      QFAIL("an unknown model was routed");
    } catch (const Error& e) {
      QCOMPARE(std::string(e.what()), std::string("no upstream serves the model 'z' (models: m, x, m, y)"));
    }
  }

  // Least outstanding requests: a carries 4 open requests for x, then 12 for m arrive.
  void leastOutstandingBalances() {
    auto a = std::make_shared<FakeUpstream>("a", std::vector<std::string>{"m", "x"});
    auto b = std::make_shared<FakeUpstream>("b", std::vector<std::string>{"m"});
    a->hold = b->hold = true;
    Router router({upstreamOf(a, "a"), upstreamOf(b, "b")}, manualHealth());
    std::vector<std::unique_ptr<Collector>> collectors;
    auto send = [&](const std::string& model, int i) {
      collectors.push_back(std::make_unique<Collector>());
      router.submit(chatRequest(model, "q" + std::to_string(i)), collectors.back()->sink());
    };
    for (int i = 0; i < 4; ++i) send("x", i);
    for (int i = 0; i < 12; ++i) send("m", i);
    // b takes the first 4 (0 < 4), then the two alternate: a 4 + 4, b 8.
    QCOMPARE(a->received(), 8);
    QCOMPARE(b->received(), 8);
    QCOMPARE(router.status().running, 16);
    a->release();
    b->release();
    for (auto& c : collectors) QCOMPARE(c->wait().stats.finishReason, FinishReason::Eos);
    const auto counters = router.counters();
    QCOMPARE(counterOf(counters, "a").completed, uint64_t(8));
    QCOMPARE(counterOf(counters, "b").completed, uint64_t(8));
    QCOMPARE(router.status().running, 0);
  }

  void healthChecksEjectAndReadmit() {
    auto a = std::make_shared<FakeUpstream>("a", std::vector<std::string>{"m"});
    auto b = std::make_shared<FakeUpstream>("b", std::vector<std::string>{"m", "y"});
    Router router({upstreamOf(a, "a"), upstreamOf(b, "b")}, manualHealth());
    b->down = true;
    router.checkHealthNow();
    router.checkHealthNow();
    QVERIFY(counterOf(router.counters(), "b").healthy);  // two failures: still in
    router.checkHealthNow();
    auto c = router.counters();
    QVERIFY(!counterOf(c, "b").healthy);
    QCOMPARE(counterOf(c, "b").ejections, uint64_t(1));
    QCOMPARE(router.models().size(), size_t(1));  // y went with b
    for (int i = 0; i < 4; ++i) QVERIFY(runRequest(router, chatRequest("m", "hi")).stats.error.empty());
    QCOMPARE(b->received(), 0);
    try {
      router.submit(chatRequest("y", "hi"), [](const RequestEvent&) {});
      QFAIL("a request went to an ejected upstream");
    } catch (const Error& e) {
      QVERIFY2(std::string(e.what()).find("b: cannot reach b: connection refused") !=
                   std::string::npos,
               e.what());
    }
    b->down = false;
    router.checkHealthNow();
    QVERIFY(!counterOf(router.counters(), "b").healthy);  // one success: not yet
    router.checkHealthNow();
    c = router.counters();
    QVERIFY(counterOf(c, "b").healthy);
    QCOMPARE(counterOf(c, "b").readmissions, uint64_t(1));
    QCOMPARE(router.models().size(), size_t(2));
    QCOMPARE(runRequest(router, chatRequest("y", "hi")).text, std::string("answer to hi"));
  }

  // b refuses (down, not yet ejected): what went to b is retried on a; no client sees an error.
  void refusedRequestsGoElsewhere() {
    auto a = std::make_shared<FakeUpstream>("a", std::vector<std::string>{"m"});
    auto b = std::make_shared<FakeUpstream>("b", std::vector<std::string>{"m"});
    Router router({upstreamOf(a, "a"), upstreamOf(b, "b")}, manualHealth());
    b->down = true;
    for (int i = 0; i < 6; ++i) {
      const Outcome o = runRequest(router, chatRequest("m", "q" + std::to_string(i)));
      QVERIFY2(o.stats.error.empty(), o.stats.error.c_str());
      QCOMPARE(o.finishedEvents, 1);
    }
    const auto c = router.counters();
    QVERIFY(counterOf(c, "b").retriedElsewhere >= 1);
    QCOMPARE(counterOf(c, "a").completed, uint64_t(6));
    // Three refusals are three failures: b is ejected without waiting for a health check.
    QVERIFY(!counterOf(c, "b").healthy || counterOf(c, "b").retriedElsewhere < 3);
  }

  void failureAfterTextIsTheClients() {
    auto a = std::make_shared<FakeUpstream>("a", std::vector<std::string>{"m"});
    auto b = std::make_shared<FakeUpstream>("b", std::vector<std::string>{"m"});
    a->failAfterText = b->failAfterText = true;
    Router router({upstreamOf(a, "a"), upstreamOf(b, "b")}, manualHealth());
    const Outcome o = runRequest(router, chatRequest("m", "hi"));
    QCOMPARE(o.text, std::string("ans"));
    QCOMPARE(o.stats.finishReason, FinishReason::Error);
    QCOMPARE(a->received() + b->received(), 1);  // not retried
  }

  void everyUpstreamRefusing() {
    auto a = std::make_shared<FakeUpstream>("a", std::vector<std::string>{"m"});
    auto b = std::make_shared<FakeUpstream>("b", std::vector<std::string>{"m"});
    Router router({upstreamOf(a, "a"), upstreamOf(b, "b")}, manualHealth());
    a->down = b->down = true;
    const Outcome o = runRequest(router, chatRequest("m", "hi"));
    QCOMPARE(o.stats.finishReason, FinishReason::Error);
    QVERIFY(o.stats.error.find("connection refused") != std::string::npos);
    QCOMPARE(o.finishedEvents, 1);
    QCOMPARE(a->received() + b->received(), 2);  // each tried once
  }

  void abortReachesTheUpstream() {
    auto a = std::make_shared<FakeUpstream>("a", std::vector<std::string>{"m"});
    a->hold = true;
    Router router({upstreamOf(a, "a")}, manualHealth());
    Collector c;
    const RequestId id = router.submit(chatRequest("m", "hi"), c.sink());
    router.abort(id);
    const Outcome o = c.wait();
    QCOMPARE(o.stats.finishReason, FinishReason::Cancelled);
    QCOMPARE(o.finishedEvents, 1);
    QCOMPARE(a->aborts(), 1);
    router.abort(id);  // finished: ignored
  }

  // 3 conversations x 8 turns, interleaved (turn k of each, then turn k+1). With affinity every
  // turn after the first lands where the previous one did; round robin scatters them.
  void conversationAffinity() {
    uint64_t reused[2] = {0, 0};
    for (int withAffinity = 1; withAffinity >= 0; --withAffinity) {
      auto a = std::make_shared<FakeUpstream>("a", std::vector<std::string>{"m"});
      auto b = std::make_shared<FakeUpstream>("b", std::vector<std::string>{"m"});
      RouterOptions o = manualHealth();
      o.affinity = withAffinity;
      Router router({upstreamOf(a, "a"), upstreamOf(b, "b")}, o);
      std::vector<nlohmann::ordered_json> chats(3, nlohmann::ordered_json::array());
      for (auto& chat : chats)
        chat.push_back({{"role", "system"}, {"content", "You are terse."}});
      std::vector<std::string> lastUpstream(3);
      int sameAsBefore = 0;
      for (int turn = 0; turn < 8; ++turn) {
        for (int c = 0; c < 3; ++c) {
          chats[c].push_back({{"role", "user"},
                              {"content", "chat " + std::to_string(c) + " turn " + std::to_string(turn)}});
          GenerationRequest r = chatRequest("m", "");
          r.messages = chats[c];
          const int beforeA = a->received();
          const Outcome out = runRequest(router, r);
          QVERIFY2(out.stats.error.empty(), out.stats.error.c_str());
          const std::string where = a->received() > beforeA ? "a" : "b";
          if (turn > 0 && where == lastUpstream[c]) ++sameAsBefore;
          lastUpstream[c] = where;
          reused[withAffinity] += out.stats.cachedPromptTokens;
          chats[c].push_back({{"role", "assistant"}, {"content", out.text}});
        }
      }
      if (withAffinity) {
        QCOMPARE(sameAsBefore, 3 * 7);  // every turn k on turn k-1's upstream
        QCOMPARE(counterOf(router.counters(), "a").affinityHits +
                     counterOf(router.counters(), "b").affinityHits,
                 uint64_t(3 * 7));
        QCOMPARE(a->received(), 16);  // the first turns alternated: chats 0 and 2 on a
      }
    }
    qInfo("reused prompt tokens over 3 chats x 8 turns: affinity %llu, round robin %llu",
          static_cast<unsigned long long>(reused[1]), static_cast<unsigned long long>(reused[0]));
    QVERIFY(reused[1] > reused[0]);
  }

  // The affine upstream is 5 requests busier than the other (more than 4): the turn goes there.
  void affinityYieldsToImbalance() {
    auto a = std::make_shared<FakeUpstream>("a", std::vector<std::string>{"m", "x"});
    auto b = std::make_shared<FakeUpstream>("b", std::vector<std::string>{"m"});
    Router router({upstreamOf(a, "a"), upstreamOf(b, "b")}, manualHealth());
    nlohmann::ordered_json chat = nlohmann::ordered_json::array(
        {{{"role", "user"}, {"content", "first"}}});
    GenerationRequest r = chatRequest("m", "");
    r.messages = chat;
    const Outcome first = runRequest(router, r);
    QCOMPARE(a->received(), 1);  // the tie went to a
    chat.push_back({{"role", "assistant"}, {"content", first.text}});
    chat.push_back({{"role", "user"}, {"content", "second"}});
    a->hold = true;
    std::vector<std::unique_ptr<Collector>> busy;
    for (int i = 0; i < 5; ++i) {
      busy.push_back(std::make_unique<Collector>());
      router.submit(chatRequest("x", "busy"), busy.back()->sink());
    }
    QVERIFY(waitUntil([&] { return a->heldCount() == 5; }));
    r.messages = chat;
    const Outcome second = runRequest(router, r);
    QVERIFY2(second.stats.error.empty(), second.stats.error.c_str());
    QCOMPARE(b->received(), 1);
    QCOMPARE(counterOf(router.counters(), "a").affinityHits, uint64_t(0));
    a->release();
    for (auto& c : busy) c->wait();
  }

  // The local engine as an upstream: healthy while its status is Ready.
  void localUpstreamFollowsItsStatus() {
    FakeUpstream local("local", {"smol"});
    auto remote = std::make_shared<FakeUpstream>("r", std::vector<std::string>{"big"});
    RouterOptions o = manualHealth();
    o.ejectAfterFailures = 1;
    o.readmitAfterSuccesses = 1;
    Router router({localUpstream(local, "local"), upstreamOf(remote, "r")}, o);
    QCOMPARE(router.models().size(), size_t(2));
    QCOMPARE(runRequest(router, chatRequest("smol", "hi")).text, std::string("answer to hi"));
    QCOMPARE(local.received(), 1);
    local.down = true;
    router.checkHealthNow();
    QCOMPARE(router.models().size(), size_t(1));
    QVERIFY(counterOf(router.counters(), "local").lastError == "local failed");
    local.down = false;
    router.checkHealthNow();
    QCOMPARE(router.models().size(), size_t(2));
  }

  void affinityKeys() {
    // Hand-worked: record() keeps the request's key and the key of request + answer.
    ConversationAffinity affinity(4);
    const auto turn1 = nlohmann::ordered_json::parse(R"([{"role":"user","content":"hi"}])");
    QVERIFY(!affinity.lookup(turn1));
    affinity.record(turn1, "hello", 1);
    QCOMPARE(affinity.size(), size_t(2));
    QCOMPARE(affinity.lookup(turn1).value(), size_t(1));  // the same turn asked again
    auto turn2 = turn1;
    turn2.push_back({{"role", "assistant"}, {"content", "hello"}});
    turn2.push_back({{"role", "user"}, {"content", "more"}});
    QCOMPARE(affinity.lookup(turn2).value(), size_t(1));
    // The answer sent back edited: still the upstream that caches the question.
    auto edited = turn1;
    edited.push_back({{"role", "assistant"}, {"content", "hey"}});
    edited.push_back({{"role", "user"}, {"content", "more"}});
    QCOMPARE(affinity.lookup(edited).value(), size_t(1));
    // Another chat, and a prefix alone (a shared system prompt) never maps anywhere.
    const auto sys = nlohmann::ordered_json::parse(
        R"([{"role":"system","content":"be brief"},{"role":"user","content":"a"}])");
    affinity.record(sys, "x", 0);
    auto sysOther = nlohmann::ordered_json::parse(
        R"([{"role":"system","content":"be brief"},{"role":"user","content":"b"}])");
    QVERIFY(!affinity.lookup(sysOther));
    auto sysNext = sys;
    sysNext.push_back({{"role", "assistant"}, {"content", "x"}});
    sysNext.push_back({{"role", "user"}, {"content", "again"}});
    QCOMPARE(affinity.lookup(sysNext).value(), size_t(0));
    // Capacity 4: turn 2's two keys push out turn 1's (the least recently used).
    affinity.record(turn2, "y", 0);
    QCOMPARE(affinity.size(), size_t(4));
    QVERIFY(!affinity.lookup(edited));
    QCOMPARE(affinity.lookup(turn2).value(), size_t(0));
    QCOMPARE(affinity.lookup(sysNext).value(), size_t(0));
  }
};

QTEST_GUILESS_MAIN(TestRouter)
#include "test_router.moc"
