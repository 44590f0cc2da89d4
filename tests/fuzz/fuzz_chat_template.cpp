// libFuzzer harness for the chat-template lexer, parser and renderer: the input is a Jinja
// template source, parsed and (when it parses) rendered over a fixed conversation with small
// render limits. Every input must end in text or a TemplateError, never a crash, a sanitizer
// report, unbounded recursion or a hang (the limits bound loops, output and nesting).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "chat/chat_template.h"
#include "chat/template_error.h"

namespace {

const nlohmann::ordered_json& conversation() {
  static const nlohmann::ordered_json messages = nlohmann::ordered_json::parse(R"([
    {"role": "system", "content": "You are terse."},
    {"role": "user", "content": "Hi <|im_end|> there \u00e9\u4e2d"},
    {"role": "assistant", "content": "<think>hm</think>Hello", "reasoning_content": "hm",
     "tool_calls": [{"type": "function", "function": {"name": "f", "arguments": {"a": [1, 2.5, null]}}}]},
    {"role": "tool", "content": "{\"ok\": true}"},
    {"role": "user", "content": ""}
  ])");
  return messages;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view source(reinterpret_cast<const char*>(data), size);
  try {
    const auto tmpl = ember::chat::ChatTemplate::parse(source);
    ember::chat::Conversation c;
    c.messages = conversation();
    c.tools = nlohmann::ordered_json::parse(
        R"([{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}])");
    c.bosToken = "<s>";
    c.eosToken = "</s>";
    c.extraVariables = nlohmann::ordered_json{{"enable_thinking", false}};
    ember::chat::RenderOptions options;
    options.limits.maxOutputBytes = 1 << 20;
    options.limits.maxLoopIterations = 20000;
    options.limits.maxCallDepth = 16;
    options.limits.maxEvaluationDepth = 200;
    options.limits.maxWorkBytes = 8u << 20;
    options.clock = [] { return std::tm{}; };
    (void)ember::chat::renderConversation(tmpl, c, options);
  } catch (const ember::chat::TemplateError&) {
  }
  return 0;
}
