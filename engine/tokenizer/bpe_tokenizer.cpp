#include "tokenizer/bpe_tokenizer.h"

#include "ember/error.h"
#include "tokenizer/byte_unicode.h"

namespace ember {
BpeTokenizer::BpeTokenizer(const GgufVocabulary& vocab)
    : preName_(vocab.pre), preTokenizer_(PreTokenizer::forName(vocab.pre)) {
  if (vocab.merges.empty()) {
    throw Error("byte-level BPE vocabulary has no merges (tokenizer.ggml.merges)");
  }
  tokenTexts_ = vocab.tokens;
  tokenTypes_ = vocab.types;
  if (tokenTypes_.size() != tokenTexts_.size()) tokenTypes_.assign(tokenTexts_.size(), TokenType::Normal);
  special_ = vocab.special;
  finishVocabulary();
  merges_ = std::make_unique<BpeMerges>(vocab.merges,
                                        [this](std::string_view text) { return findToken(text); });
}

void BpeTokenizer::encodeFragment(std::string_view fragment, std::vector<TokenId>& out) const {
  for (std::string_view word : preTokenizer_.split(fragment)) {
    if (preTokenizer_.ignoresMerges()) {
      // Llama 3's tokenizer takes a word that is itself a token as is, before any merge.
      if (auto whole = findToken(byte_unicode::encode(word))) {
        out.push_back(*whole);
        continue;
      }
    }
    merges_->encodeWord(word, out);
  }
}

std::string BpeTokenizer::tokenBytes(TokenId id, bool renderSpecial) const {
  const std::string& text = tokenText(id);  // throws when out of range
  switch (tokenType(id)) {
    case TokenType::Control:
    case TokenType::Unknown:
    case TokenType::Unused:
      return renderSpecial ? text : std::string();
    case TokenType::UserDefined:
      return text;  // added tokens are stored as plain text, not byte-level text
    case TokenType::Byte:
      if (auto byte = parseByteToken(text)) return std::string(1, static_cast<char>(*byte));
      return byte_unicode::decode(text);
    case TokenType::Normal:
    case TokenType::Undefined:
      break;
  }
  return byte_unicode::decode(text);
}

std::unique_ptr<Tokenizer> makeBpeTokenizer(const GgufVocabulary& vocab) {
  return std::make_unique<BpeTokenizer>(vocab);
}

}  // namespace ember
