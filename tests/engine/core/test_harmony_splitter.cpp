// gpt-oss's harmony channels told apart: the analysis channel is reasoning, the final channel is
// the answer. References:
//  - gpt-oss's own chat template (llama.cpp's models/templates/openai-gpt-oss-120b.jinja)
//    rendered by Python's Jinja2 (tests/tools/render_jinja2.py): an assistant turn with
//    `thinking` and `content`, rendered as the last turn, is exactly what the model writes after
//    the generation prompt ("<|start|>assistant"), so the text after the prompt, split, must give
//    back `thinking` as reasoning and `content` as the answer, byte for byte;
//  - the harmony format's published rules (openai/harmony): a message is [<|start|>role] header
//    <|message|> content, ended by <|end|>, <|return|> or <|call|>; the header names the channel
//    and, for a tool call, the recipient and content type; the expected pieces of the hand-written
//    streams below are worked out by hand from those rules;
//  - token ids end to end: a real byte-level BPE vocabulary (llama.cpp's models/ggml-vocab-gpt-2)
//    with o200k_harmony's special tokens added, as gpt-oss GGUFs carry them, streamed one token at
//    a time through the detokenizer into the engine's splitter.
#include <QtTest>

#include "engine/chat/jinja2_reference.h"
#include "engine/tokenizer/bpe_test_cases.h"
#include "gguf/gguf_file.h"
#include "gguf/gguf_writer.h"
#include "runtime/engine/harmony_splitter.h"
#include "tokenizer/utf8.h"

using namespace ember;
using ember::test::Json;

