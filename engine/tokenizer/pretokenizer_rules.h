#pragma once
// The pre-tokenizer types of llama.cpp (src/llama-vocab.cpp): for each, the split regexes in the
// order llama.cpp applies them, and the tokenizer.ggml.pre values that select it. The regexes are
// kept as llama.cpp writes them; pretokenizer.cpp translates them to PCRE2 so that they match
// what llama.cpp's own matcher matches.
#include <string_view>
#include <vector>

namespace ember::pretokenizer_rules {

struct SplitRules {
  std::string_view type;                  // llama.cpp's type, e.g. "llama3", "deepseek-llm"
  std::vector<std::string_view> regexes;  // applied in turn, each splitting the words of the last
  bool byteEncode = true;  // words go through GPT-2's byte <-> Unicode table (false: raw UTF-8)
  bool escapeSpaces = false;     // spaces become U+2581 before splitting (SentencePiece-style BPE)
  bool newlineRunsWhole = false;  // a word of only newlines is taken whole when it is a token
};

struct PreName {
  std::string_view name;  // the tokenizer.ggml.pre value
  std::string_view type;  // the SplitRules::type it selects
  bool ignoreMerges;      // a word that is itself a token is taken whole before any merge
};

// Every type with its rules, and every tokenizer.ggml.pre value llama.cpp accepts.
const std::vector<SplitRules>& allTypes();
const std::vector<PreName>& allNames();

// Lookups; nullptr when there is no such entry.
const SplitRules* findType(std::string_view type);
const PreName* findName(std::string_view name);

}  // namespace ember::pretokenizer_rules
