#include "runtime/engine/prompt_builder.h"

#include <algorithm>
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

// The byte ranges of the rendered prompt that hold message text: the renderer's content spans,
// and for a message the template rebuilt beyond tracking (split(), replace(), ...) the first
// place after the previous message's text where its text (or its trimmed text) appears.
std::vector<Tokenizer::TextRange> userTextRanges(const chat::ChatTemplate::Marked& rendered,
                                                 const Json& messages) {
  std::vector<Tokenizer::TextRange> ranges;
  std::vector<size_t> endOfMessage(messages.size(), std::string::npos);
  for (const chat::ContentSpan& s : rendered.spans) {
    ranges.push_back({s.begin, s.end});
    if (s.source < endOfMessage.size()) endOfMessage[s.source] = s.end;
  }
  size_t cursor = 0;
  std::vector<Tokenizer::TextRange> searched;
  for (size_t i = 0; i < messages.size(); ++i) {
    if (endOfMessage[i] != std::string::npos) {
      cursor = std::max(cursor, endOfMessage[i]);
      continue;
    }
    const Json& m = messages[i];
    if (!m.contains("content") || !m["content"].is_string()) continue;
    std::string text = m["content"].get<std::string>();
    const size_t b = text.find_first_not_of(" \t\r\n");
    if (b == std::string::npos) continue;
    size_t at = rendered.text.find(text, cursor);
    if (at == std::string::npos) {
      text = text.substr(b, text.find_last_not_of(" \t\r\n") - b + 1);
      at = rendered.text.find(text, cursor);
      if (at == std::string::npos) continue;
    }
    searched.push_back({at, at + text.size()});
    cursor = at + text.size();
  }
  if (!searched.empty()) {
    // Keep the renderer's spans where a search result overlaps them; sort the rest in.
    for (const auto& r : searched) {
      bool overlaps = false;
      for (const auto& q : ranges) overlaps = overlaps || (r.begin < q.end && q.begin < r.end);
      if (!overlaps) ranges.push_back(r);
    }
    std::sort(ranges.begin(), ranges.end(),
              [](const auto& a, const auto& b) { return a.begin < b.begin; });
  }
  return ranges;
}

std::vector<TokenId> renderAndEncode(const Json& messages, const GenerationRequest& request,
                                     const chat::ResolvedTemplate& chat,
                                     const Tokenizer& tokenizer, std::string& warning) {
  chat::Conversation conversation;
  conversation.messages = messages;
  conversation.tools = request.tools;
  conversation.addGenerationPrompt = true;
  chat::ChatTemplate::Marked rendered;
  try {
    rendered = chat.renderMarked(std::move(conversation), {}, &warning);
  } catch (const chat::TemplateError& e) {
    throw Error(std::string("the chat template failed: ") + e.what());
  }
  // The template prints BOS itself when the model wants it.
  return tokenizer.encodeRendered(rendered.text, userTextRanges(rendered, messages));
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
  const Json all = checkedMessages(request.messages);
  // The conversation kept when the messages before index `cut` (after the system prompt) are
  // left out; built.renders counts the renders.
  const size_t first = firstTurn(all);
  auto attempt = [&](size_t cut) {
    Json kept = Json::array();
    for (size_t i = 0; i < all.size(); ++i)
      if (i < first || i >= cut) kept.push_back(all[i]);
    std::string warning;
    std::vector<TokenId> tokens = renderAndEncode(kept, request, chat, tokenizer, warning);
    ++built.renders;
    if (!warning.empty()) built.templateWarning = warning;
    return tokens;
  };
  built.tokens = attempt(first);
  if (static_cast<int64_t>(built.tokens.size()) <= maxPromptTokens) return built;
  // Too long: leave out the oldest turns. The kept part must start with a user message after the
  // system prompt (or be the last message alone), so the cuts are the user messages' indices
  // and the last message's. Fewer messages never make a longer prompt, so a binary search over
  // the cuts finds the fewest to leave out in about log2(turns) renders, not one per turn.
  std::vector<size_t> cuts;
  for (size_t i = first + 1; i + 1 < all.size(); ++i)
    if (all[i]["role"] == "user") cuts.push_back(i);
  if (all.size() > first + 1) cuts.push_back(all.size() - 1);
  size_t lo = 0, hi = cuts.size();  // the answer is in [lo, hi); hi: none fits yet
  std::vector<TokenId> best;
  const size_t lastCut = cuts.empty() ? first : cuts.back();
  while (lo < hi) {
    const size_t mid = lo + (hi - lo) / 2;
    std::vector<TokenId> tokens = attempt(cuts[mid]);
    if (static_cast<int64_t>(tokens.size()) <= maxPromptTokens) {
      best = std::move(tokens);
      built.droppedTurns = static_cast<int32_t>(cuts[mid] - first);
      hi = mid;
    } else {
      if (cuts[mid] == lastCut) built.tokens = std::move(tokens);
      lo = mid + 1;
    }
  }
  if (best.empty()) {
    // built.tokens holds the last message alone with the system prompt (the last cut is the
    // last one a failing search tries, or the whole prompt when there is no cut).
    throw Error("the message is " + std::to_string(built.tokens.size()) +
                " tokens with the system prompt; the context leaves room for " +
                std::to_string(maxPromptTokens));
  }
  built.tokens = std::move(best);
  return built;
}

}  // namespace ember
