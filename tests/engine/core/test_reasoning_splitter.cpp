// The reasoning section of a chat answer, told apart from the answer: the splitter over scripted
// streams cut at every byte and every character (expected pieces worked out by hand from the
// texts), over token ids of a real vocabulary streamed through the detokenizer (Qwen 3.5's, from
// llama.cpp's models/ folder; that vocabulary-only file lacks the <think> tokens, so each tag
// arrives as several tokens), and the prompt check over real
// chat templates rendered by Ember (DeepSeek-R1's generation prompt ends with "<think>\n";
// Qwen3's and Gemma 4's with thinking off close an empty section), and Gemma 4's thought channel
// over its own vocabulary.
#include <QtTest>

#include "chat/chat_template.h"
#include "common/test_paths.h"
#include "engine/tokenizer/bpe_test_cases.h"
#include "runtime/engine/reasoning_splitter.h"
#include "tokenizer/utf8.h"

using namespace ember;

namespace {

struct Split {
  std::string reasoning, answer;
  int switches = 0;  // changes between reasoning and answer pieces
};

// Feeds `chunks` in order and collects what comes out.
Split run(ReasoningSplitter& splitter, const std::vector<std::string>& chunks) {
  Split out;
  std::optional<bool> last;
  const auto take = [&](const std::vector<ReasoningSplitter::Piece>& pieces) {
    for (const auto& p : pieces) {
      QVERIFY(!p.text.empty());
      (p.reasoning ? out.reasoning : out.answer) += p.text;
      if (last && *last != p.reasoning) ++out.switches;
      last = p.reasoning;
    }
  };
  for (const auto& c : chunks) take(splitter.push(c));
  take(splitter.flush());
  return out;
}

std::vector<std::string> bytesOf(std::string_view text) {
  std::vector<std::string> out;
  for (char c : text) out.emplace_back(1, c);
  return out;
}

std::vector<std::string> charactersOf(std::string_view text) {
  std::vector<std::string> out;
  for (size_t i = 0; i < text.size();) {
    const size_t n = std::max<size_t>(1, utf8::sequenceLength(static_cast<uint8_t>(text[i])));
    out.emplace_back(text.substr(i, n));
    i += n;
  }
  return out;
}

// Every way of cutting `text` in two, plus one piece per byte and one piece per character.
std::vector<std::vector<std::string>> cuttings(std::string_view text) {
  std::vector<std::vector<std::string>> all = {{std::string(text)}, bytesOf(text), charactersOf(text)};
  for (size_t i = 1; i < text.size(); ++i) {
    all.push_back({std::string(text.substr(0, i)), std::string(text.substr(i))});
  }
  return all;
}

}  // namespace

class TestReasoningSplitter : public QObject {
  Q_OBJECT

 private slots:
  void splitsScriptedStreams_data() {
    QTest::addColumn<QString>("stream");
    QTest::addColumn<bool>("startsInside");
    QTest::addColumn<QString>("reasoning");
    QTest::addColumn<QString>("answer");
    QTest::newRow("qwen3 style") << "<think>\nThe user greets me.\nReply briefly.\n</think>\n\nHello!"
                                 << false << "The user greets me.\nReply briefly.\n" << "Hello!";
    QTest::newRow("whitespace before tag") << "\n<think>x</think>y" << false << "x" << "y";
    QTest::newRow("no section") << "Hello <think> is an HTML-like tag." << false << ""
                                << "Hello <think> is an HTML-like tag.";
    QTest::newRow("tag later is text") << "Use </think> and <think>." << false << ""
                                       << "Use </think> and <think>.";
    QTest::newRow("prompt opened it") << "Let me see.\n</think>\n\n4" << true << "Let me see.\n"
                                      << "4";
    QTest::newRow("unfinished section") << "<think>still thinking</thi" << false
                                        << "still thinking</thi" << "";
    QTest::newRow("empty section") << "<think>\n\n</think>\n\nAnswer" << false << "" << "Answer";
    QTest::newRow("partial open tag only") << "<thin" << false << "" << "<thin";
    QTest::newRow("utf-8") << "<think>생각 🤔 중…</think>답: ½" << false << "생각 🤔 중…"
                           << "답: ½";
    QTest::newRow("second section is answer") << "<think>a</think>b<think>c</think>" << false
                                              << "a" << "b<think>c</think>";
  }
  void splitsScriptedStreams() {
    QFETCH(QString, stream);
    QFETCH(bool, startsInside);
    QFETCH(QString, reasoning);
    QFETCH(QString, answer);
    const std::string text = stream.toStdString();
    for (const auto& chunks : cuttings(text)) {
      TagSplitter splitter("<think>", "</think>", startsInside);
      const Split got = run(splitter, chunks);
      QCOMPARE(QString::fromStdString(got.reasoning), reasoning);
      QCOMPARE(QString::fromStdString(got.answer), answer);
      QVERIFY(got.switches <= 1);
    }
  }

