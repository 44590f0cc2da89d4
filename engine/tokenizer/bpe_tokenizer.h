#pragma once
// BPE (tokenizer.ggml.model = "gpt2", or "gemma4"): the text is split into words by the
// pre-tokenizer named in tokenizer.ggml.pre, each word's bytes are mapped through GPT-2's
// byte <-> Unicode table (Gemma 4's vocabulary is raw UTF-8 with U+2581 for spaces instead), and
// the ranked merges from tokenizer.ggml.merges join them into tokens.
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tokenizer/bpe_merges.h"
#include "tokenizer/gguf_vocabulary.h"
#include "tokenizer/pretokenizer.h"
#include "tokenizer/tokenizer.h"

namespace ember {

class BpeTokenizer : public Tokenizer {
 public:
  // Throws ember::Error when the vocabulary has no merges or a malformed merge, or when its
  // pre-tokenizer (tokenizer.ggml.pre) is unknown or unsupported.
  explicit BpeTokenizer(const GgufVocabulary& vocab);

  std::string tokenBytes(TokenId id, bool renderSpecial) const override;
  size_t vocabSize() const override { return tokenTexts_.size(); }
  std::string_view kindName() const override { return "bpe"; }

  // The split rules chosen for tokenizer.ggml.pre (an unknown name is refused at load).
  const PreTokenizer& preTokenizer() const { return preTokenizer_; }
  const std::string& preName() const { return preName_; }

 protected:
  void encodeFragment(std::string_view fragment, std::vector<TokenId>& out) const override;

 private:
  std::string preName_;
  PreTokenizer preTokenizer_;
  std::unique_ptr<BpeMerges> merges_;
};

std::unique_ptr<Tokenizer> makeBpeTokenizer(const GgufVocabulary& vocab);

}  // namespace ember
