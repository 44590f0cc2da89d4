#pragma once
// Picks the chat template for a model: its own tokenizer.chat_template when this renderer can
// run it, otherwise a built-in template for its family, with a warning saying so and why (the
// engine shows it to the user). Also reads the BOS/EOS token texts templates print.
#include <functional>
#include <string>
#include <string_view>

#include "chat/chat_template.h"

namespace ember::gguf {
class GgufFile;
}

namespace ember::chat {

struct ResolvedTemplate {
  ChatTemplate chatTemplate;
  std::string name;         // "model" for the model's own template, else the built-in's name
  bool isFallback = false;
  std::string warning;      // why the built-in is used; empty when it is not
  std::string bosToken;     // tokenizer.ggml.tokens[bos id], or "" when unknown
  std::string eosToken;     // tokenizer.ggml.tokens[eos id], or "" when unknown
  std::string family;       // the built-in family that suits this model

  // renderConversation with this model's BOS/EOS texts filled in. When the model's own
  // template meets something unsupported (or a render limit) in this conversation only, the
  // conversation is rendered with the built-in family template instead and `warning`, when
  // given, says so. Other failures, such as the template's own raise_exception, propagate.
  std::string render(Conversation conversation, const RenderOptions& options = {},
                     std::string* warning = nullptr) const;
  // The same, saying which output bytes came from message content (renderConversationMarked).
  ChatTemplate::Marked renderMarked(Conversation conversation, const RenderOptions& options = {},
                                    std::string* warning = nullptr) const;
};

ResolvedTemplate resolveChatTemplate(const gguf::GgufFile& file);

// The same decision without a file: `source` is the template text or nullptr when absent;
// `hasToken` says whether the vocabulary holds a token text.
ResolvedTemplate resolveChatTemplate(const std::string* source, std::string_view architecture,
                                     const std::function<bool(std::string_view)>& hasToken,
                                     std::string bosToken, std::string eosToken);

// The built-in family for a model, from its control tokens first and its architecture
// second; `basis` receives a short explanation ("the vocabulary has <start_of_turn>").
std::string chooseBuiltinFamily(std::string_view architecture,
                                const std::function<bool(std::string_view)>& hasToken,
                                std::string* basis);

}  // namespace ember::chat
