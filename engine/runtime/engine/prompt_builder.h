#pragma once
// From a request to prompt tokens: renders chat messages with the model's template (user text
// kept plain, template markers as control tokens), or takes a raw prompt, and fits the result
// into the context window by leaving out the oldest turns (the system prompt is kept).
#include <cstdint>
#include <string>
#include <vector>

#include "chat/template_resolver.h"
#include "ember/request.h"
#include "tokenizer/tokenizer.h"

namespace ember {

struct BuiltPrompt {
  std::vector<TokenId> tokens;
  int32_t droppedTurns = 0;  // messages left out, oldest first
  // Set when the model's own template could not render this conversation and the built-in one
  // was used: why (the user is shown this).
  std::string templateWarning;
  int32_t renders = 0;  // template renders it took (fitting a long chat: about log2(turns))
};

// Throws ember::Error with a message for the user: no messages, an empty last message, a
// message without a role or with non-text content, a template error, or a prompt that does not
// fit even with every older turn left out.
BuiltPrompt buildPrompt(const GenerationRequest& request, const chat::ResolvedTemplate& chat,
                        const Tokenizer& tokenizer, int32_t maxPromptTokens);

}  // namespace ember
