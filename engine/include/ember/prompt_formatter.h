#pragma once
// The prompt side of a model file without its weights: its tokenizer and chat template, to count
// and build prompts exactly as Engine::addRequest does (benchmarks replaying chats, tools).
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "ember/request.h"

namespace ember {

class PromptFormatter {
 public:
  // Reads the vocabulary and the chat template of a GGUF file; throws ember::Error.
  static std::unique_ptr<PromptFormatter> open(const std::string& modelPath);
  ~PromptFormatter();

  // The text's tokens as plain text (no special-token parsing, no BOS).
  std::vector<int32_t> encodeText(const std::string& text) const;
  // The request's prompt tokens as Engine::addRequest builds them (template, tokenizer), with no
  // context limit: nothing is left out. Throws ember::Error as addRequest would.
  std::vector<int32_t> promptTokens(const GenerationRequest& request) const;

 private:
  struct Impl;
  explicit PromptFormatter(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace ember
