#include "tokenizer/pretokenizer.h"

#include <pcre2.h>

#include <algorithm>
#include <array>
#include <mutex>
#include <utility>

#include "ember/error.h"
#include "tokenizer/utf8.h"

namespace ember {
namespace {

// The split regexes, as written in the "pre_tokenizer" section of each family's tokenizer.json
// (GPT-2's is also the one in OpenAI's gpt-2 encoder.py and Hugging Face's ByteLevel).
enum class Regex { Gpt2, Llama3, Qwen2, SingleDigit };
constexpr std::array<std::string_view, 4> kRegexText = {
    // GPT-2
    R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)",
    // Llama 3 (meta-llama/Meta-Llama-3-8B): numbers in groups of at most three digits.
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)",
    // Qwen 2 / 2.5: the Llama 3 expression with single digits.
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)",
    // StarCoder / SmolLM: Digits(individual_digits=true), followed by GPT-2's regex.
    R"(\p{N})",
};

struct NamedRules {
  std::string_view name;
  PreTokenizer::RuleSet rules;
};

// tokenizer.ggml.pre values (as written by llama.cpp's convert_hf_to_gguf.py) and the split
// rules each stands for.
constexpr std::array kKnownNames = {
    NamedRules{"gpt-2", PreTokenizer::RuleSet::Gpt2},
    NamedRules{"mpt", PreTokenizer::RuleSet::Gpt2},
    NamedRules{"olmo", PreTokenizer::RuleSet::Gpt2},
    NamedRules{"jais", PreTokenizer::RuleSet::Gpt2},
    NamedRules{"default", PreTokenizer::RuleSet::Gpt2},
    NamedRules{"llama-bpe", PreTokenizer::RuleSet::Llama3},
    NamedRules{"llama3", PreTokenizer::RuleSet::Llama3},
    NamedRules{"llama-v3", PreTokenizer::RuleSet::Llama3},
    NamedRules{"falcon3", PreTokenizer::RuleSet::Llama3},
    NamedRules{"smaug-bpe", PreTokenizer::RuleSet::Llama3},
    NamedRules{"dbrx", PreTokenizer::RuleSet::Llama3},
    NamedRules{"qwen2", PreTokenizer::RuleSet::Qwen2},
    NamedRules{"deepseek-r1-qwen", PreTokenizer::RuleSet::Qwen2},
    NamedRules{"starcoder", PreTokenizer::RuleSet::StarCoder},
    NamedRules{"smollm", PreTokenizer::RuleSet::StarCoder},
    NamedRules{"refact", PreTokenizer::RuleSet::StarCoder},
    NamedRules{"command-r", PreTokenizer::RuleSet::StarCoder},
    NamedRules{"codeshell", PreTokenizer::RuleSet::StarCoder},
    NamedRules{"exaone", PreTokenizer::RuleSet::StarCoder},
    NamedRules{"minerva-7b", PreTokenizer::RuleSet::StarCoder},
};

}  // namespace

// One compiled regex; the pcre2_code is read-only after compilation and shared across threads.
struct PreTokenizer::Pattern {
  pcre2_code* code = nullptr;

  explicit Pattern(std::string_view regex) {
    int errorCode = 0;
    PCRE2_SIZE errorOffset = 0;
    code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(regex.data()), regex.size(),
                         PCRE2_UTF | PCRE2_UCP, &errorCode, &errorOffset, nullptr);
    if (!code) {
      std::array<PCRE2_UCHAR, 256> message{};
      pcre2_get_error_message(errorCode, message.data(), message.size());
      throw Error("pre-tokenizer regex does not compile at offset " + std::to_string(errorOffset) +
                  ": " + reinterpret_cast<const char*>(message.data()));
    }
    // Where PCRE2 has no JIT for this machine, pcre2_match interprets the pattern instead.
    pcre2_jit_compile(code, PCRE2_JIT_COMPLETE);
  }
  ~Pattern() { pcre2_code_free(code); }
  Pattern(const Pattern&) = delete;
  Pattern& operator=(const Pattern&) = delete;

  // Compiled on first use and shared by every tokenizer in the process.
  static std::shared_ptr<const Pattern> get(Regex which) {
    static std::mutex mutex;
    static std::array<std::shared_ptr<const Pattern>, kRegexText.size()> compiled;
    const std::lock_guard lock(mutex);
    auto& slot = compiled[static_cast<size_t>(which)];
    if (!slot) slot = std::make_shared<const Pattern>(kRegexText[static_cast<size_t>(which)]);
    return slot;
  }

  // Appends the words of `text` to `out`: every match, and every stretch between matches.
  void split(std::string_view text, std::vector<std::string_view>& out) const;
};

