// The renderer says which bytes of its output came from message content (what the prompt
// builder encodes as plain text). References: byte offsets counted by hand for each template
// below (every literal and message is ASCII, so a character is a byte).
#include <QtTest>

#include "chat/chat_template.h"
#include "chat/template_resolver.h"

using namespace ember::chat;
using Json = nlohmann::ordered_json;

namespace {

struct Span {
  size_t begin, end;
  uint32_t source;
  bool operator==(const Span&) const = default;
};

std::vector<Span> spansOf(const std::string& source, const Json& messages, std::string* text) {
  Conversation c;
  c.messages = messages;
  c.addGenerationPrompt = false;
  const auto marked = renderConversationMarked(ChatTemplate::parse(source), c);
  *text = marked.text;
  std::vector<Span> out;
  for (const auto& s : marked.spans) out.push_back({s.begin, s.end, s.source});
  return out;
}

const Json kTwo = Json::parse(R"([{"role": "user", "content": "  <|im_end|> "},
                                  {"role": "assistant", "content": "ok"}])");

}  // namespace

class ChatContentSpans : public QObject {
  Q_OBJECT

 private slots:
  void concatenationKeepsSpans() {
    std::string text;
    const auto spans = spansOf(
        "{% for m in messages %}{{ '<|im_start|>' + m['role'] + '\\n' + m['content'] + '<|im_end|>' }}"
        "{% endfor %}", kTwo, &text);
    // "<|im_start|>user\n" is 17 bytes; the content (13 bytes) follows; then "<|im_end|>" (10),
    // "<|im_start|>assistant\n" (22) and "ok".
    QCOMPARE(text, std::string("<|im_start|>user\n  <|im_end|> <|im_end|><|im_start|>assistant\nok<|im_end|>"));
    QCOMPARE(spans, (std::vector<Span>{{17, 30, 0}, {62, 64, 1}}));
  }

  void trimTildeAndMacroKeepSpans() {
    std::string text;
    const auto spans = spansOf(
        "{% macro body(c) %}[{{ c | trim }}]{% endmacro %}"
        "{% for m in messages %}{{ m.role ~ ':' ~ body(m.content) }}{% endfor %}", kTwo, &text);
    // "user:[" is 6 bytes, then "<|im_end|>" (10) trimmed of its spaces, "]assistant:[" (12).
    QCOMPARE(text, std::string("user:[<|im_end|>]assistant:[ok]"));
    QCOMPARE(spans, (std::vector<Span>{{6, 16, 0}, {28, 30, 1}}));
  }

  void setBlockStripAndConditionalKeepSpans() {
    std::string text;
    const auto spans = spansOf(
        "{% set first %}{{ messages[0].content.strip() }}{% endset %}"
        "{{ first if first else 'none' }}|{{ messages[1]['content'] | upper }}", kTwo, &text);
    // upper() rebuilds the text: that part is no longer marked (the builder then searches).
    QCOMPARE(text, std::string("<|im_end|>|OK"));
    QCOMPARE(spans, (std::vector<Span>{{0, 10, 0}}));
  }

  void contentPartsAreMarked() {
    std::string text;
    const auto spans = spansOf(
        "{% for p in messages[0].content %}<{{ p.text }}>{% endfor %}",
        Json::parse(R"([{"role": "user", "content": [{"type": "text", "text": "ab"},
                                                     {"type": "text", "text": "c"}]}])"),
        &text);
    QCOMPARE(text, std::string("<ab><c>"));
    QCOMPARE(spans, (std::vector<Span>{{1, 3, 0}, {5, 6, 0}}));
  }

  // The plain render and the marked render print the same text.
  void markedTextEqualsPlainText() {
    const auto t = ChatTemplate::parse("{% for m in messages %}{{ m.content|trim }}\n{% endfor %}");
    Conversation c;
    c.messages = kTwo;
    QCOMPARE(renderConversationMarked(t, c).text, renderConversation(t, c));
  }
};

QTEST_APPLESS_MAIN(ChatContentSpans)
#include "test_chat_content_spans.moc"
