// The client's reading of OpenAI streams: the recorded vLLM fixtures (fixtures/README.md says
// where their shape comes from), llama.cpp's last chunk with `timings` and usage (the shape of
// llama.cpp's server, tools/server), error bodies, request bodies (OpenAI's chat and completions
// API reference), Retry-After (RFC 9110 section 10.2.3) and model lists. Expected timings are
// hand-computed from the synthetic arrival times below.
#include <QFile>
#include <QtTest>

#include "client/remote_answer.h"
#include "client/remote_protocol.h"
#include "client/sse_reader.h"
#include "common/test_paths.h"
#include "ember/error.h"

using namespace ember;
using namespace ember::openai;
using std::chrono::milliseconds;

namespace {
std::string fixture(const char* name) {
  QFile f(ember::test::sourceDir() + "/tests/openai/client/fixtures/" + name);
  if (!f.open(QIODevice::ReadOnly)) qFatal("fixture %s is missing", name);
  return f.readAll().toStdString();
}

struct Replay {
  std::string text;
  std::string reasoning;
  std::string error;
  RequestStats stats;
  bool complete = false;
};

// Feeds the stream's events to a RemoteAnswer, event i arriving at t0 + i * 10 ms.
Replay replay(const std::string& stream) {
  const Clock::time_point t0{};
  RemoteAnswer answer(t0);
  SseReader reader;
  std::vector<SseEvent> events;
  reader.feed(stream, events);
  Replay r;
  Clock::time_point now = t0;
  int i = 0;
  try {
    for (const auto& e : events) {
      now = t0 + milliseconds(10 * i++);
      for (const auto& piece : answer.onData(e.data, now))
        (piece.reasoning ? r.reasoning : r.text) += piece.text;
    }
  } catch (const Error& e) {
    r.error = e.what();
  }
  r.complete = answer.complete();
  r.stats = answer.stats(now);
  return r;
}
}  // namespace

class TestRemoteAnswer : public QObject {
  Q_OBJECT
 private slots:
  // Fixture: a recorded vLLM chat stream (fixtures/vllm_chat_stream.sse).
  void vllmFixtureStream() {
    const Replay r = replay(fixture("vllm_chat_stream.sse"));
    QVERIFY2(r.error.empty(), r.error.c_str());
    QCOMPARE(r.text, std::string("The capital of France is Paris."));
    QVERIFY(r.complete);
    QCOMPARE(r.stats.finishReason, FinishReason::Stop);
    // Event 0 is role-only (empty content): TTFT is event 1's time, 10 ms.
    QCOMPARE(r.stats.ttftMs, 10.0);
    QCOMPARE(r.stats.promptTokens, 42);
    QCOMPARE(r.stats.cachedPromptTokens, 32);
    QCOMPARE(r.stats.generatedTokens, 7);
    // 7 text chunks of one token each, 10 ms apart: 6 gaps of 10 ms; (7 - 1) / 60 ms = 100 tok/s.
    QCOMPARE(r.stats.interTokenMs, std::vector<double>(6, 10.0));
    QCOMPARE(r.stats.decodeTokensPerSecond, 100.0);
    QVERIFY(r.stats.serverTimings.is_null());
  }

  // Fixture: vLLM's mid-stream error chunk after two tokens (fixtures/vllm_stream_error.sse).
  void vllmFixtureErrorMidStream() {
    const Replay r = replay(fixture("vllm_stream_error.sse"));
    QCOMPARE(r.text, std::string("Once upon"));
    QVERIFY2(r.error.find("EngineCore encountered an issue") != std::string::npos, r.error.c_str());
    QVERIFY(r.error.find("mid-stream") != std::string::npos);
  }