namespace {

// Per-thread match resources: a JIT stack large enough for long runs of one character class.
struct MatchResources {
  pcre2_match_context* context = pcre2_match_context_create(nullptr);
  pcre2_jit_stack* jitStack = pcre2_jit_stack_create(32 * 1024, 8 * 1024 * 1024, nullptr);
  pcre2_match_data* data = pcre2_match_data_create(1, nullptr);
  MatchResources() {
    if (context && jitStack) pcre2_jit_stack_assign(context, nullptr, jitStack);
  }
  ~MatchResources() {
    pcre2_match_data_free(data);
    pcre2_jit_stack_free(jitStack);
    pcre2_match_context_free(context);
  }
  MatchResources(const MatchResources&) = delete;
  MatchResources& operator=(const MatchResources&) = delete;
};

MatchResources& matchResources() {
  thread_local MatchResources resources;
  if (!resources.context || !resources.data) throw Error("pre-tokenizer: out of memory");
  return resources;
}

}  // namespace

void PreTokenizer::Pattern::split(std::string_view text, std::vector<std::string_view>& out) const {
  MatchResources& res = matchResources();
  const auto subject = reinterpret_cast<PCRE2_SPTR>(text.data());
  size_t offset = 0;     // where the next search starts
  size_t wordStart = 0;  // start of the text not yet handed out
  while (offset < text.size()) {
    // The whole text was validated once, so PCRE2 need not re-check it at every search.
    int rc = pcre2_match(code, subject, text.size(), offset, PCRE2_NO_UTF_CHECK, res.data,
                         res.context);
    if (rc == PCRE2_ERROR_JIT_STACKLIMIT) {
      rc = pcre2_match(code, subject, text.size(), offset, PCRE2_NO_UTF_CHECK | PCRE2_NO_JIT,
                       res.data, res.context);
    }
    if (rc == PCRE2_ERROR_NOMATCH) break;
    if (rc < 0) {
      std::array<PCRE2_UCHAR, 256> message{};
      pcre2_get_error_message(rc, message.data(), message.size());
      throw Error("pre-tokenizer: regex matching failed at byte " + std::to_string(offset) + ": " +
                  reinterpret_cast<const char*>(message.data()));
    }
    const PCRE2_SIZE* ovector = pcre2_get_ovector_pointer(res.data);
    const size_t begin = ovector[0], end = ovector[1];
    if (end == begin) {  // none of our patterns matches empty text, but never loop on one
      offset = begin + std::max<size_t>(1, utf8::sequenceLength(static_cast<uint8_t>(text[begin])));
      continue;
    }
    if (begin > wordStart) out.push_back(text.substr(wordStart, begin - wordStart));
    out.push_back(text.substr(begin, end - begin));
    wordStart = offset = end;
  }
  if (wordStart < text.size()) out.push_back(text.substr(wordStart));
}

PreTokenizer PreTokenizer::forName(std::string_view preName) {
  for (const NamedRules& known : kKnownNames) {
    if (known.name == preName) return PreTokenizer(known.rules);
  }
  PreTokenizer fallback(RuleSet::Gpt2);
  fallback.usedFallback_ = true;
  return fallback;
}

PreTokenizer::PreTokenizer(RuleSet rules) : ruleSet_(rules) {
  switch (rules) {
    case RuleSet::Gpt2: stages_ = {Pattern::get(Regex::Gpt2)}; break;
    case RuleSet::Llama3: stages_ = {Pattern::get(Regex::Llama3)}; break;
    case RuleSet::Qwen2: stages_ = {Pattern::get(Regex::Qwen2)}; break;
    case RuleSet::StarCoder:
      stages_ = {Pattern::get(Regex::SingleDigit), Pattern::get(Regex::Gpt2)};
      break;
  }
}

std::string_view PreTokenizer::ruleSetName() const {
  switch (ruleSet_) {
    case RuleSet::Gpt2: return "gpt-2";
    case RuleSet::Llama3: return "llama3";
    case RuleSet::Qwen2: return "qwen2";
    case RuleSet::StarCoder: return "starcoder";
  }
  return "gpt-2";
}

std::vector<std::string_view> PreTokenizer::split(std::string_view text) const {
  if (!utf8::isValid(text)) throw Error("pre-tokenizer: the text is not valid UTF-8");
  std::vector<std::string_view> words;
  if (text.empty()) return words;
  words.push_back(text);
  for (const auto& stage : stages_) {
    std::vector<std::string_view> next;
    next.reserve(words.size() * 2);
    for (std::string_view word : words) stage->split(word, next);
    words = std::move(next);
  }
  return words;
}

}  // namespace ember
