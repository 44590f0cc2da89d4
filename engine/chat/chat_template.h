#pragma once
// A chat template (the Jinja source in a model's tokenizer.chat_template), parsed once and
// rendered many times. Rendering is byte-identical to Python's Jinja2 as Hugging Face
// transformers renders chat templates (ImmutableSandboxedEnvironment, trim_blocks,
// lstrip_blocks, loop controls, raise_exception, strftime_now, tojson = json.dumps with
// ensure_ascii=False), for the subset of Jinja that real chat templates use.
//
// Variables are JSON objects. nlohmann::ordered_json keeps object keys in the order they were
// written, as Python's dicts do; that order shows wherever a template prints a dict (tojson of
// a tool definition, for example), so callers should build ordered_json.
#include <memory>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "chat/content_spans.h"
#include "chat/render_options.h"
#include "chat/template_error.h"

namespace ember::chat {

struct TemplateAst;

class ChatTemplate {
 public:
  // Throws TemplateError (Syntax / Unsupported / Limit) with the line and column at fault.
  static ChatTemplate parse(std::string_view source);

  // `variables` must be a JSON object; its keys become the template's variables. Throws
  // TemplateError: kind Raised when the template called raise_exception (message() is the
  // template's own text), other kinds for failures, all with line and column.
  std::string render(const nlohmann::ordered_json& variables,
                     const RenderOptions& options = {}) const;
  // Convenience for callers holding nlohmann::json (its object keys are sorted).
  std::string render(const nlohmann::json& variables, const RenderOptions& options = {}) const;

  // Rendered text and which of its bytes came from message content.
  struct Marked {
    std::string text;
    ContentSpans spans;
  };
  // Renders with the strings of `markedMessages` (a JSON array of messages, the `messages`
  // variable) marked: each message's content (a string, or the `text` of its content parts)
  // and its reasoning_content. The result's spans say where those bytes landed in the output,
  // whatever the template concatenated, trimmed or passed through macros and blocks on the
  // way; text it rebuilt otherwise (upper(), replace(), split()) is no longer marked.
  Marked renderMarked(const nlohmann::ordered_json& variables,
                      const RenderOptions& options = {}) const;

  const std::string& source() const { return *source_; }

 private:
  ChatTemplate() = default;
  std::shared_ptr<const TemplateAst> ast_;
  std::shared_ptr<const std::string> source_;
};

// What a chat front end passes for one prompt. `messages` is a JSON array of
// {"role": ..., "content": ...} objects plus any fields a template reads (tool_calls,
// reasoning_content, ...). `tools`, when not null, becomes the `tools` variable; when null the
// variable is left undefined. `extraVariables` (an object, may be null) adds more variables
// such as enable_thinking.
struct Conversation {
  nlohmann::ordered_json messages = nlohmann::ordered_json::array();
  nlohmann::ordered_json tools;  // null: no tools
  bool addGenerationPrompt = true;
  std::string bosToken;
  std::string eosToken;
  nlohmann::ordered_json extraVariables;
};

// The variables object renderConversation passes: messages, add_generation_prompt, bos_token,
// eos_token, tools (when given), then extraVariables.
nlohmann::ordered_json conversationVariables(const Conversation& conversation);
std::string renderConversation(const ChatTemplate& chatTemplate, const Conversation& conversation,
                               const RenderOptions& options = {});
// The same with each message's text marked (ChatTemplate::renderMarked); span sources are
// message indices.
ChatTemplate::Marked renderConversationMarked(const ChatTemplate& chatTemplate,
                                              const Conversation& conversation,
                                              const RenderOptions& options = {});

}  // namespace ember::chat
