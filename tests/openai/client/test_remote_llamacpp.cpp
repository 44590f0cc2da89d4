// RemoteGenerator against a real peer: llama.cpp's OpenAI-compatible server (llama-cpp-python
// 0.3.36's llama_cpp.server) on the default model, on loopback. The reference for the answer is
// the peer's own reply to the same request, asked with the official `openai` SDK
// (peer_reference.py).
#include <QTemporaryDir>
#include <QtTest>

#include "client/remote_generator.h"
#include "ember/error.h"
#include "llamacpp_peer.h"

using namespace ember;
using namespace ember::openai;
using namespace ember::test;
using std::chrono::milliseconds;

namespace {
constexpr const char* kModelFile = "SmolLM2-135M-Instruct.Q4_1.gguf";
constexpr const char* kKey = "sk-peer-5d1e";

#define EMBER_REQUIRE_PEER(python)                        \
  QString python;                                         \
  do {                                                    \
    QString why_;                                         \
    python = llamacppVenvPython(&why_);                   \
    if (python.isEmpty()) {                               \
      if (ember::test::underCi()) QFAIL(qPrintable(why_)); \
      QSKIP(qPrintable(why_));                            \
    }                                                     \
  } while (0)
}  // namespace

class TestRemoteLlamacpp : public QObject {
  Q_OBJECT
  QString python_;
  QString model_;
  std::unique_ptr<LlamacppPeer> peer_;

  RemoteServerOptions options(const std::string& key = kKey) const {
    RemoteServerOptions o;
    o.name = "llama.cpp";
    o.baseUrl = peer_->baseUrl();
    o.apiKey = key;
    o.readTimeout = milliseconds(60000);
    o.maxRetries = 0;
    return o;
  }

 private slots:
  void initTestCase() {
    EMBER_REQUIRE_PEER(python);
    EMBER_REQUIRE_MODEL(model, kModelFile);
    python_ = python;
    model_ = model;
    peer_ = std::make_unique<LlamacppPeer>();
    QString why;
    QVERIFY2(peer_->start(python_, model_, kKey, &why), qPrintable(why));
    // One short answer first, so that a peer that cannot run says so once, clearly.
    RemoteGenerator g(options());
    const Outcome o = runRequest(g, chatRequest(LlamacppPeer::kAlias, "Hi", 2), 120000);
    QTest::qWait(200);
    const QString death = peer_->death();
    QVERIFY2(death.isEmpty(), qPrintable(death));
    QVERIFY2(o.stats.error.empty(), o.stats.error.c_str());
  }

  void modelsListed() {
    RemoteGenerator g(options());
    const auto models = g.fetchModels();
    QCOMPARE(models.size(), size_t(1));
    QCOMPARE(models[0].id, std::string(LlamacppPeer::kAlias));
    const HealthCheck h = g.checkHealth();  // llama_cpp.server has no /health: /models answers
    QVERIFY2(h.healthy, h.message.c_str());
    QCOMPARE(h.probed, std::string("/models"));
  }

