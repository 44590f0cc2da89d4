// Fitting a long conversation into the context window (RELIABILITY case 12): the oldest turns
// are left out (the system prompt kept, the kept part starting with a user message), the count
// is reported (RequestStats.droppedTurns, shown to the user), and the search takes about
// log2(turns) template renders instead of one per dropped turn.
//
// Reference: the straightforward linear search written out here: drop 0, 1, 2 ... turns
// and build each prompt with no limit until one fits; its result must equal the fitted prompt.
#include <QtTest>

#include <cmath>
#include <optional>

#include "chat/builtin_templates.h"
#include "chat/template_resolver.h"
#include "common/test_paths.h"
#include "gguf/gguf_file.h"
#include "runtime/engine/prompt_builder.h"
#include "tokenizer/tokenizer.h"

using namespace ember;
using Json = nlohmann::ordered_json;

class PromptFitting : public QObject {
  Q_OBJECT

  std::unique_ptr<gguf::GgufFile> file_;
  std::unique_ptr<Tokenizer> tok_;
  std::optional<chat::ResolvedTemplate> chat_;

  static Json conversation(int turns) {
    Json m = Json::array({{{"role", "system"}, {"content", "You answer in one word."}}});
    for (int i = 0; i < turns; ++i) {
      m.push_back({{"role", "user"}, {"content", "Question number " + std::to_string(i) + "?"}});
      m.push_back({{"role", "assistant"}, {"content", std::string(i % 7 + 1, 'x')}});
    }
    m.push_back({{"role", "user"}, {"content", "And the last one?"}});
    return m;
  }

  BuiltPrompt build(const Json& messages, int32_t limit) {
    GenerationRequest r;
    r.messages = messages;
    return buildPrompt(r, *chat_, *tok_, limit);
  }

 private slots:
  void initTestCase() {
    EMBER_REQUIRE_MODEL(path, "SmolLM2-135M-Instruct.Q4_1.gguf");
    file_ = gguf::GgufFile::open(path.toStdString());
    tok_ = Tokenizer::fromGguf(*file_);
    chat_ = chat::resolveChatTemplate(*file_);
  }

  void fitsLikeTheLinearSearchInLogRenders() {
    const int turns = 300;
    const Json all = conversation(turns);
    for (int32_t limit : {3000, 1000, 200, 60}) {
      const BuiltPrompt fitted = build(all, limit);
      // Linear reference: after the system prompt, leave out whole user+assistant turns.
      int32_t expectedDropped = -1;
      std::vector<TokenId> expected;
      for (int dropped = 0; dropped <= 2 * turns; dropped += 2) {
        Json kept = Json::array({all[0]});
        for (size_t i = 1 + dropped; i < all.size(); ++i) kept.push_back(all[i]);
        auto p = build(kept, 1 << 30);
        if (static_cast<int32_t>(p.tokens.size()) <= limit) {
          expectedDropped = dropped;
          expected = p.tokens;
          break;
        }
      }
      QVERIFY(expectedDropped >= 0);
      QCOMPARE(fitted.droppedTurns, expectedDropped);
      QCOMPARE(fitted.tokens, expected);
      QVERIFY(static_cast<int32_t>(fitted.tokens.size()) <= limit);
      // One render of the whole chat, then a binary search over the 301 user messages.
      const int bound = 1 + static_cast<int>(std::ceil(std::log2(turns + 1))) + 1;
      QVERIFY2(fitted.renders <= bound,
               qPrintable(QStringLiteral("%1 renders for limit %2").arg(fitted.renders).arg(limit)));
    }
  }

  void fitsWithoutDroppingWhenShort() {
    const BuiltPrompt p = build(conversation(3), 4096);
    QCOMPARE(p.droppedTurns, 0);
    QCOMPARE(p.renders, 1);
  }

  // RELIABILITY case 9: a model template that fails for one conversation only (a range past
  // the sandbox limit in a branch only this chat takes) falls back to the built-in ChatML
  // template, and the prompt says so (the engine copies it into RequestStats.templateWarning, shown in the
  // answer's stats and as a notice). Reference: the built-in template rendered directly.
  void perConversationFallbackIsReported() {
    const std::string source =
        "{% for m in messages %}{% if m.content == 'odd' %}{% for i in range(2000000) %}{% endfor %}"
        "{% else %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{% endif %}{% endfor %}"
        "<|im_start|>assistant\n";
    const auto resolved = chat::resolveChatTemplate(
        &source, "llama", [&](std::string_view t) { return tok_->findToken(t).has_value(); }, "", "");
    QVERIFY(!resolved.isFallback);
    GenerationRequest r;
    r.messages = Json::parse(R"([{"role": "user", "content": "fine"}])");
    QVERIFY(buildPrompt(r, resolved, *tok_, 4096).templateWarning.empty());
    r.messages = Json::parse(R"([{"role": "user", "content": "odd"}])");
    const BuiltPrompt p = buildPrompt(r, resolved, *tok_, 4096);
    QVERIFY2(p.templateWarning.find("MAX_RANGE") != std::string::npos, p.templateWarning.c_str());
    QVERIFY2(p.templateWarning.find("'chatml'") != std::string::npos, p.templateWarning.c_str());
    const auto builtin = chat::ChatTemplate::parse(chat::findBuiltinTemplate("chatml")->source);
    chat::Conversation c;
    c.messages = r.messages;
    const std::string text = chat::renderConversation(builtin, c);
    const size_t at = text.find("odd");  // once: the message
    QCOMPARE(p.tokens, tok_->encodeRendered(text, std::vector<Tokenizer::TextRange>{{at, at + 3}}));
  }

  void refusesWhenTheLastMessageAloneIsTooLong() {
    Json m = conversation(2);
    m.back()["content"] = std::string(4000, 'y');
    try {
      (void)build(m, 100);
      QFAIL("a prompt that cannot fit was accepted");
    } catch (const Error& e) {
      QVERIFY2(std::string(e.what()).find("the context leaves room for 100") != std::string::npos,
               e.what());
    }
  }
};

QTEST_APPLESS_MAIN(PromptFitting)
#include "test_prompt_fitting.moc"
