#include "tokenizer/bpe_tokenizer.h"

#include "ember/error.h"
#include "tokenizer/byte_unicode.h"

namespace ember {
namespace {
constexpr std::string_view kEscapedSpace = "\xE2\x96\x81";  // U+2581, SentencePiece's space

std::string escapeSpaces(std::string_view text) {
  std::string out;
  out.reserve(text.size() + text.size() / 4);
  for (char c : text) {
    if (c == ' ') out += kEscapedSpace;
    else out += c;
  }
  return out;
}

std::string unescapeSpaces(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    if (text.substr(i, kEscapedSpace.size()) == kEscapedSpace) {
      out += ' ';
      i += kEscapedSpace.size();
    } else {
      out += text[i++];
    }
  }
  return out;
}
}  // namespace

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
  merges_ = std::make_unique<BpeMerges>(
      vocab.merges, [this](std::string_view text) { return findToken(text); },
      preTokenizer_.byteEncodes());
}

void BpeTokenizer::encodeFragment(std::string_view fragment, std::vector<TokenId>& out) const {
  std::string escaped;
  if (preTokenizer_.escapesSpaces()) {
    escaped = escapeSpaces(fragment);
    fragment = escaped;
  }
  const bool byteLevel = preTokenizer_.byteEncodes();
  for (std::string_view word : preTokenizer_.split(fragment)) {
    const bool onlyNewlines = word.find_first_not_of('\n') == std::string_view::npos;
    if (preTokenizer_.ignoresMerges() ||
        (preTokenizer_.takesNewlineRunsWhole() && onlyNewlines)) {
      // Llama 3's tokenizer takes a word that is itself a token as is, before any merge (and
      // Gemma 4's does so for a run of newlines).
      if (auto whole = findToken(byteLevel ? byte_unicode::encode(word) : std::string(word))) {
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
  if (!preTokenizer_.byteEncodes()) {
    return preTokenizer_.escapesSpaces() ? unescapeSpaces(text) : text;
  }
  return byte_unicode::decode(text);
}

std::unique_ptr<Tokenizer> makeBpeTokenizer(const GgufVocabulary& vocab) {
  return std::make_unique<BpeTokenizer>(vocab);
}

}  // namespace ember