  // Character-wise input gives character-wise-valid pieces: a piece never ends inside a
  // character.
  void piecesStayValidUtf8() {
    const std::string text = "<think>한국어 생각</think>답변 🦙";
    TagSplitter splitter("<think>", "</think>", false);
    for (const auto& c : charactersOf(text)) {
      for (const auto& p : splitter.push(c)) QVERIFY(utf8::isValid(p.text));
    }
  }

  // Token ids of a real vocabulary, streamed one at a time through the detokenizer.
  void splitsARealTokenStream() {
    EMBER_REQUIRE_PATH(path, findLlamaCppVocab, QStringLiteral("qwen35"));
    const Tokenizer& tokenizer = test::cachedTokenizer(path);
    const std::string text = "<think>\n2 + 2 is 4.\n</think>\n\nThe answer is 4.";
    const std::vector<TokenId> ids = tokenizer.encode(text, /*parseSpecial=*/true);
    QVERIFY(ids.size() > 10);
    auto splitter = makeReasoningSplitter(tokenizer, tokenizer.encode("<|im_start|>assistant\n", true));
    QVERIFY(!splitter->inside());
    IncrementalDetokenizer detokenizer(tokenizer);
    std::vector<std::string> pieces;
    for (TokenId id : ids) pieces.push_back(detokenizer.push(id));
    pieces.push_back(detokenizer.flush());
    const Split got = run(*splitter, pieces);
    QCOMPARE(got.reasoning, std::string("2 + 2 is 4.\n"));
    QCOMPARE(got.answer, std::string("The answer is 4."));
  }

  // Gemma 4's thought channel, whose tags are user-defined tokens of its vocabulary (llama.cpp's
  // models/ggml-vocab-gemma-4.gguf), streamed through the detokenizer.
  void splitsGemma4ThoughtChannel() {
    EMBER_REQUIRE_PATH(path, findLlamaCppVocab, QStringLiteral("gemma-4"));
    const Tokenizer& tokenizer = test::cachedTokenizer(path);
    const ReasoningTags tags = reasoningTagsFor(tokenizer);
    QCOMPARE(tags.open, std::string("<|channel>thought"));
    QCOMPARE(tags.close, std::string("<channel|>"));
    const std::string text = "<|channel>thought\nThe user wants a sum.<channel|>It is 4.";
    const std::vector<TokenId> ids = tokenizer.encode(text, /*parseSpecial=*/true);
    QCOMPARE(ids.front(), *tokenizer.findToken("<|channel>"));
    auto splitter = makeReasoningSplitter(tokenizer, tokenizer.encode("<|turn>model\n", true));
    QVERIFY(!splitter->inside());
    IncrementalDetokenizer detokenizer(tokenizer);
    std::vector<std::string> pieces;
    for (TokenId id : ids) pieces.push_back(detokenizer.push(id));
    pieces.push_back(detokenizer.flush());
    const Split got = run(*splitter, pieces);
    QCOMPARE(got.reasoning, std::string("The user wants a sum."));
    QCOMPARE(got.answer, std::string("It is 4."));
  }

  // The prompt check on generation prompts rendered from real templates.
  void detectsAPromptThatOpensTheSection_data() {
    QTest::addColumn<QString>("templateFile");
    QTest::addColumn<bool>("enableThinking");
    QTest::addColumn<bool>("inside");
    QTest::newRow("deepseek-r1") << "deepseek-ai-DeepSeek-R1-Distill-Qwen-32B.jinja" << true << true;
    QTest::newRow("qwen3 thinking") << "Qwen-Qwen3-0.6B.jinja" << true << false;
    QTest::newRow("qwen3 no thinking") << "Qwen-Qwen3-0.6B.jinja" << false << false;
    QTest::newRow("smollm3") << "HuggingFaceTB-SmolLM3-3B.jinja" << true << false;
    QTest::newRow("gemma4 thinking") << "google-gemma-4-31B-it.jinja" << true << false;
    QTest::newRow("gemma4 no thinking") << "google-gemma-4-31B-it.jinja" << false << false;
  }
  void detectsAPromptThatOpensTheSection() {
    QFETCH(QString, templateFile);
    QFETCH(bool, enableThinking);
    QFETCH(bool, inside);
    EMBER_REQUIRE_TESTDATA(path, QStringLiteral("chat-templates/") + templateFile);
    QFile f(path);
    QVERIFY(f.open(QIODevice::ReadOnly));
    const auto tmpl = chat::ChatTemplate::parse(f.readAll().toStdString());
    chat::Conversation conversation;
    conversation.messages = nlohmann::ordered_json::array(
        {{{"role", "user"}, {"content", "What is 2 + 2?"}}});
    conversation.extraVariables = {{"enable_thinking", enableThinking}};
    const std::string prompt = chat::renderConversation(tmpl, conversation);
    QCOMPARE(promptOpensReasoning(prompt, "<think>"), inside);
    QCOMPARE(promptOpensReasoning(prompt, "<|channel>thought"), false);
  }
};

QTEST_APPLESS_MAIN(TestReasoningSplitter)
#include "test_reasoning_splitter.moc"
