#include "chat/chat_template.h"

#include "chat/ast.h"
#include "chat/interpreter.h"
#include "chat/json_value.h"
#include "chat/parser.h"

namespace ember::chat {

ChatTemplate ChatTemplate::parse(std::string_view source) {
  ChatTemplate t;
  t.ast_ = std::make_shared<const TemplateAst>(parseTemplate(source));
  t.source_ = std::make_shared<const std::string>(source);
  return t;
}

std::string ChatTemplate::render(const nlohmann::ordered_json& variables,
                                 const RenderOptions& options) const {
  if (!variables.is_object())
    throw TemplateError(TemplateErrorKind::Runtime, "template variables must be a JSON object");
  const Value values = valueFromJson(variables);
  Interpreter interpreter(options);
  return interpreter.render(*ast_, values.asDict()).text;
}

namespace {

Value markedText(const Value& v, uint32_t source) {
  if (!v.isString() || v.asString().empty()) return v;
  const size_t n = v.asString().size();
  return Value::markedString(v.asString(), {{0, n, source}});
}

// A message dict with its content (string or text parts) and reasoning_content marked.
Value markedMessage(const Value& message, uint32_t source) {
  if (!message.isDict()) return message;
  Dict out;
  for (const auto& [key, value] : message.asDict().entries) {
    const bool isKey = key.isString();
    if (isKey && key.asString() == "reasoning_content") {
      out.entries.emplace_back(key, markedText(value, source));
    } else if (isKey && key.asString() == "content" && value.isList()) {
      std::vector<Value> parts;
      for (const Value& part : value.items()) {
        if (!part.isDict()) {
          parts.push_back(part);
          continue;
        }
        Dict p;
        for (const auto& [k, v] : part.asDict().entries)
          p.entries.emplace_back(k, k.isString() && k.asString() == "text" ? markedText(v, source) : v);
        parts.emplace_back(std::move(p));
      }
      out.entries.emplace_back(key, value.isTuple() ? Value::makeTuple(std::move(parts))
                                                    : Value::makeList(std::move(parts)));
    } else if (isKey && key.asString() == "content") {
      out.entries.emplace_back(key, markedText(value, source));
    } else {
      out.entries.emplace_back(key, value);
    }
  }
  return Value(std::move(out));
}

}  // namespace

ChatTemplate::Marked ChatTemplate::renderMarked(const nlohmann::ordered_json& variables,
                                                const RenderOptions& options) const {
  if (!variables.is_object())
    throw TemplateError(TemplateErrorKind::Runtime, "template variables must be a JSON object");
  const Value values = valueFromJson(variables);
  Dict marked;
  for (const auto& [key, value] : values.asDict().entries) {
    if (key.isString() && key.asString() == "messages" && value.isList()) {
      std::vector<Value> messages;
      for (size_t i = 0; i < value.items().size(); ++i)
        messages.push_back(markedMessage(value.items()[i], static_cast<uint32_t>(i)));
      marked.entries.emplace_back(key, Value::makeList(std::move(messages)));
    } else {
      marked.entries.emplace_back(key, value);
    }
  }
  Interpreter interpreter(options);
  MarkedText out = interpreter.render(*ast_, marked);
  return {std::move(out.text), std::move(out.spans)};
}

std::string ChatTemplate::render(const nlohmann::json& variables,
                                 const RenderOptions& options) const {
  return render(nlohmann::ordered_json::parse(variables.dump()), options);
}

nlohmann::ordered_json conversationVariables(const Conversation& conversation) {
  nlohmann::ordered_json variables = nlohmann::ordered_json::object();
  variables["messages"] = conversation.messages;
  variables["add_generation_prompt"] = conversation.addGenerationPrompt;
  variables["bos_token"] = conversation.bosToken;
  variables["eos_token"] = conversation.eosToken;
  if (!conversation.tools.is_null()) variables["tools"] = conversation.tools;
  if (conversation.extraVariables.is_object())
    for (const auto& [key, value] : conversation.extraVariables.items()) variables[key] = value;
  return variables;
}

std::string renderConversation(const ChatTemplate& chatTemplate, const Conversation& conversation,
                               const RenderOptions& options) {
  return chatTemplate.render(conversationVariables(conversation), options);
}

ChatTemplate::Marked renderConversationMarked(const ChatTemplate& chatTemplate,
                                              const Conversation& conversation,
                                              const RenderOptions& options) {
  return chatTemplate.renderMarked(conversationVariables(conversation), options);
}

}  // namespace ember::chat
