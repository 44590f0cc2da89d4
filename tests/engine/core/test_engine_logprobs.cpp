// Log-probabilities of sampled tokens on the real default model (SmolLM2-135M-Instruct Q4_1).
// Reference: the logits the engine hands the sampler, caught with GenerationRequest's
// logitsObserver and put through a log-softmax written out here in double precision (log p_i =
// l_i - max - log sum exp(l_j - max)); an argmax over them for the greedy token. The values are
// those of the raw logits, so they do not change with temperature (as llama.cpp's server reports
// them by default). Cross-checked against llama.cpp itself in tests/openai (serve_checks.py).
#include <QtTest>

#include <algorithm>
#include <cmath>

#include "common/test_paths.h"
#include "ember/engine.h"
#include "ember/error.h"

using namespace ember;

namespace {

const char* kModel = "SmolLM2-135M-Instruct.Q4_1.gguf";

struct Run {
  std::string text;
  std::vector<TokenLogprob> logprobs;
  std::vector<std::vector<float>> logits;  // (samples, vocab) as the sampler saw them
  int textEvents = 0;
  RequestStats stats;
};

Run runOne(Engine& engine, GenerationRequest request) {
  Run run;
  request.logitsObserver = [&run](std::span<const float> l) {
    run.logits.emplace_back(l.begin(), l.end());
  };
  engine.addRequest(std::move(request), [&run](const RequestEvent& e) {
    if (e.kind == RequestEvent::Kind::Text) {
      run.text += e.text;
      run.logprobs.insert(run.logprobs.end(), e.logprobs.begin(), e.logprobs.end());
      ++run.textEvents;
    } else if (e.kind == RequestEvent::Kind::Finished) {
      run.stats = *e.stats;
    }
  });
  while (engine.hasWork()) engine.step();
  return run;
}

GenerationRequest chat(const std::string& question, float temperature, int64_t maxTokens) {
  GenerationRequest r;
  r.messages = nlohmann::ordered_json::array({{{"role", "user"}, {"content", question}}});
  r.sampling.temperature = temperature;
  r.sampling.seed = 7;
  r.sampling.maxTokens = maxTokens;
  return r;
}

std::vector<double> logSoftmax(const std::vector<float>& logits) {
  const double max = *std::max_element(logits.begin(), logits.end());
  double sum = 0;
  for (float l : logits) sum += std::exp(double(l) - max);
  std::vector<double> out(logits.size());
  for (size_t i = 0; i < logits.size(); ++i) out[i] = double(logits[i]) - max - std::log(sum);
  return out;
}

// Every reported token against the reference built from the observed logits of its position.
void checkAgainstLogits(const Run& run, int topN) {
  QVERIFY(!run.logprobs.empty());
  QVERIFY(run.logits.size() >= run.logprobs.size());
  std::string bytes;
  for (size_t i = 0; i < run.logprobs.size(); ++i) {
    const TokenLogprob& t = run.logprobs[i];
    const std::vector<double> ref = logSoftmax(run.logits[i]);
    QVERIFY(t.logprob <= 0.0f);
    QVERIFY2(std::abs(t.logprob - ref[size_t(t.token)]) < 1e-4, qPrintable(QString::number(i)));
    QCOMPARE(t.top.size(), size_t(topN));
    std::vector<int32_t> order(ref.size());
    for (size_t k = 0; k < order.size(); ++k) order[k] = int32_t(k);
    std::partial_sort(order.begin(), order.begin() + topN, order.end(),
                      [&](int32_t a, int32_t b) { return ref[size_t(a)] > ref[size_t(b)]; });
    for (int k = 0; k < topN; ++k) {
      QVERIFY(std::abs(t.top[size_t(k)].logprob - ref[size_t(t.top[size_t(k)].token)]) < 1e-4);
      // Same ranking as a full sort (ties, vanishingly rare in real logits, may swap).
      QVERIFY(std::abs(ref[size_t(t.top[size_t(k)].token)] - ref[size_t(order[size_t(k)])]) < 1e-6);
      if (k > 0) QVERIFY(t.top[size_t(k)].logprob <= t.top[size_t(k - 1)].logprob);
    }
    bytes += t.text;
  }
  // The tokens' bytes are the answer: nothing lost, nothing reported twice.
  QCOMPARE(QByteArray::fromStdString(bytes), QByteArray::fromStdString(run.text));
}

}  // namespace

class EngineLogprobsTest : public QObject {
  Q_OBJECT
  std::unique_ptr<Engine> engine_;

 private slots:
  void initTestCase() {
    EMBER_REQUIRE_MODEL(path, kModel);
    EngineOptions o;
    o.modelPath = path.toStdString();
    o.threads = 2;
    o.contextLength = 512;
    engine_ = Engine::load(o);
  }

  void greedyTokenIsTheMostLikely() {
    GenerationRequest r = chat("Name three colors.", 0.0f, 12);
    r.logprobs = true;
    r.topLogprobs = 5;
    const Run run = runOne(*engine_, r);
    QVERIFY(run.stats.generatedTokens >= 4);
    // One per generated token (the end-of-generation token, when it came, is not one).
    QCOMPARE(run.logprobs.size(), size_t(run.stats.generatedTokens));
    checkAgainstLogits(run, 5);
    for (const TokenLogprob& t : run.logprobs) {
      QCOMPARE(t.top[0].token, t.token);
      QCOMPARE(t.top[0].logprob, t.logprob);
    }
  }

  void sampledValuesIgnoreTemperatureAndChangeNothing() {
    GenerationRequest plain = chat("Tell me about the sea.", 1.5f, 10);
    const Run without = runOne(*engine_, plain);
    QVERIFY(without.logprobs.empty());  // not asked: none computed
    GenerationRequest asked = plain;
    asked.logprobs = true;
    asked.topLogprobs = 0;
    const Run with = runOne(*engine_, asked);
    QCOMPARE(with.text, without.text);  // same seed, same tokens: the report changes nothing
    checkAgainstLogits(with, 0);
  }

  void stopStringTokensAreNotReported() {
    // The greedy answer, then the same request stopped at its third word: the reported tokens
    // spell the cut answer, up to the token that holds the stop string's start.
    GenerationRequest r = chat("Count from one to ten.", 0.0f, 24);
    r.logprobs = true;
    r.topLogprobs = 2;
    const Run full = runOne(*engine_, r);
    const size_t cut = full.text.find(' ', full.text.size() / 2);
    QVERIFY(cut != std::string::npos && cut > 0);
    const std::string stop = full.text.substr(cut, 3);
    r.sampling.stop = {stop};
    const Run stopped = runOne(*engine_, r);
    QCOMPARE(stopped.stats.finishReason, FinishReason::Stop);
    QCOMPARE(stopped.text, full.text.substr(0, full.text.find(stop)));
    std::string bytes;
    for (const TokenLogprob& t : stopped.logprobs) bytes += t.text;
    QVERIFY(bytes.size() >= stopped.text.size());
    QCOMPARE(bytes.substr(0, stopped.text.size()), stopped.text);
    QVERIFY(bytes.size() < stopped.text.size() + stop.size());  // no whole stop token after it
  }

  void outOfRangeIsRefused() {
    GenerationRequest r = chat("hi", 0.0f, 2);
    r.logprobs = true;
    r.topLogprobs = kMaxTopLogprobs + 1;
    QVERIFY_THROWS_EXCEPTION(Error, engine_->addRequest(r, [](const RequestEvent&) {}));
  }
};

QTEST_MAIN(EngineLogprobsTest)
#include "test_engine_logprobs.moc"
