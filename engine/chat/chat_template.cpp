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
  return interpreter.render(*ast_, values.asDict());
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

}  // namespace ember::chat
