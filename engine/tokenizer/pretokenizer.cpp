#include "tokenizer/pretokenizer.h"

#include <pcre2.h>

#include <algorithm>
#include <array>
#include <map>
#include <mutex>
#include <utility>

#include "ember/error.h"
#include "tokenizer/pretokenizer_rules.h"
#include "tokenizer/utf8.h"

namespace ember {
namespace {

// llama.cpp's whitespace: the Unicode White_Space property (its \s, on code points, is this set;
// PCRE2's Unicode \s lacks U+0085).
constexpr std::string_view kWhitespaceMembers =
    R"(\t-\r \x{85}\x{A0}\x{1680}\x{2000}-\x{200A}\x{2028}\x{2029}\x{202F}\x{205F}\x{3000})";
// ECMAScript's \b: a boundary between [A-Za-z0-9_] and anything else.
constexpr std::string_view kAsciiWordBoundary =
    R"((?:(?<=[A-Za-z0-9_])(?![A-Za-z0-9_])|(?<![A-Za-z0-9_])(?=[A-Za-z0-9_])))";

// The Unicode categories llama.cpp's matcher knows; a regex naming one is matched on categories
// where every kind of letter (Lu, Ll, Lt, Lm, Lo) is simply a letter.
constexpr std::array<std::string_view, 10> kCategoryClasses = {
    R"(\p{N})",  R"(\p{L})",  R"(\p{P})",  R"(\p{M})",  R"(\p{S})",
    R"(\p{Lu})", R"(\p{Ll})", R"(\p{Lt})", R"(\p{Lm})", R"(\p{Lo})"};

bool usesCategories(std::string_view regex) {
  return std::any_of(kCategoryClasses.begin(), kCategoryClasses.end(),
                     [&](std::string_view c) { return regex.find(c) != std::string_view::npos; });
}

}  // namespace

std::string PreTokenizer::translateRegex(std::string_view regex) {
  const bool categories = usesCategories(regex);
  std::string out;
  out.reserve(regex.size() * 2);
  bool inClass = false;
  for (size_t i = 0; i < regex.size(); ++i) {
    const char c = regex[i];
    if (c != '\\' || i + 1 == regex.size()) {
      if (c == '[' && !inClass) inClass = true;
      else if (c == ']' && inClass) inClass = false;
      out += c;
      continue;
    }
    const char e = regex[++i];
    switch (e) {
      case 's':
        out += inClass ? std::string(kWhitespaceMembers) : "[" + std::string(kWhitespaceMembers) + "]";
        break;
      case 'S':
        if (inClass) throw Error("pre-tokenizer regex uses \\S inside a character class");
        out += "[^" + std::string(kWhitespaceMembers) + "]";
        break;
      case 'd': out += inClass ? "0-9" : "[0-9]"; break;
      case 'b':
        if (inClass) throw Error("pre-tokenizer regex uses \\b inside a character class");
        out += kAsciiWordBoundary;
        break;
      case 'w':
      case 'W':
      case 'D':
      case 'B':
        throw Error(std::string("pre-tokenizer regex uses \\") + e + ", which is not supported");
      case 'p': {
        const size_t close = regex.find('}', i);
        if (close == std::string_view::npos) throw Error("pre-tokenizer regex: unterminated \\p{");
        std::string_view name = regex.substr(i + 2, close - i - 2);
        if (categories && name.size() == 2 && name[0] == 'L') name = "L";
        out += "\\p{";
        out += name;
        out += "}";
        i = close;
        break;
      }
      default:
        out += '\\';
        out += e;
        break;
    }
  }
  return out;
}

// One compiled regex; the pcre2_code is read-only after compilation and shared across threads.
struct PreTokenizer::Pattern {
  pcre2_code* code = nullptr;

  explicit Pattern(const std::string& regex) {
    int errorCode = 0;
    PCRE2_SIZE errorOffset = 0;
    code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(regex.data()), regex.size(),
                         PCRE2_UTF | PCRE2_UCP | PCRE2_DOLLAR_ENDONLY, &errorCode, &errorOffset,
                         nullptr);
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

  // Compiled on first use (from llama.cpp's form) and shared by every tokenizer in the process.
  static std::shared_ptr<const Pattern> get(std::string_view llamaCppRegex) {
    static std::mutex mutex;
    static std::map<std::string, std::shared_ptr<const Pattern>, std::less<>> compiled;
    const std::lock_guard lock(mutex);
    auto it = compiled.find(llamaCppRegex);
    if (it == compiled.end()) {
      auto pattern = std::make_shared<const Pattern>(translateRegex(llamaCppRegex));
      it = compiled.emplace(std::string(llamaCppRegex), std::move(pattern)).first;
    }
    return it->second;
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
  size_t offset = 0;       // where the next search starts
  size_t wordStart = 0;    // start of the text not yet handed out
  bool afterEmpty = false;  // the last match was empty and ended at `offset`
  while (offset < text.size()) {
    // The whole text was validated once, so PCRE2 need not re-check it at every search. After
    // an empty match, first look for a non-empty one at the same place (as std::regex_iterator
    // and Python do), then move on by one character.
    uint32_t options = PCRE2_NO_UTF_CHECK;
    if (afterEmpty) options |= PCRE2_NOTEMPTY_ATSTART | PCRE2_ANCHORED;
    int rc = pcre2_match(code, subject, text.size(), offset, options, res.data, res.context);
    if (rc == PCRE2_ERROR_JIT_STACKLIMIT) {
      rc = pcre2_match(code, subject, text.size(), offset, options | PCRE2_NO_JIT, res.data,
                       res.context);
    }
    if (rc == PCRE2_ERROR_NOMATCH && afterEmpty) {
      afterEmpty = false;
      offset += std::max<size_t>(1, utf8::sequenceLength(static_cast<uint8_t>(text[offset])));
      continue;
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
    if (begin > wordStart) out.push_back(text.substr(wordStart, begin - wordStart));
    if (end > begin) out.push_back(text.substr(begin, end - begin));
    wordStart = offset = end;
    afterEmpty = end == begin;
  }
  if (wordStart < text.size()) out.push_back(text.substr(wordStart));
}

PreTokenizer PreTokenizer::forName(std::string_view preName) {
  if (preName.empty()) return ofType("default");
  if (const auto* known = pretokenizer_rules::findName(preName)) {
    return ofType(known->type, known->ignoreMerges);
  }
  throw Error("unknown pre-tokenizer '" + std::string(preName) +
              "' (tokenizer.ggml.pre); its split rules are not known, so the text cannot be "
              "tokenized as the model expects");
}

PreTokenizer PreTokenizer::ofType(std::string_view typeName, bool ignoreMerges) {
  const auto* rules = pretokenizer_rules::findType(typeName);
  if (!rules) throw Error("unknown pre-tokenizer type '" + std::string(typeName) + "'");
  return PreTokenizer(*rules, ignoreMerges);
}

PreTokenizer::PreTokenizer(const pretokenizer_rules::SplitRules& rules, bool ignoreMerges)
    : rules_(&rules), ignoreMerges_(ignoreMerges) {
  for (std::string_view regex : rules.regexes) stages_.push_back(Pattern::get(regex));
}

std::string_view PreTokenizer::typeName() const { return rules_->type; }
bool PreTokenizer::byteEncodes() const { return rules_->byteEncode; }
bool PreTokenizer::escapesSpaces() const { return rules_->escapeSpaces; }
bool PreTokenizer::takesNewlineRunsWhole() const { return rules_->newlineRunsWhole; }

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
