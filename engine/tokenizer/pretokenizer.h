#pragma once
// BPE pre-tokenization: the text is cut into words by a sequence of regular expressions before
// BPE merges run inside each word. The rules are named by tokenizer.ggml.pre and are llama.cpp's
// (pretokenizer_rules.h lists them); matching uses PCRE2 in UTF mode, with the character classes
// translated so that they mean what they mean in llama.cpp's matcher (its whitespace set, ASCII
// \d and \b, \p{Lu}/\p{Ll}/... taken as any letter).
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace ember {

namespace pretokenizer_rules {
struct SplitRules;
}

class PreTokenizer {
 public:
  // The rules for a tokenizer.ggml.pre value, mapped as llama.cpp maps it. An empty value gets
  // llama.cpp's "default" rules, as llama.cpp does. Throws ember::Error naming the value when it
  // is unknown; never falls back to other rules.
  static PreTokenizer forName(std::string_view preName);
  // The rules of one llama.cpp pre-tokenizer type by its type name ("gpt2", "llama3", ...).
  // Throws ember::Error for an unknown type.
  static PreTokenizer ofType(std::string_view typeName, bool ignoreMerges = false);

  std::string_view typeName() const;
  // A word that is itself in the vocabulary is taken whole before any merge (llama.cpp sets this
  // for Llama 3 and a few others, following their tokenizer.json's "ignore_merges").
  bool ignoresMerges() const { return ignoreMerges_; }
  // Words are byte-level text (GPT-2's byte <-> Unicode table); false: raw UTF-8 with <0xHH>
  // byte tokens for what the vocabulary lacks.
  bool byteEncodes() const;
  // Spaces are replaced by U+2581 before splitting (SentencePiece-style BPE such as Gemma 4).
  bool escapesSpaces() const;
  // A word made only of newlines is looked up whole before merging (Gemma 4).
  bool takesNewlineRunsWhole() const;

  // Splits well-formed UTF-8 into words (views into `text`); matched and unmatched stretches
  // both become words, in order, and every regex splits the words of the one before. An empty
  // match splits the word at its position. Throws ember::Error on ill-formed UTF-8 or a regex
  // engine failure.
  std::vector<std::string_view> split(std::string_view text) const;

  // The PCRE2 form of one of llama.cpp's regexes (exposed for tests).
  static std::string translateRegex(std::string_view llamaCppRegex);

 private:
  struct Pattern;
  PreTokenizer(const pretokenizer_rules::SplitRules& rules, bool ignoreMerges);
  const pretokenizer_rules::SplitRules* rules_;
  bool ignoreMerges_ = false;
  std::vector<std::shared_ptr<const Pattern>> stages_;
};

}  // namespace ember