namespace {

struct Split {
  std::string reasoning, answer;
};

Split run(ReasoningSplitter& splitter, const std::vector<std::string>& chunks) {
  Split out;
  const auto take = [&](const std::vector<ReasoningSplitter::Piece>& pieces) {
    for (const auto& p : pieces) {
      QVERIFY(!p.text.empty());
      (p.reasoning ? out.reasoning : out.answer) += p.text;
    }
  };
  for (const auto& c : chunks) take(splitter.push(c));
  take(splitter.flush());
  return out;
}

// The whole text, one piece per byte, one per character, and every cut in two.
std::vector<std::vector<std::string>> cuttings(std::string_view text) {
  std::vector<std::vector<std::string>> all = {{std::string(text)}, {}, {}};
  for (char c : text) all[1].emplace_back(1, c);
  for (size_t i = 0; i < text.size();) {
    const size_t n = std::max<size_t>(1, utf8::sequenceLength(static_cast<uint8_t>(text[i])));
    all[2].emplace_back(text.substr(i, n));
    i += n;
  }
  for (size_t i = 1; i < text.size(); ++i)
    all.push_back({std::string(text.substr(0, i)), std::string(text.substr(i))});
  return all;
}

void expectSplit(std::string_view stream, HarmonySplitter::Start start, const std::string& reasoning,
                 const std::string& answer) {
  for (const auto& chunks : cuttings(stream)) {
    HarmonySplitter splitter(start);
    const Split got = run(splitter, chunks);
    QCOMPARE(got.reasoning, reasoning);
    QCOMPARE(got.answer, answer);
  }
}

// o200k_harmony's special tokens, as gpt-oss GGUFs list them (all control-typed).
const std::vector<std::string> kHarmonyTokens = {
    "<|startoftext|>", "<|endoftext|>", "<|return|>", "<|constrain|>", "<|channel|>",
    "<|start|>",       "<|end|>",       "<|message|>", "<|call|>"};

// A byte-level BPE vocabulary with the harmony tokens appended; eos is <|return|>, as in gpt-oss.
std::unique_ptr<Tokenizer> harmonyTokenizer(const QString& basePath) {
  const auto base = gguf::GgufFile::open(basePath.toStdString());
  gguf::GgufWriter writer;
  for (const auto& [key, value] : base->metadata()) {
    if (key == "tokenizer.ggml.tokens" || key == "tokenizer.ggml.token_type" ||
        key == "tokenizer.ggml.eos_token_id")
      continue;
    writer.add(key, value);
  }
  const auto items = [&](std::string_view key) {
    std::vector<gguf::Value> out;
    for (const auto& [k, value] : base->metadata())
      if (k == key)
        for (size_t i = 0; i < value.asArray().size(); ++i) out.push_back(value.asArray().at(i));
    return out;
  };
  std::vector<gguf::Value> tokens = items("tokenizer.ggml.tokens");
  std::vector<gguf::Value> types = items("tokenizer.ggml.token_type");
  const size_t first = tokens.size();
  for (const std::string& t : kHarmonyTokens) {
    tokens.push_back(gguf::Value::makeString(t));
    types.push_back(gguf::Value::makeInt32(static_cast<int32_t>(TokenType::Control)));
  }
  writer.add("tokenizer.ggml.tokens", gguf::Value::makeArray(gguf::ValueType::String, tokens));
  writer.add("tokenizer.ggml.token_type", gguf::Value::makeArray(gguf::ValueType::Int32, types));
  writer.add("tokenizer.ggml.eos_token_id", gguf::Value::makeUInt32(static_cast<uint32_t>(first + 2)));
  return Tokenizer::fromGguf(*gguf::GgufFile::fromBuffer(writer.bytes(), "harmony-vocab.gguf"));
}

// One conversation whose last message is the assistant turn the model is to write.
struct TemplateCase {
  const char* name;
  Json messages;     // the last one is the assistant's
  std::string reasoning, answer;
};

const std::vector<TemplateCase>& templateCases() {
  static const std::vector<TemplateCase> cases = {
      {"thinking and answer",
       Json::parse(R"([{"role": "user", "content": "What is 2 + 2?"},
         {"role": "assistant", "thinking": "The user asks a sum.\nIt is 4.", "content": "2 + 2 = 4."}])"),
       "The user asks a sum.\nIt is 4.", "2 + 2 = 4."},
      {"korean, emoji, markup-like text",
       Json::parse(R"([{"role": "system", "content": "한국어로 답하세요."},
         {"role": "user", "content": "안녕하세요? 🌤️"},
         {"role": "assistant", "thinking": "인사에 답한다 <b> and a < b, <|not a marker",
          "content": "  안녕하세요! 😊\n\n무엇을 도와드릴까요? <|end"}])"),
       "인사에 답한다 <b> and a < b, <|not a marker", "  안녕하세요! 😊\n\n무엇을 도와드릴까요? <|end"},
      {"later turn of several",
       Json::parse(R"([{"role": "user", "content": "Hi"},
         {"role": "assistant", "content": "Hello! How can I help?"},
         {"role": "user", "content": "Name a colour."},
         {"role": "assistant", "thinking": "Any colour will do.", "content": "Blue."}])"),
       "Any colour will do.", "Blue."},
      {"answer without analysis",
       Json::parse(R"([{"role": "user", "content": "Say yes."},
         {"role": "assistant", "content": "Yes."}])"),
       "", "Yes."},
      // A tool call goes to the commentary channel; Ember runs no tools, so its arguments are
      // answer text (the template writes them with tojson: Python's json.dumps separators).
      {"tool call",
       Json::parse(R"([{"role": "user", "content": "Weather in Seoul?"},
         {"role": "assistant", "thinking": "I should call the weather tool.",
          "tool_calls": [{"type": "function", "function": {"name": "get_weather",
                                                           "arguments": {"city": "Seoul"}}}]}])"),
       "I should call the weather tool.", R"({"city": "Seoul"})"},
  };
  return cases;
}

// The prompt and the full rendering of each case, by Jinja2.
struct RenderedCase {
  std::string prompt, full;
};

}  // namespace

