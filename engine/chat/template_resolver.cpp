#include "chat/template_resolver.h"

#include <unordered_set>

#include "chat/builtin_templates.h"
#include "gguf/gguf_file.h"

namespace ember::chat {
namespace {

bool startsWith(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

// Renders a one-message conversation: a template that cannot do that is of no use, and an
// unsupported construct that only shows at render time is caught here rather than mid-chat.
// A template that raises on purpose (raise_exception) is working as its authors meant.
std::string probeFailure(const ChatTemplate& chatTemplate, const std::string& bos,
                         const std::string& eos) {
  Conversation probe;
  probe.messages = nlohmann::ordered_json::array(
      {nlohmann::ordered_json{{"role", "user"}, {"content", "Hello"}}});
  probe.bosToken = bos;
  probe.eosToken = eos;
  try {
    renderConversation(chatTemplate, probe);
    return {};
  } catch (const TemplateError& e) {
    if (e.kind() == TemplateErrorKind::Raised) return {};
    return e.what();
  }
}

// A missing or malformed id gives "": templates then print nothing for that token.
std::string tokenText(const gguf::GgufFile& file, const gguf::Value* tokens, const char* idKey) {
  std::optional<int64_t> id;
  try {
    id = file.findInt(idKey);
  } catch (const ember::Error&) {
    return {};
  }
  if (!tokens || !id || *id < 0) return {};
  const gguf::Array& items = tokens->asArray();
  if (static_cast<size_t>(*id) >= items.size() || items.elementType != gguf::ValueType::String)
    return {};
  return std::string(items.stringAt(static_cast<size_t>(*id)));
}

}  // namespace

std::string ResolvedTemplate::render(Conversation conversation, const RenderOptions& options,
                                     std::string* warning) const {
  return renderMarked(std::move(conversation), options, warning).text;
}

ChatTemplate::Marked ResolvedTemplate::renderMarked(Conversation conversation,
                                                    const RenderOptions& options,
                                                    std::string* warning) const {
  conversation.bosToken = bosToken;
  conversation.eosToken = eosToken;
  try {
    return renderConversationMarked(chatTemplate, conversation, options);
  } catch (const TemplateError& e) {
    const bool replaceable =
        e.kind() == TemplateErrorKind::Unsupported || e.kind() == TemplateErrorKind::Limit;
    const BuiltinTemplate* builtin = findBuiltinTemplate(family);
    if (isFallback || !replaceable || !builtin) throw;
    ChatTemplate::Marked text =
        renderConversationMarked(ChatTemplate::parse(builtin->source), conversation, options);
    if (warning)
      *warning = "the model's chat template cannot render this conversation (" +
                 std::string(e.what()) + "); used the built-in '" + family + "' template instead.";
    return text;
  }
}

std::string chooseBuiltinFamily(std::string_view architecture,
                                const std::function<bool(std::string_view)>& hasToken,
                                std::string* basis) {
  struct Marker {
    std::string_view token;
    std::string_view family;
  };
  static constexpr Marker kMarkers[] = {
      {"<|im_start|>", "chatml"},        {"<|start_header_id|>", "llama3"},
      {"<start_of_turn>", "gemma"},      {"<|user|>", "phi3"},
      {"[INST]", "mistral"},
  };
  for (const auto& m : kMarkers) {
    if (!hasToken(m.token)) continue;
    std::string family(m.family);
    if (family == "mistral" && architecture == "llama") family = "llama2";
    if (basis) *basis = "the vocabulary has the control token " + std::string(m.token);
    return family;
  }
  std::string family = "chatml";
  if (startsWith(architecture, "gemma")) family = "gemma";
  else if (startsWith(architecture, "phi3")) family = "phi3";
  else if (architecture == "llama") family = "llama2";
  else if (startsWith(architecture, "mistral")) family = "mistral";
  if (basis)
    *basis = architecture.empty() ? std::string("no family could be recognised")
                                  : "the architecture is '" + std::string(architecture) + "'";
  return family;
}

namespace {

ResolvedTemplate fallbackTemplate(const std::string& reason, std::string_view architecture,
                                  const std::function<bool(std::string_view)>& hasToken,
                                  std::string bosToken, std::string eosToken) {
  std::string basis;
  const std::string family = chooseBuiltinFamily(architecture, hasToken, &basis);
  const BuiltinTemplate* builtin = findBuiltinTemplate(family);
  std::string warning = reason + "; using the built-in '" + family + "' template instead, since " +
                        basis + ".";
  return ResolvedTemplate{ChatTemplate::parse(builtin->source), family, true, std::move(warning),
                          std::move(bosToken), std::move(eosToken), family};
}

}  // namespace

ResolvedTemplate resolveChatTemplate(const std::string* source, std::string_view architecture,
                                     const std::function<bool(std::string_view)>& hasToken,
                                     std::string bosToken, std::string eosToken) {
  if (!source)
    return fallbackTemplate("the model has no tokenizer.chat_template", architecture, hasToken,
                            std::move(bosToken), std::move(eosToken));
  std::string reason;
  try {
    ChatTemplate own = ChatTemplate::parse(*source);
    reason = probeFailure(own, bosToken, eosToken);
    if (reason.empty())
      return ResolvedTemplate{std::move(own), "model", false, {}, std::move(bosToken),
                              std::move(eosToken), chooseBuiltinFamily(architecture, hasToken, nullptr)};
    reason = "the model's chat template cannot render a conversation (" + reason + ")";
  } catch (const TemplateError& e) {
    reason = "the model's chat template cannot be used (" + std::string(e.what()) + ")";
  }
  return fallbackTemplate(reason, architecture, hasToken, std::move(bosToken),
                          std::move(eosToken));
}

ResolvedTemplate resolveChatTemplate(const gguf::GgufFile& file) {
  const gguf::Value* tokens = file.find("tokenizer.ggml.tokens");
  if (tokens && tokens->type != gguf::ValueType::Array) tokens = nullptr;
  std::unordered_set<std::string_view> controlTokens;
  if (tokens) {
    static constexpr std::string_view kWanted[] = {"<|im_start|>", "<|start_header_id|>",
                                                   "<start_of_turn>", "<|user|>", "[INST]"};
    const gguf::Array& items = tokens->asArray();
    for (size_t i = 0; i < items.size() && items.elementType == gguf::ValueType::String; ++i) {
      const std::string_view text = items.stringAt(i);
      for (auto wanted : kWanted)
        if (text == wanted) controlTokens.insert(wanted);
    }
  }
  const auto hasToken = [&](std::string_view t) { return controlTokens.count(t) > 0; };
  std::string architecture;
  try {
    architecture = file.architecture();
  } catch (const ember::Error&) {  // a mistyped general.architecture: recognise by tokens only
  }
  std::string bos = tokenText(file, tokens, "tokenizer.ggml.bos_token_id");
  std::string eos = tokenText(file, tokens, "tokenizer.ggml.eos_token_id");
  const gguf::Value* templateValue = file.find("tokenizer.chat_template");
  if (templateValue && templateValue->type != gguf::ValueType::String)
    return fallbackTemplate("the model's tokenizer.chat_template is not a string", architecture,
                            hasToken, std::move(bos), std::move(eos));
  const std::string* source = templateValue ? &templateValue->asString() : nullptr;
  return resolveChatTemplate(source, architecture, hasToken, std::move(bos), std::move(eos));
}

}  // namespace ember::chat
