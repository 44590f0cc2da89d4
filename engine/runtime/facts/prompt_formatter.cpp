#include "ember/prompt_formatter.h"

#include <climits>

#include "chat/template_resolver.h"
#include "gguf/gguf_file.h"
#include "runtime/engine/prompt_builder.h"
#include "tokenizer/tokenizer.h"

namespace ember {

struct PromptFormatter::Impl {
  std::unique_ptr<gguf::GgufFile> file;  // kept mapped for as long as what was read from it
  std::unique_ptr<Tokenizer> tokenizer;
  chat::ResolvedTemplate chatTemplate;

  explicit Impl(std::unique_ptr<gguf::GgufFile> opened)
      : file(std::move(opened)),
        tokenizer(Tokenizer::fromGguf(*file)),
        chatTemplate(chat::resolveChatTemplate(*file)) {}
};

PromptFormatter::PromptFormatter(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
PromptFormatter::~PromptFormatter() = default;

std::unique_ptr<PromptFormatter> PromptFormatter::open(const std::string& modelPath) {
  auto impl = std::make_unique<Impl>(gguf::GgufFile::open(modelPath));
  return std::unique_ptr<PromptFormatter>(new PromptFormatter(std::move(impl)));
}

std::vector<int32_t> PromptFormatter::encodeText(const std::string& text) const {
  return impl_->tokenizer->encode(text, false);
}

std::vector<int32_t> PromptFormatter::promptTokens(const GenerationRequest& request) const {
  return buildPrompt(request, impl_->chatTemplate, *impl_->tokenizer, INT32_MAX).tokens;
}

}  // namespace ember
