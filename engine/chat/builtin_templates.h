#pragma once
// Built-in chat templates for the common model families, used when a model carries no
// tokenizer.chat_template or one this renderer cannot run. They are ordinary Jinja sources
// rendered by the same renderer (and checked against Python's Jinja2 like any template).
#include <span>
#include <string_view>

namespace ember::chat {

struct BuiltinTemplate {
  std::string_view name;         // chatml, llama2, llama3, gemma, mistral, phi3
  std::string_view description;  // the turn format, in words
  std::string_view source;       // Jinja
};

std::span<const BuiltinTemplate> builtinTemplates();
const BuiltinTemplate* findBuiltinTemplate(std::string_view name);  // nullptr when unknown

}  // namespace ember::chat
