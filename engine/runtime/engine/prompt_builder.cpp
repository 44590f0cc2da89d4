#include "runtime/engine/prompt_builder.h"

#include <string>

#include "chat/template_error.h"
#include "ember/error.h"
#include "tokenizer/utf8.h"

namespace ember {
namespace {

using Json = nlohmann::ordered_json;

bool isBlank(const std::string& s) {
  return s.find_first_not_of(" \t\r\n") == std::string::npos;
}

// Checks the messages and repairs broken UTF-8 in their text (so byte offsets stay valid).
Json checkedMessages(const Json& messages) {
  if (!messages.is_array() || messages.empty()) throw Error("the conversation has no messages");
  Json out = Json::array();
  for (size_t i = 0; i < messages.size(); ++i) {
    Json m = messages[i];
    const std::string where = "message " + std::to_string(i + 1);
    if (!m.is_object()) throw Error(where + " is not an object");
    if (!m.contains("role") || !m["role"].is_string()) throw Error(where + " has no role");
    if (m.contains("content") && m["content"].is_string()) {
      m["content"] = utf8::toValid(m["content"].get<std::string>());
    } else if (m.contains("content") && !m["content"].is_null()) {
      throw Error(where + " has content that is not text");
    }
    out.push_back(std::move(m));
  }
  const Json& last = out.back();
  if (last["role"] == "user" &&
      (!last.contains("content") || !last["content"].is_string() ||
       isBlank(last["content"].get<std::string>())))
    throw Error("the message is empty");
  return out;
}

// Where each message's text landed in the rendered prompt, found in order. A template that
// rewrites the text (beyond trimming) leaves that message unmarked.
std::vector<Tokenizer::TextRange> userTextRanges(const std::string& rendered, const Json& messages) {
  std::vector<Tokenizer::TextRange> ranges;
  size_t cursor = 0;
  for (const Json& m : messages) {
    if (!m.contains("content") || !m["content"].is_string()) continue;
    std::string text = m["content"].get<std::string>();
    size_t at = rendered.find(text, cursor);
    if (at == std::string::npos) {
      const size_t b = text.find_first_not_of(" \t\r\n");
      const size_t e = text.find_last_not_of(" \t\r\n");
      if (b == std::string::npos) continue;
      text = text.substr(b, e - b + 1);
      at = rendered.find(text, cursor);
      if (at == std::string::npos) continue;
    }
    if (!text.empty()) ranges.push_back({at, at + text.size()});
    cursor = at + text.size();
  }
  return ranges;
}

std::vector<TokenId> renderAndEncode(const Json& messages, const GenerationRequest& request,
                                     const chat::ResolvedTemplate& chat,
                                     const Tokenizer& tokenizer) {
  chat::Conversation conversation;
  conversation.messages = messages;
  conversation.tools = request.tools;
  conversation.addGenerationPrompt = true;
  std::string rendered;
  try {
    rendered = chat.render(std::move(conversation));
  } catch (const chat::TemplateError& e) {
    throw Error(std::string("the chat template failed: ") + e.what());
  }
  // The template prints BOS itself when the model wants it.
  return tokenizer.encodeRendered(rendered, userTextRanges(rendered, messages));
}

void checkFits(size_t tokens, int32_t maxPromptTokens) {
  if (static_cast<int64_t>(tokens) > maxPromptTokens)
    throw Error("the prompt is " + std::to_string(tokens) + " tokens; the context leaves room for " +
                std::to_string(maxPromptTokens));
}

// Index of the first message that is not a system message.
size_t firstTurn(const Json& messages) {
  size_t i = 0;
  while (i < messages.size() && messages[i]["role"] == "system") ++i;
  return i;
}

}  // namespace

BuiltPrompt buildPrompt(const GenerationRequest& request, const chat::ResolvedTemplate& chat,
                        const Tokenizer& tokenizer, int32_t maxPromptTokens) {
  BuiltPrompt built;
  if (request.promptTokens) {
    built.tokens = *request.promptTokens;
    if (built.tokens.empty()) throw Error("the prompt is empty");
    for (TokenId id : built.tokens)
      if (id < 0 || static_cast<size_t>(id) >= tokenizer.vocabSize())
        throw Error("prompt token id " + std::to_string(id) + " is outside the vocabulary");
    checkFits(built.tokens.size(), maxPromptTokens);
    return built;
  }
  if (request.prompt) {
    if (isBlank(*request.prompt)) throw Error("the prompt is empty");
    built.tokens = tokenizer.encode(*request.prompt, false, tokenizer.special().addBos);
    checkFits(built.tokens.size(), maxPromptTokens);
    return built;
  }
  Json messages = checkedMessages(request.messages);
  for (;;) {
    built.tokens = renderAndEncode(messages, request, chat, tokenizer);
    if (static_cast<int64_t>(built.tokens.size()) <= maxPromptTokens) return built;
    // Leave out the oldest turn, and then whatever precedes the next user message, so the
    // conversation still starts with the user after the system prompt.
    const size_t first = firstTurn(messages);
    if (first + 1 >= messages.size())
      throw Error("the message is " + std::to_string(built.tokens.size()) +
                  " tokens with the system prompt; the context leaves room for " +
                  std::to_string(maxPromptTokens));
    messages.erase(messages.begin() + static_cast<ptrdiff_t>(first));
    ++built.droppedTurns;
    while (firstTurn(messages) + 1 < messages.size() && messages[firstTurn(messages)]["role"] != "user") {
      messages.erase(messages.begin() + static_cast<ptrdiff_t>(firstTurn(messages)));
      ++built.droppedTurns;
    }
  }
}

}  // namespace ember
