#include "chat/builtin_templates.h"

namespace ember::chat {
namespace {

// Every template reads message content through this macro: a string as is, a list of
// content parts as the concatenation of its text parts, anything else as nothing.
#define EMBER_CONTENT_MACRO                                                        \
  "{%- macro text(content) -%}"                                                    \
  "{%- if content is string -%}{{- content -}}"                                    \
  "{%- elif content is iterable and content is not mapping -%}"                    \
  "{%- for part in content if part is mapping and part.get('type') == 'text' -%}" \
  "{{- part.get('text', '') -}}{%- endfor -%}"                                     \
  "{%- endif -%}"                                                                  \
  "{%- endmacro -%}\n"

constexpr std::string_view kChatMl = EMBER_CONTENT_MACRO R"JINJA(
{%- for message in messages -%}
{{- '<|im_start|>' + message['role'] + '\n' + text(message['content']) + '<|im_end|>\n' -}}
{%- endfor -%}
{%- if add_generation_prompt -%}{{- '<|im_start|>assistant\n' -}}{%- endif -%}
)JINJA";

constexpr std::string_view kLlama2 = EMBER_CONTENT_MACRO R"JINJA(
{%- set ns = namespace(system='') -%}
{%- if messages and messages[0]['role'] == 'system' -%}
  {%- set ns.system = text(messages[0]['content']) | trim -%}
  {%- set messages = messages[1:] -%}
{%- endif -%}
{%- for message in messages -%}
  {%- if message['role'] == 'user' -%}
    {{- bos_token + '[INST] ' -}}
    {%- if ns.system -%}{{- '<<SYS>>\n' + ns.system + '\n<</SYS>>\n\n' -}}{%- set ns.system = '' -%}{%- endif -%}
    {{- text(message['content']) | trim + ' [/INST]' -}}
  {%- elif message['role'] == 'assistant' -%}
    {{- ' ' + text(message['content']) | trim + ' ' + eos_token -}}
  {%- endif -%}
{%- endfor -%}
)JINJA";

constexpr std::string_view kLlama3 = EMBER_CONTENT_MACRO R"JINJA(
{{- bos_token -}}
{%- for message in messages -%}
{{- '<|start_header_id|>' + message['role'] + '<|end_header_id|>\n\n' + text(message['content']) | trim + '<|eot_id|>' -}}
{%- endfor -%}
{%- if add_generation_prompt -%}{{- '<|start_header_id|>assistant<|end_header_id|>\n\n' -}}{%- endif -%}
)JINJA";

constexpr std::string_view kGemma = EMBER_CONTENT_MACRO R"JINJA(
{{- bos_token -}}
{%- set ns = namespace(system='') -%}
{%- if messages and messages[0]['role'] == 'system' -%}
  {%- set ns.system = text(messages[0]['content']) | trim -%}
  {%- set messages = messages[1:] -%}
{%- endif -%}
{%- for message in messages -%}
  {%- set role = 'model' if message['role'] == 'assistant' else message['role'] -%}
  {{- '<start_of_turn>' + role + '\n' -}}
  {%- if ns.system and role == 'user' -%}{{- ns.system + '\n\n' -}}{%- set ns.system = '' -%}{%- endif -%}
  {{- text(message['content']) | trim + '<end_of_turn>\n' -}}
{%- endfor -%}
{%- if add_generation_prompt -%}{{- '<start_of_turn>model\n' -}}{%- endif -%}
)JINJA";

constexpr std::string_view kMistral = EMBER_CONTENT_MACRO R"JINJA(
{{- bos_token -}}
{%- set ns = namespace(system='') -%}
{%- if messages and messages[0]['role'] == 'system' -%}
  {%- set ns.system = text(messages[0]['content']) | trim -%}
  {%- set messages = messages[1:] -%}
{%- endif -%}
{%- for message in messages -%}
  {%- if message['role'] == 'user' -%}
    {{- '[INST] ' -}}
    {%- if ns.system -%}{{- ns.system + '\n\n' -}}{%- set ns.system = '' -%}{%- endif -%}
    {{- text(message['content']) | trim + ' [/INST]' -}}
  {%- elif message['role'] == 'assistant' -%}
    {{- text(message['content']) | trim + eos_token -}}
  {%- endif -%}
{%- endfor -%}
)JINJA";

constexpr std::string_view kPhi3 = EMBER_CONTENT_MACRO R"JINJA(
{%- for message in messages -%}
{{- '<|' + message['role'] + '|>\n' + text(message['content']) + '<|end|>\n' -}}
{%- endfor -%}
{%- if add_generation_prompt -%}{{- '<|assistant|>\n' -}}{%- endif -%}
)JINJA";

#undef EMBER_CONTENT_MACRO

constexpr BuiltinTemplate kTemplates[] = {
    {"chatml", "<|im_start|>role\\ncontent<|im_end|> turns (Qwen, SmolLM, Hermes, ...)", kChatMl},
    {"llama2", "[INST] <<SYS>> ... [/INST] answer </s> (Llama 2)", kLlama2},
    {"llama3", "<|start_header_id|>role<|end_header_id|> ... <|eot_id|> (Llama 3)", kLlama3},
    {"gemma", "<start_of_turn>user|model ... <end_of_turn> (Gemma)", kGemma},
    {"mistral", "[INST] ... [/INST]answer</s> (Mistral)", kMistral},
    {"phi3", "<|role|>\\ncontent<|end|> (Phi-3)", kPhi3},
};

}  // namespace

std::span<const BuiltinTemplate> builtinTemplates() { return kTemplates; }

const BuiltinTemplate* findBuiltinTemplate(std::string_view name) {
  for (const auto& t : kTemplates)
    if (t.name == name) return &t;
  return nullptr;
}

}  // namespace ember::chat