class TestHarmonySplitter : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase() {
    const QString path = test::llamaCppDataDir() + "/models/templates/openai-gpt-oss-120b.jinja";
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly)) {
      const QString why = path + " is missing: run scripts/fetch-llamacpp-vocab.sh or set EMBER_LLAMACPP_DATA";
      if (test::underCi()) QFAIL(qPrintable(why));
      QSKIP(qPrintable(why));
    }
    const std::string source = f.readAll().toStdString();
    std::vector<test::ReferenceCase> cases;
    for (const TemplateCase& c : templateCases()) {
      Json history = c.messages;
      history.erase(history.size() - 1);
      const Json common{{"bos_token", "<|startoftext|>"}, {"eos_token", "<|return|>"}};
      Json prompt = common, full = common;
      prompt["messages"] = history;
      prompt["add_generation_prompt"] = true;
      full["messages"] = c.messages;
      full["add_generation_prompt"] = false;
      cases.push_back({std::string(c.name) + "/prompt", source, prompt});
      cases.push_back({std::string(c.name) + "/full", source, full});
    }
    std::map<std::string, test::ReferenceResult> results;
    EMBER_REQUIRE_JINJA2(cases, &results);
    for (const TemplateCase& c : templateCases()) {
      const auto& prompt = results[std::string(c.name) + "/prompt"];
      const auto& full = results[std::string(c.name) + "/full"];
      QVERIFY2(prompt.ok && full.ok, (prompt.message + full.message).c_str());
      rendered_[c.name] = {prompt.output, full.output};
    }
  }

  // What the template says the model writes, split back into its thinking and its content.
  void splitsWhatTheTemplateRenders_data() {
    QTest::addColumn<int>("index");
    for (size_t i = 0; i < templateCases().size(); ++i)
      QTest::newRow(templateCases()[i].name) << static_cast<int>(i);
  }
  void splitsWhatTheTemplateRenders() {
    QFETCH(int, index);
    const TemplateCase& c = templateCases()[static_cast<size_t>(index)];
    const RenderedCase& r = rendered_.at(c.name);
    QVERIFY2(r.prompt.ends_with("<|start|>assistant"), r.prompt.c_str());
    QVERIFY2(r.full.starts_with(r.prompt), "the full rendering does not extend the prompt");
    std::string written = r.full.substr(r.prompt.size());
    QCOMPARE(harmonyStartAfter(r.prompt), HarmonySplitter::Start::Header);
    // The stream as the engine sees it (the end-of-generation token is not rendered), and with
    // that token spelled out.
    for (std::string_view eog : {"<|return|>", "<|call|>"}) {
      if (written.ends_with(eog)) {
        expectSplit(written, HarmonySplitter::Start::Header, c.reasoning, c.answer);
        written.resize(written.size() - eog.size());
      }
    }
    expectSplit(written, HarmonySplitter::Start::Header, c.reasoning, c.answer);
  }

  // Streams written by hand from the harmony rules.
  void followsTheHarmonyRules_data() {
    QTest::addColumn<QString>("stream");
    QTest::addColumn<QString>("reasoning");
    QTest::addColumn<QString>("answer");
    QTest::newRow("preamble, then final") << "<|channel|>analysis<|message|>Think.<|end|>"
                                             "<|start|>assistant<|channel|>commentary<|message|>One moment.<|end|>"
                                             "<|start|>assistant<|channel|>final<|message|>Done."
                                          << "Think." << "One moment.\n\nDone.";
    QTest::newRow("two analysis messages") << "<|channel|>analysis<|message|>First.<|end|>"
                                              "<|start|>assistant<|channel|>analysis<|message|>Second.<|end|>"
                                              "<|start|>assistant<|channel|>final<|message|>Answer."
                                           << "First.\n\nSecond." << "Answer.";
    QTest::newRow("constrained tool call") << "<|channel|>commentary to=functions.f <|constrain|>json<|message|>{\"a\":1}"
                                           << "" << "{\"a\":1}";
    QTest::newRow("forgotten <|end|>") << "<|channel|>analysis<|message|>Hmm.<|start|>assistant<|channel|>final<|message|>Ok."
                                       << "Hmm." << "Ok.";
    QTest::newRow("empty analysis") << "<|channel|>analysis<|message|><|end|><|start|>assistant<|channel|>final<|message|>A"
                                    << "" << "A";
    QTest::newRow("cut off in analysis") << "<|channel|>analysis<|message|>Still thinking <|en"
                                         << "Still thinking <|en" << "";
    QTest::newRow("cut off in a header") << "<|channel|>analysis<|message|>T<|end|><|start|>assistant<|chan"
                                         << "T" << "";
    QTest::newRow("not harmony at all") << "Plain text with <|channel|> in it." << ""
                                        << "Plain text with <|channel|> in it.";
    QTest::newRow("markers quoted in the answer") << "<|channel|>final<|message|>Write <|message|> literally."
                                                  << "" << "Write <|message|> literally.";
  }
  void followsTheHarmonyRules() {
    QFETCH(QString, stream);
    QFETCH(QString, reasoning);
    QFETCH(QString, answer);
    expectSplit(stream.toStdString(), HarmonySplitter::Start::Header, reasoning.toStdString(),
                answer.toStdString());
  }

  // A prompt that already opened a message (a client prefilling the assistant turn).
  void startsWherePromptLeavesOff() {
    QCOMPARE(harmonyStartAfter("<|start|>assistant"), HarmonySplitter::Start::Header);
    QCOMPARE(harmonyStartAfter("<|start|>assistant<|channel|>analysis<|message|>"),
             HarmonySplitter::Start::AnalysisContent);
    QCOMPARE(harmonyStartAfter("<|start|>assistant<|channel|>final<|message|>"),
             HarmonySplitter::Start::AnswerContent);
    // The channel is the latest message's, not an earlier one's.
    QCOMPARE(harmonyStartAfter("<|channel|>analysis<|message|>x<|end|><|start|>assistant<|channel|>final<|message|>"),
             HarmonySplitter::Start::AnswerContent);
    expectSplit("more thought<|end|><|start|>assistant<|channel|>final<|message|>Answer",
                HarmonySplitter::Start::AnalysisContent, "more thought", "Answer");
  }

  // Token ids through the detokenizer into the splitter the engine makes for this vocabulary.
  void splitsATokenStream() {
    EMBER_REQUIRE_PATH(path, findLlamaCppVocab, QStringLiteral("gpt-2"));
    const auto tokenizer = harmonyTokenizer(path);
    const ReasoningTags tags = reasoningTagsFor(*tokenizer);
    QVERIFY(tags.harmony);
    // <|return|> and <|call|> end generation; <|end|> does not (more messages follow it).
    QVERIFY(tokenizer->isEndOfGeneration(*tokenizer->findToken("<|return|>")));
    QVERIFY(tokenizer->isEndOfGeneration(*tokenizer->findToken("<|call|>")));
    QVERIFY(!tokenizer->isEndOfGeneration(*tokenizer->findToken("<|end|>")));

    const TemplateCase& c = templateCases()[1];  // Korean and emoji: multi-byte tokens
    const RenderedCase& r = rendered_.at(c.name);
    const std::vector<TokenId> prompt = tokenizer->encode(r.prompt, /*parseSpecial=*/true);
    const std::vector<TokenId> written =
        tokenizer->encode(r.full.substr(r.prompt.size()), /*parseSpecial=*/true);
    QCOMPARE(written.front(), *tokenizer->findToken("<|channel|>"));
    QCOMPARE(written.back(), *tokenizer->findToken("<|return|>"));
    auto splitter = makeReasoningSplitter(*tokenizer, prompt);
    QVERIFY(!splitter->inside());
    IncrementalDetokenizer detokenizer(*tokenizer);
    std::vector<std::string> pieces;
    for (TokenId id : written) {
      if (tokenizer->isEndOfGeneration(id)) break;  // the engine stops here
      pieces.push_back(detokenizer.push(id));
    }
    pieces.push_back(detokenizer.flush());
    const Split got = run(*splitter, pieces);
    QCOMPARE(got.reasoning, c.reasoning);
    QCOMPARE(got.answer, c.answer);
  }

 private:
  std::map<std::string, RenderedCase> rendered_;
};

QTEST_GUILESS_MAIN(TestHarmonySplitter)
#include "test_harmony_splitter.moc"