  // The greedy answer streamed through RemoteGenerator equals the peer's own non-streamed answer
  // to the same request through the openai SDK.
  void greedyAnswerEqualsThePeersOwn() {
    const GenerationRequest request =
        chatRequest(LlamacppPeer::kAlias, "Name three colours of the rainbow.", 24);
    QTemporaryDir dir;
    const QString requestPath = dir.filePath("request.json");
    {
      nlohmann::ordered_json body = {{"model", LlamacppPeer::kAlias},
                                     {"messages", request.messages},
                                     {"temperature", 0.0},
                                     {"top_p", request.sampling.topP},
                                     {"max_tokens", 24}};
      QFile f(requestPath);
      QVERIFY(f.open(QIODevice::WriteOnly));
      f.write(QByteArray::fromStdString(body.dump()));
    }
    QByteArray out, err;
    const int rc = runProcess(python_, {sourceDir() + "/tests/openai/client/peer_reference.py",
                                        QString::fromStdString(peer_->baseUrl()), kKey,
                                        requestPath},
                              &out, &err, {}, 120000);
    QVERIFY2(rc == 0, err.constData());
    const auto reference = nlohmann::json::parse(out.toStdString());
    const std::string expected = reference["content"].get<std::string>();
    QVERIFY(!expected.empty());

    RemoteGenerator g(options());
    const Outcome o = runRequest(g, request, 120000);
    QVERIFY2(o.stats.error.empty(), o.stats.error.c_str());
    QCOMPARE(o.text, expected);
    // Streaming with stats, measured on the client.
    QVERIFY(o.pieces.size() > 1);
    QVERIFY(o.stats.ttftMs > 0 && o.stats.ttftMs < o.stats.totalMs);
    QCOMPARE(o.stats.interTokenMs.size() + 1 >= o.pieces.size(), true);
    QVERIFY(o.stats.generatedTokens >= static_cast<int32_t>(o.pieces.size()) - 1);
    QCOMPARE(o.stats.finishReason,
             reference["finish_reason"] == "length" ? FinishReason::Length : FinishReason::Stop);
    qInfo("peer answer (%zu pieces, TTFT %.1f ms, %.1f tok/s): %s", o.pieces.size(),
          o.stats.ttftMs, o.stats.decodeTokensPerSecond, o.text.c_str());
  }

  void cancelMidStream() {
    RemoteGenerator g(options());
    Collector c;
    std::atomic<RequestId> id = 0;
    id = g.submit(chatRequest(LlamacppPeer::kAlias, "Count from 1 to 200, one per line.", 300),
                  c.sink(3, [&] {
                    while (id == 0) std::this_thread::yield();
                    g.abort(id);
                  }));
    const Outcome o = c.wait(120000);
    QCOMPARE(o.stats.finishReason, FinishReason::Cancelled);
    QVERIFY(o.pieces.size() >= 3 && o.pieces.size() < 10);
    // The peer is free again: the next request answers.
    const Outcome next = runRequest(g, chatRequest(LlamacppPeer::kAlias, "Say hi.", 4), 120000);
    QVERIFY2(next.stats.error.empty(), next.stats.error.c_str());
    QVERIFY(!next.text.empty());
  }

  void wrongKeyIs401() {
    RemoteGenerator g(options("sk-wrong-key-XYZ"));
    const Outcome o = runRequest(g, chatRequest(LlamacppPeer::kAlias, "hi", 4), 60000);
    QCOMPARE(o.stats.finishReason, FinishReason::Error);
    QVERIFY2(o.stats.error.find("refused the API key (HTTP 401") != std::string::npos,
             o.stats.error.c_str());
    QVERIFY(o.stats.error.find("XYZ") == std::string::npos);
  }

  // Last: kills the peer while it streams.
  void peerKilledMidStreamKeepsPartialText() {
    RemoteGenerator g(options());
    Collector c;
    g.submit(chatRequest(LlamacppPeer::kAlias, "Count from 1 to 200, one per line.", 300),
             c.sink(5, [&] { peer_->killNow(); }));
    const Outcome o = c.wait(120000);
    QCOMPARE(o.stats.finishReason, FinishReason::Error);
    QVERIFY(o.pieces.size() >= 5);
    QVERIFY(!o.text.empty());
    const bool clear = o.stats.error.find("cut the stream") != std::string::npos ||
                       o.stats.error.find("without finishing the answer") != std::string::npos;
    QVERIFY2(clear, o.stats.error.c_str());
    QVERIFY(o.stats.error.find("text that arrived is kept") != std::string::npos);
    QVERIFY(!o.stats.retryable);
    peer_->kill();
    // And the next request says the server is gone.
    const Outcome after = runRequest(g, chatRequest(LlamacppPeer::kAlias, "hi", 4), 30000);
    QVERIFY2(after.stats.error.find("cannot reach llama.cpp") != std::string::npos,
             after.stats.error.c_str());
  }

  void cleanupTestCase() { peer_.reset(); }
};

QTEST_GUILESS_MAIN(TestRemoteLlamacpp)
#include "test_remote_llamacpp.moc"
