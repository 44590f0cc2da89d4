// The OpenAI codec on hand-written bodies. References: the OpenAI API reference for parameter
// names, ranges and the error shape ({"error": {"message", "type", "param", "code"}}), and the
// SSE rule that a frame ends at the first blank line (so one frame must hold no raw newline).
#include <QtTest>

#include <limits>

#include "codec/api_error.h"
#include "codec/logprobs_codec.h"
#include "codec/request_codec.h"
#include "codec/response_codec.h"

using namespace ember;
using namespace ember::openai;
using json = nlohmann::json;

namespace {

std::optional<std::string> paramOfError(const std::string& body) {
  try {
    parseChatCompletionRequest(parseJsonBody(body));
  } catch (const ApiError& e) {
    return e.param().value_or("(none)");
  }
  return std::nullopt;
}

const char* kMessages = R"("messages": [{"role": "user", "content": "hi"}])";

}  // namespace

class OpenAiCodecTest : public QObject {
  Q_OBJECT
 private slots:
  void mapsEveryParameter() {
    const ParsedRequest r = parseChatCompletionRequest(parseJsonBody(R"({
      "model": "m", "messages": [
        {"role": "developer", "content": "be brief"},
        {"role": "user", "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]},
        {"role": "assistant", "content": null}],
      "temperature": 0.5, "top_p": 0.9, "top_k": 7, "min_p": 0.1, "max_tokens": 100,
      "max_completion_tokens": 12, "stop": "END", "seed": 18446744073709551615,
      "frequency_penalty": 0.25, "presence_penalty": -0.5, "repeat_penalty": 1.1, "n": 2,
      "ignore_eos": true, "stream": true, "stream_options": {"include_usage": true}, "user": "ignored",
      "response_format": {"type": "text"}, "tools": [], "logprobs": false})"));
    const SamplingParams& s = r.generation.sampling;
    QCOMPARE(r.model, std::string("m"));
    QCOMPARE(r.generation.model, std::string("m"));
    QCOMPARE(s.temperature, 0.5f);
    QCOMPARE(s.topP, 0.9f);
    QCOMPARE(s.topK, 7);
    QCOMPARE(s.minP, 0.1f);
    QCOMPARE(s.maxTokens, int64_t(12));  // max_completion_tokens wins over max_tokens
    QCOMPARE(s.stop, std::vector<std::string>{"END"});
    QCOMPARE(*s.seed, UINT64_MAX);
    QCOMPARE(s.frequencyPenalty, 0.25f);
    QCOMPARE(s.presencePenalty, -0.5f);
    QCOMPARE(s.repeatPenalty, 1.1f);
    QCOMPARE(r.n, 2);
    QVERIFY(r.generation.ignoreEndOfGeneration);  // llama.cpp's and vLLM's ignore_eos
    QVERIFY(r.stream && r.includeUsage);
    const auto& m = r.generation.messages;
    QCOMPARE(m.size(), size_t(3));
    QCOMPARE(m[0]["role"].get<std::string>(), std::string("system"));
    QCOMPARE(m[1]["content"].get<std::string>(), std::string("a\nb"));
    QCOMPARE(m[2]["content"].get<std::string>(), std::string(""));
  }

  void completionPrompts() {
    auto ids = parseCompletionRequest(parseJsonBody(R"({"model": "m", "prompt": [1, 2, 3]})"));
    QCOMPARE(*ids.generation.promptTokens, (std::vector<int32_t>{1, 2, 3}));
    auto text = parseCompletionRequest(parseJsonBody(R"({"model": "m", "prompt": ["Once"]})"));
    QCOMPARE(*text.generation.prompt, std::string("Once"));
  }

  // The API reference: chat takes logprobs (boolean) and top_logprobs 0..20; completions take
  // logprobs 0..5 (the alternatives), and 0 still reports the sampled tokens.
  void logprobsParameters() {
    const std::string chat = std::string("{\"model\": \"m\", ") + kMessages;
    auto off = parseChatCompletionRequest(parseJsonBody(chat + "}"));
    QVERIFY(!off.generation.logprobs);
    auto on = parseChatCompletionRequest(
        parseJsonBody(chat + R"(, "logprobs": true, "top_logprobs": 20})"));
    QVERIFY(on.generation.logprobs);
    QCOMPARE(on.generation.topLogprobs, 20);
    auto zero = parseCompletionRequest(parseJsonBody(R"({"model": "m", "prompt": "a", "logprobs": 0})"));
    QVERIFY(zero.generation.logprobs);
    QCOMPARE(zero.generation.topLogprobs, 0);
    auto five = parseCompletionRequest(parseJsonBody(R"({"model": "m", "prompt": "a", "logprobs": 5})"));
    QCOMPARE(five.generation.topLogprobs, 5);
    for (const char* bad : {R"({"model": "m", "prompt": "a", "logprobs": 6})",
                            R"({"model": "m", "prompt": "a", "logprobs": true})",
                            R"({"model": "m", "prompt": "a", "top_logprobs": 1})"}) {
      try {
        parseCompletionRequest(parseJsonBody(bad));
        QFAIL(bad);
      } catch (const ApiError& e) {
        QCOMPARE(e.status(), 400);
        QVERIFY(e.param() == std::optional<std::string>("logprobs") ||
                e.param() == std::optional<std::string>("top_logprobs"));
      }
    }
  }

  // Shapes from the API reference (ChatCompletionTokenLogprob; the legacy completions object),
  // on two hand-made tokens: "h" and the lead byte of "é" (a token that ends inside a character,
  // whose bytes the client joins with the next token's).
  void logprobsRendering() {
    TokenLogprob a{104, "h", -0.25f, {{104, "h", -0.25f}, {105, "i", -2.0f}, {106, "i", -3.0f}}};
    TokenLogprob b{7, "\xc3", -std::numeric_limits<float>::infinity(), {}};
    ResponseMeta meta{"chatcmpl-1", 1, "m", true};
    ChoiceResult r;
    r.text = "h\xc3";
    r.logprobs = {a, b};
    const auto chatBody = chatCompletionJson(meta, {r});
    const auto& content = chatBody["choices"][0]["logprobs"]["content"];
    QVERIFY(chatBody["choices"][0]["logprobs"]["refusal"].is_null());
    QCOMPARE(content.size(), size_t(2));
    QCOMPARE(content[0]["token"].get<std::string>(), std::string("h"));
    QCOMPARE(content[0]["logprob"].get<double>(), -0.25);
    QCOMPARE(content[0]["bytes"], nlohmann::ordered_json::array({104}));
    QCOMPARE(content[0]["top_logprobs"].size(), size_t(3));
    QCOMPARE(content[0]["top_logprobs"][1]["logprob"].get<double>(), -2.0);
    QCOMPARE(content[1]["bytes"], nlohmann::ordered_json::array({0xc3}));
    QCOMPARE(content[1]["logprob"].get<double>(), -9999.0);  // no -infinity in JSON
    // The JSON text stays valid: the lone byte becomes U+FFFD in "token", bytes keep it.
    QVERIFY(json::parse(encodeJson(chatBody))["choices"][0]["logprobs"]["content"][1]["token"] ==
            "\xef\xbf\xbd");

    const auto legacy = completionJson(meta, {r})["choices"][0]["logprobs"];
    QCOMPARE(legacy["tokens"], nlohmann::ordered_json::array({"h", "\xc3"}));
    QCOMPARE(legacy["token_logprobs"][0].get<double>(), -0.25);
    QCOMPARE(legacy["text_offset"], nlohmann::ordered_json::array({0, 1}));
    // Two alternatives with the same text share a key: the more likely one is kept.
    QCOMPARE(legacy["top_logprobs"][0].size(), size_t(2));
    QCOMPARE(legacy["top_logprobs"][0]["i"].get<double>(), -2.0);
    // A streamed chunk continues text_offset from the characters sent before it ("é" is one).
    const std::vector<TokenLogprob> later{a};
    const auto chunk = completionChunkJson(meta, 0, "h", std::nullopt, &later, 7);
    QCOMPARE(chunk["choices"][0]["logprobs"]["text_offset"][0].get<int>(), 7);
    QCOMPARE(characterCount("h\xc3\xa9x"), int64_t(3));
    // Not asked for: null, as before.
    meta.logprobs = false;
    QVERIFY(chatCompletionJson(meta, {r})["choices"][0]["logprobs"].is_null());
    QVERIFY(chatChunkJson(meta, 0, false, std::string("h"), std::nullopt, &later)["choices"][0]["logprobs"].is_null());
  }

  void refusalsNameTheParam_data() {
    QTest::addColumn<QString>("extra");
    QTest::addColumn<QString>("param");
    QTest::newRow("temperature > 2") << "\"temperature\": 2.5" << "temperature";
    QTest::newRow("temperature string") << "\"temperature\": \"1\"" << "temperature";
    QTest::newRow("huge") << "\"top_p\": 1e308" << "top_p";
    QTest::newRow("max_tokens 1.5") << "\"max_tokens\": 1.5" << "max_tokens";
    QTest::newRow("max_tokens 2^64") << "\"max_tokens\": 18446744073709551616" << "max_tokens";
    QTest::newRow("seed -1") << "\"seed\": -1" << "seed";
    QTest::newRow("n 9") << "\"n\": 9" << "n";
    QTest::newRow("empty stop") << "\"stop\": [\"\"]" << "stop";
    QTest::newRow("stop not string") << "\"stop\": [1]" << "stop";
    QTest::newRow("logprobs 1") << "\"logprobs\": 1" << "logprobs";  // chat's is a boolean
    QTest::newRow("top_logprobs alone") << "\"top_logprobs\": 2" << "top_logprobs";
    QTest::newRow("top_logprobs 21") << "\"logprobs\": true, \"top_logprobs\": 21"
                                     << "top_logprobs";
    QTest::newRow("tools") << "\"tools\": [{\"type\": \"function\"}]" << "tools";
    QTest::newRow("json schema") << "\"response_format\": {\"type\": \"json_schema\"}"
                                 << "response_format";
    QTest::newRow("logit_bias") << "\"logit_bias\": {\"1\": 5}" << "logit_bias";
    QTest::newRow("stream_options alone") << "\"stream_options\": {}" << "stream_options";
    QTest::newRow("repeat_penalty 0") << "\"repeat_penalty\": 0" << "repeat_penalty";
    // Fields ignored here, typed by the OpenAI spec (CreateChatCompletionRequest): user string,
    // store boolean, metadata object, modalities array, function_call string or object.
    QTest::newRow("user 5") << "\"user\": 5" << "user";
    QTest::newRow("store \"yes\"") << "\"store\": \"yes\"" << "store";
    QTest::newRow("metadata [1]") << "\"metadata\": [1]" << "metadata";
    QTest::newRow("modalities text") << "\"modalities\": \"text\"" << "modalities";
    QTest::newRow("function_call 1") << "\"function_call\": 1" << "function_call";
    QTest::newRow("functions") << "\"functions\": [{\"name\": \"f\"}]" << "functions";
  }
  void ignoredFieldsOfTheRightTypePass() {
    const std::string body = std::string("{\"model\": \"m\", ") + kMessages +
                             R"(, "user": "u", "store": false, "metadata": {"k": "v"},
                             "modalities": ["text"], "parallel_tool_calls": true,
                             "service_tier": "auto", "functions": [], "function_call": "none",
                             "prediction": null})";
    QCOMPARE(paramOfError(body), std::optional<std::string>());
  }
  void refusalsNameTheParam() {
    QFETCH(QString, extra);
    QFETCH(QString, param);
    const std::string body =
        std::string("{\"model\": \"m\", ") + kMessages + ", " + extra.toStdString() + "}";
    QCOMPARE(paramOfError(body), std::optional<std::string>(param.toStdString()));
  }

  void messagesAreChecked() {
    QCOMPARE(paramOfError(R"({"model": "m", "messages": []})"), std::optional<std::string>("messages"));
    QCOMPARE(paramOfError(R"({"model": "m", "messages": [{"role": "tool", "content": "x"}]})"),
             std::optional<std::string>("messages[0].role"));
    QCOMPARE(paramOfError(R"({"model": "m", "messages": [{"role": "user", "content": [{"type": "image_url"}]}]})"),
             std::optional<std::string>("messages[0].content"));
    QCOMPARE(paramOfError(R"({"messages": [{"role": "user", "content": "x"}]})"),
             std::optional<std::string>("model"));
  }

  void badJsonIsA400WithoutRecursion() {
    const std::string deep(100000, '[');
    for (const std::string& body : {deep, std::string("{\"a\": "), std::string("[1]"),
                                    std::string("{\"a\": \"\xff\"}"), std::string("{\"a\": NaN}")}) {
      try {
        parseJsonBody(body);
        QFAIL("accepted");
      } catch (const ApiError& e) {
        QCOMPARE(e.status(), 400);
        QCOMPARE(e.type(), std::string("invalid_request_error"));
      }
    }
  }

  void errorBodyShape() {
    const auto body = ApiError::invalid("bad", std::string("temperature")).body();
    QCOMPARE(body.dump(), std::string(R"({"error":{"message":"bad","type":"invalid_request_error","param":"temperature","code":null}})"));
  }

  void sseFrameCannotBeBrokenByOutput() {
    ResponseMeta meta{"chatcmpl-1", 1, "m"};
    const std::string hostile = "a\n\ndata: [DONE]\n\n\xff\xfe\r";
    const std::string frame = sseFrame(chatChunkJson(meta, 0, true, hostile, std::nullopt));
    QVERIFY(frame.starts_with("data: "));
    QVERIFY(frame.ends_with("\n\n"));
    // One line of JSON: no raw newline or carriage return before the terminating blank line.
    const std::string payload = frame.substr(6, frame.size() - 8);
    QVERIFY(payload.find('\n') == std::string::npos && payload.find('\r') == std::string::npos);
    const json parsed = json::parse(payload);
    // Invalid bytes become U+FFFD (EF BF BD), each.
    QCOMPARE(parsed["choices"][0]["delta"]["content"].get<std::string>(),
             std::string("a\n\ndata: [DONE]\n\n\xef\xbf\xbd\xef\xbf\xbd\r"));
    QCOMPARE(sseDone(), std::string("data: [DONE]\n\n"));
  }

  void usageCountsThePromptOnce() {
    ChoiceResult a, b;
    a.stats.promptTokens = b.stats.promptTokens = 30;
    a.stats.cachedPromptTokens = 16;
    b.stats.cachedPromptTokens = 16;
    a.stats.generatedTokens = 5;
    b.stats.generatedTokens = 7;
    const auto usage = usageJson({a, b});
    QCOMPARE(usage["prompt_tokens"].get<int>(), 30);
    QCOMPARE(usage["completion_tokens"].get<int>(), 12);
    QCOMPARE(usage["total_tokens"].get<int>(), 42);
    QCOMPARE(usage["prompt_tokens_details"]["cached_tokens"].get<int>(), 16);
    a.stats.interTokenMs = {10, 20, 30, 40};
    const auto t = timingsJson(a.stats);
    QCOMPARE(t["prompt_n"].get<int>(), 14);  // computed = prompt - cached, as llama.cpp
    QCOMPARE(t["cache_n"].get<int>(), 16);
    QCOMPARE(t["predicted_ms"].get<double>(), 100.0);
    QCOMPARE(t["itl_p50_ms"].get<double>(), 25.0);  // linear interpolation of 20 and 30
  }
};

QTEST_GUILESS_MAIN(OpenAiCodecTest)
#include "test_openai_codec.moc"
