#pragma once
// Byte-level BPE pre-tokenization: the text is cut into words by one or more regular expressions
// before BPE merges run inside each word. The rules are named by tokenizer.ggml.pre. Matching uses
// PCRE2 in UTF mode with Unicode properties (\p{L}, \p{N}, \s all Unicode-aware).
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace ember {

class PreTokenizer {
 public:
  // The rule sets this engine knows. Each is the split regex sequence of the tokenizer.json of
  // the models that use it.
  enum class RuleSet { Gpt2, Llama3, Qwen2, StarCoder };

  // Picks the rules for a tokenizer.ggml.pre value. Unknown or empty names fall back to the GPT-2
  // rules; usedFallback() then reports it.
  static PreTokenizer forName(std::string_view preName);
  explicit PreTokenizer(RuleSet rules);

  RuleSet ruleSet() const { return ruleSet_; }
  std::string_view ruleSetName() const;  // "gpt-2", "llama3", "qwen2" or "starcoder"
  bool usedFallback() const { return usedFallback_; }
  // True for rule sets whose tokenizer.json sets BPE "ignore_merges": a word that is itself in
  // the vocabulary is taken whole before any merge runs (Llama 3).
  bool ignoresMerges() const { return ruleSet_ == RuleSet::Llama3; }

  // Splits well-formed UTF-8 into words (views into `text`); matched and unmatched stretches
  // both become words, in order, and every stage of the rule set splits the words of the stage
  // before. Throws ember::Error on ill-formed UTF-8 or a regex engine failure.
  std::vector<std::string_view> split(std::string_view text) const;

 private:
  struct Pattern;
  RuleSet ruleSet_;
  bool usedFallback_ = false;
  std::vector<std::shared_ptr<const Pattern>> stages_;
};

}  // namespace ember