  void vllmFixtureErrorBodies() {
    QCOMPARE(errorBodyMessage(fixture("vllm_error_404.json")),
             std::string("The model `llama-3-8b` does not exist."));
    QCOMPARE(errorBodyMessage(fixture("vllm_error_legacy.json")),
             std::string("The model `llama-3-8b` does not exist."));
    // FastAPI's validation error (llama-cpp-python's server) and a plain-text body.
    QCOMPARE(errorBodyMessage(R"({"detail":[{"loc":["body","model"],"msg":"field required"}]})"),
             std::string("field required"));
    QCOMPARE(errorBodyMessage("Bad Gateway\n"), std::string("Bad Gateway"));
  }

  // llama.cpp's server puts usage and `timings` into the chunk that carries finish_reason, and
  // (with several tokens per chunk, as after a stop-string hold-back) says nothing per chunk.
  void llamacppTimingsAndTokensPerChunk() {
    const std::string stream =
        "data: {\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":null}}]}\n\n"
        "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"ab\"}}]}\n\n"
        "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"cd\"}}]}\n\n"
        "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"ef\"}}]}\n\n"
        "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"length\"}],"
        "\"usage\":{\"prompt_tokens\":10,\"completion_tokens\":6,\"total_tokens\":16},"
        "\"timings\":{\"cache_n\":4,\"prompt_n\":6,\"prompt_ms\":12.5,\"prompt_per_second\":480.0,"
        "\"predicted_n\":6,\"predicted_ms\":30.0,\"predicted_per_second\":200.0}}\n\n"
        "data: [DONE]\n\n";
    const Replay r = replay(stream);
    QCOMPARE(r.text, std::string("abcdef"));
    QCOMPARE(r.stats.finishReason, FinishReason::Length);
    QCOMPARE(r.stats.promptTokens, 10);
    QCOMPARE(r.stats.cachedPromptTokens, 4);  // no prompt_tokens_details: timings.cache_n
    QCOMPARE(r.stats.prefillMs, 12.5);
    QCOMPARE(r.stats.prefillTokensPerSecond, 480.0);
    QCOMPARE(r.stats.serverTimings["predicted_per_second"].get<double>(), 200.0);
    // 6 tokens over 3 chunks: each 10 ms gap is two tokens of 5 ms.
    QCOMPARE(r.stats.interTokenMs, std::vector<double>(4, 5.0));
    QCOMPARE(r.stats.ttftMs, 10.0);
  }

  void logprobsCountTokensOfAChunk() {
    const std::string stream =
        "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"x\"},\"logprobs\":{\"content\":"
        "[{\"token\":\"x\"}]}}]}\n\n"
        "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"yzw\"},\"logprobs\":{\"content\":"
        "[{\"token\":\"y\"},{\"token\":\"z\"},{\"token\":\"w\"}]},\"finish_reason\":\"stop\"}]}\n\n";
    const Replay r = replay(stream);
    QCOMPARE(r.stats.generatedTokens, 2);  // no usage: counted chunks
    QCOMPARE(r.stats.interTokenMs.size(), size_t(3));
    QCOMPARE(r.stats.interTokenMs[0], 10.0 / 3);
  }

  void reasoningAndCompletionChunks() {
    const Replay chat = replay(
        "data: {\"choices\":[{\"index\":0,\"delta\":{\"reasoning_content\":\"hmm\"}}]}\n\n"
        "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"42\"},\"finish_reason\":\"stop\"}]}\n\n");
    QCOMPARE(chat.reasoning, std::string("hmm"));
    QCOMPARE(chat.text, std::string("42"));
    QCOMPARE(chat.stats.ttftMs, 0.0);  // reasoning text is the first text
    const Replay completion = replay(
        "data: {\"object\":\"text_completion\",\"choices\":[{\"index\":0,\"text\":\" world\","
        "\"finish_reason\":null}]}\n\ndata: [DONE]\n\n");
    QCOMPARE(completion.text, std::string(" world"));
    QVERIFY(completion.complete);
  }

  void malformedDataIsAnErrorAndKeepsWhatCame() {
    const Replay r = replay(
        "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"ok\"}}]}\n\ndata: {oops\n\n");
    QCOMPARE(r.text, std::string("ok"));
    QVERIFY2(r.error.find("malformed") != std::string::npos, r.error.c_str());
    QVERIFY(!r.complete);
  }

  void encodesChatAndCompletionRequests() {
    GenerationRequest chat;
    chat.messages = nlohmann::ordered_json::parse(R"([{"role":"user","content":"hi"}])");
    chat.sampling.temperature = 0;
    chat.sampling.maxTokens = 16;
    chat.sampling.seed = 7;
    const EncodedRequest e = encodeRequest(chat, "smol");
    QCOMPARE(e.path, std::string("/chat/completions"));
    const auto body = nlohmann::json::parse(e.body);
    QCOMPARE(body["model"].get<std::string>(), std::string("smol"));
    QCOMPARE(body["messages"][0]["content"].get<std::string>(), std::string("hi"));
    QCOMPARE(body["temperature"].get<double>(), 0.0);
    QCOMPARE(body["max_tokens"].get<int>(), 16);
    QCOMPARE(body["seed"].get<uint64_t>(), uint64_t(7));
    QVERIFY(body["stream"].get<bool>());
    QVERIFY(body["stream_options"]["include_usage"].get<bool>());
    // Ember's defaults for the non-OpenAI settings are the servers' own: not sent.
    QVERIFY(!body.contains("top_k") && !body.contains("min_p") && !body.contains("repeat_penalty"));
    GenerationRequest raw;
    raw.prompt = "Once";
    raw.sampling.topK = 5;
    raw.sampling.repeatPenalty = 1.1f;
    const EncodedRequest c = encodeRequest(raw, "smol");
    QCOMPARE(c.path, std::string("/completions"));
    const auto cbody = nlohmann::json::parse(c.body);
    QCOMPARE(cbody["prompt"].get<std::string>(), std::string("Once"));
    QCOMPARE(cbody["top_k"].get<int>(), 5);
    QVERIFY(cbody.contains("repeat_penalty") && cbody.contains("repetition_penalty"));
    GenerationRequest observed = chat;
    observed.logitsObserver = [](std::span<const float>) {};
    QVERIFY_THROWS_EXCEPTION(Error, encodeRequest(observed, "smol"));
    QVERIFY_THROWS_EXCEPTION(Error, encodeRequest(GenerationRequest{}, "smol"));
  }

  void retryAfter() {
    const auto now = std::chrono::system_clock::from_time_t(1445412475);  // 07:27:55 GMT
    QCOMPARE(parseRetryAfter("3", now).value(), 3.0);
    QCOMPARE(parseRetryAfter(" 120\r\n", now).value(), 120.0);
    QCOMPARE(parseRetryAfter("Wed, 21 Oct 2015 07:28:00 GMT", now).value(), 5.0);
    QVERIFY(!parseRetryAfter("soon", now));
    QVERIFY(!parseRetryAfter("", now));
  }

  void modelLists() {
    // llama.cpp's server (meta.n_ctx_train) and vLLM (max_model_len).
    const auto llama = parseModelList(
        R"({"object":"list","data":[{"id":"smol.gguf","object":"model","owned_by":"llamacpp","meta":{"n_ctx_train":8192}}]})",
        "peer");
    QCOMPARE(llama.size(), size_t(1));
    QCOMPARE(llama[0].id, std::string("smol.gguf"));
    QCOMPARE(llama[0].contextLength, 8192);
    QCOMPARE(llama[0].ownedBy, std::string("peer"));
    const auto vllm = parseModelList(
        R"({"object":"list","data":[{"id":"a","max_model_len":4096},{"id":"b"}]})", "v");
    QCOMPARE(vllm.size(), size_t(2));
    QCOMPARE(vllm[0].contextLength, 4096);
    QVERIFY_THROWS_EXCEPTION(Error, parseModelList("<html>", "v"));
  }
};

QTEST_APPLESS_MAIN(TestRemoteAnswer)
#include "test_remote_answer.moc"
