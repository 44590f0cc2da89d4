// Engine::countPromptTokens on the real default model (SmolLM2-135M-Instruct Q4_1): the count
// the app's context meter shows must be the prompt the engine then runs. Reference: the engine's
// own RequestStats for the same request (promptTokens, droppedTurns), which the tokenizer and
// template tests tie to llama.cpp and Python's Jinja2; and the context arithmetic of
// maxPromptTokens (context - maxTokens, when maxTokens is at most half the context).
#include <QtTest>

#include "common/test_paths.h"
#include "ember/engine.h"
#include "ember/error.h"

using namespace ember;
using Json = nlohmann::ordered_json;

namespace {

const char* kModel = "SmolLM2-135M-Instruct.Q4_1.gguf";

GenerationRequest request(Json messages, int64_t maxTokens) {
  GenerationRequest r;
  r.messages = std::move(messages);
  r.sampling.temperature = 0;
  r.sampling.maxTokens = maxTokens;
  return r;
}

RequestStats run(Engine& engine, GenerationRequest r) {
  RequestStats stats;
  engine.addRequest(std::move(r), [&stats](const RequestEvent& e) {
    if (e.kind == RequestEvent::Kind::Finished) stats = *e.stats;
  });
  while (engine.hasWork()) engine.step();
  return stats;
}

Json turns(int count) {
  Json m = Json::array({{{"role", "system"}, {"content", "You answer briefly."}}});
  for (int i = 0; i < count; ++i) {
    m.push_back({{"role", "user"},
                 {"content", "Question " + std::to_string(i) + ": tell me about the number " +
                                 std::to_string(i * 7) + " and why it matters."}});
    m.push_back({{"role", "assistant"},
                 {"content", "The number " + std::to_string(i * 7) + " is ordinary but useful."}});
  }
  m.push_back({{"role", "user"}, {"content", "안녕하세요! Which number was first?"}});
  return m;
}

}  // namespace

class EnginePromptCount : public QObject {
  Q_OBJECT
  std::unique_ptr<Engine> load(int32_t context) {
    QString why;
    const QString path = ember::test::findModel(kModel, &why);
    EngineOptions o;
    o.modelPath = path.toStdString();
    o.threads = 2;
    o.contextLength = context;
    o.maxSequences = 1;
    return Engine::load(o);
  }

 private slots:
  void initTestCase() { EMBER_REQUIRE_MODEL(path, kModel); }

  void countIsThePromptTheEngineRuns_data() {
    QTest::addColumn<int>("turnCount");
    QTest::newRow("one question") << 0;
    QTest::newRow("three turns") << 3;
    QTest::newRow("ten turns") << 10;
  }
  void countIsThePromptTheEngineRuns() {
    QFETCH(int, turnCount);
    auto engine = load(2048);
    const GenerationRequest r = request(turns(turnCount), 1);
    const PromptTokenCount count = engine->countPromptTokens(r);
    QCOMPARE(count.contextLength, 2048);
    QCOMPARE(count.maxPromptTokens, 2047);  // 2048 - maxTokens 1
    QVERIFY(count.fits);
    QCOMPARE(count.droppedTurns, 0);
    const RequestStats stats = run(*engine, r);
    QCOMPARE(count.tokens, stats.promptTokens);
    QCOMPARE(stats.droppedTurns, 0);
  }

  void droppedTurnsAreTheEnginesOwn() {
    auto engine = load(256);
    // maxTokens 64 of a 256 context: 192 tokens for the prompt; twelve turns need more.
    const GenerationRequest r = request(turns(12), 64);
    const PromptTokenCount count = engine->countPromptTokens(r);
    QCOMPARE(count.maxPromptTokens, 192);
    QVERIFY(count.tokens > 192);
    QVERIFY(count.fits);
    QVERIFY(count.droppedTurns > 0);
    const RequestStats stats = run(*engine, r);
    QCOMPARE(count.droppedTurns, stats.droppedTurns);
    QVERIFY(stats.promptTokens <= 192);
  }

  void tooLongEvenAloneDoesNotFit() {
    auto engine = load(256);
    std::string huge;
    for (int i = 0; i < 300; ++i) huge += "word ";
    const GenerationRequest r = request(Json::array({{{"role", "user"}, {"content", huge}}}), 64);
    const PromptTokenCount count = engine->countPromptTokens(r);
    QVERIFY(!count.fits);
    QVERIFY(count.tokens > 192);
    QVERIFY_THROWS_EXCEPTION(ember::Error, engine->addRequest(r, [](const RequestEvent&) {}));
  }
};

QTEST_GUILESS_MAIN(EnginePromptCount)
#include "test_engine_prompt_count.moc"
