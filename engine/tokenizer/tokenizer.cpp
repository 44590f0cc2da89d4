#include "tokenizer/tokenizer.h"

#include <algorithm>
#include <array>

#include "ember/error.h"
#include "gguf/gguf_file.h"
#include "tokenizer/bpe_tokenizer.h"
#include "tokenizer/gguf_vocabulary.h"
#include "tokenizer/spm_tokenizer.h"
#include "tokenizer/token_text_index.h"
#include "tokenizer/utf8.h"

namespace ember {
namespace {

// A byte trie over the texts of control and user-defined tokens, for leftmost-longest matching.
class SpecialTokenTrie {
 public:
  void insert(std::string_view text, TokenId id, bool control) {
    if (text.empty()) return;
    int node = 0;
    for (char c : text) {
      const auto byte = static_cast<uint8_t>(c);
      int child = childOf(node, byte);
      if (child < 0) {
        child = static_cast<int>(nodes_.size());
        nodes_[node].children.emplace_back(byte, child);
        nodes_.emplace_back();
      }
      node = child;
    }
    if (nodes_[node].id < 0) {  // the first of duplicate texts wins
      nodes_[node].id = id;
      nodes_[node].control = control;
    }
    firstBytes_[static_cast<uint8_t>(text[0])] = true;
  }

  struct Match {
    TokenId id = -1;
    size_t length = 0;
  };
  // The longest token text starting at `pos`; control tokens only when `allowControl`.
  Match longestAt(std::string_view text, size_t pos, bool allowControl) const {
    Match best;
    if (!firstBytes_[static_cast<uint8_t>(text[pos])]) return best;
    int node = 0;
    for (size_t i = pos; i < text.size(); ++i) {
      node = childOf(node, static_cast<uint8_t>(text[i]));
      if (node < 0) break;
      const Node& n = nodes_[node];
      if (n.id >= 0 && (allowControl || !n.control)) best = {n.id, i + 1 - pos};
    }
    return best;
  }

 private:
  struct Node {
    std::vector<std::pair<uint8_t, int>> children;
    TokenId id = -1;
    bool control = false;
  };
  int childOf(int node, uint8_t byte) const {
    for (const auto& [b, child] : nodes_[node].children)
      if (b == byte) return child;
    return -1;
  }
  std::vector<Node> nodes_ = std::vector<Node>(1);
  std::array<bool, 256> firstBytes_{};
};

}  // namespace

struct Tokenizer::Impl {
  TokenTextIndex idOfText;  // over tokenTexts_
  SpecialTokenTrie specials;
};

void Tokenizer::finishVocabulary() {
  auto impl = std::make_shared<Impl>();
  impl->idOfText.build(tokenTexts_);  // the first id of a text wins
  for (size_t i = 0; i < tokenTexts_.size(); ++i) {
    const TokenType type = i < tokenTypes_.size() ? tokenTypes_[i] : TokenType::Normal;
    if (type == TokenType::Control || type == TokenType::UserDefined) {
      impl->specials.insert(tokenTexts_[i], static_cast<TokenId>(i), type == TokenType::Control);
    }
  }
  addEndOfGenerationTokens(special_, tokenTexts_, tokenTypes_);
  index_ = std::move(impl);
}

std::vector<TokenId> Tokenizer::encode(std::string_view text, bool parseSpecial, bool addBos,
                                       bool addEos) const {
  // Ill-formed UTF-8 is replaced with U+FFFD first, so no stage ever sees broken text.
  std::string repaired;
  if (!utf8::isValid(text)) {
    repaired = utf8::toValid(text);
    text = repaired;
  }
  std::vector<TokenId> out;
  out.reserve(text.size() / 3 + 2);
  if (addBos && special_.bos) out.push_back(*special_.bos);
  encodeSplitting(text, parseSpecial, {}, out);
  if (addEos && special_.eos) out.push_back(*special_.eos);
  return out;
}

std::vector<TokenId> Tokenizer::encodeRendered(std::string_view text,
                                               std::span<const TextRange> plainRanges,
                                               bool addBos) const {
  // Byte offsets must stay valid, so broken UTF-8 is an error here rather than repaired.
  if (!utf8::isValid(text)) throw Error("rendered prompt is not valid UTF-8");
  std::vector<TokenId> out;
  out.reserve(text.size() / 3 + 2);
  if (addBos && special_.bos) out.push_back(*special_.bos);
  encodeSplitting(text, true, plainRanges, out);
  return out;
}

void Tokenizer::encodeSplitting(std::string_view text, bool parseSpecial,
                                std::span<const TextRange> plainRanges,
                                std::vector<TokenId>& out) const {
  if (!index_) throw Error("tokenizer used before its vocabulary was finished");
  // User-defined tokens are always matched (they are ordinary pieces the model was given whole,
  // as in Hugging Face's non-special added tokens and SentencePiece's user symbols); control
  // tokens only when the text was rendered by a template (parseSpecial), and not inside the
  // plain ranges where user text sits.
  size_t fragmentStart = 0;
  size_t range = 0;
  for (size_t pos = 0; pos < text.size();) {
    while (range < plainRanges.size() && plainRanges[range].end <= pos) ++range;
    const bool inPlain = range < plainRanges.size() && plainRanges[range].begin <= pos;
    const auto match = index_->specials.longestAt(text, pos, parseSpecial && !inPlain);
    if (match.id < 0) {
      ++pos;
      continue;
    }
    if (pos > fragmentStart) {
      encodeFragment(text.substr(fragmentStart, pos - fragmentStart), out);
    }
    out.push_back(match.id);
    pos += match.length;
    fragmentStart = pos;
  }
  if (fragmentStart < text.size()) {
    encodeFragment(text.substr(fragmentStart), out);
  }
}

std::string Tokenizer::decode(std::span<const TokenId> ids, bool renderSpecial) const {
  IncrementalDetokenizer detokenizer(*this, renderSpecial);
  std::string text;
  for (TokenId id : ids) text += detokenizer.push(id);
  text += detokenizer.flush();
  return text;
}

const std::string& Tokenizer::tokenText(TokenId id) const {
  if (id < 0 || static_cast<size_t>(id) >= tokenTexts_.size()) {
    throw Error("token id " + std::to_string(id) + " is outside the vocabulary of " +
                std::to_string(tokenTexts_.size()) + " tokens");
  }
  return tokenTexts_[static_cast<size_t>(id)];
}

TokenType Tokenizer::tokenType(TokenId id) const {
  tokenText(id);  // range check
  return static_cast<size_t>(id) < tokenTypes_.size() ? tokenTypes_[static_cast<size_t>(id)]
                                                      : TokenType::Normal;
}

std::optional<TokenId> Tokenizer::findToken(std::string_view text) const {
  if (!index_) return std::nullopt;
  return index_->idOfText.find(text, tokenTexts_);
}

bool Tokenizer::isEndOfGeneration(TokenId id) const {
  const auto& eog = special_.endOfGeneration;
  return std::find(eog.begin(), eog.end(), id) != eog.end();
}

std::unique_ptr<Tokenizer> Tokenizer::fromGguf(const gguf::GgufFile& file) {
  const GgufVocabulary vocab = readGgufVocabulary(file);
  try {
    if (vocab.model == "gpt2") return makeBpeTokenizer(vocab);
    if (vocab.model == "gemma4") {
      // llama.cpp reads Gemma 4's vocabulary as BPE with the "gemma4" pre-tokenizer whatever
      // tokenizer.ggml.pre says.
      GgufVocabulary bpe = vocab;
      bpe.pre = "gemma4";
      return makeBpeTokenizer(bpe);
    }
    if (vocab.model == "llama") return makeSentencePieceTokenizer(vocab);
  } catch (const gguf::GgufError&) {
    throw;
  } catch (const Error& e) {
    throw Error(file.path() + ": " + e.what());
  }
  throw Error(file.path() + ": tokenizer type '" + vocab.model +
              "' (tokenizer.ggml.model) is not supported; supported are 'llama' (SentencePiece), "
              "'gpt2' (byte-level BPE) and 'gemma4' (Gemma 4's BPE)");
}

std::unique_ptr<Tokenizer> Tokenizer::fromSentencePieceModel(const std::filesystem::path& path) {
  return makeSentencePieceTokenizerFromModelFile(path);
}

// --- IncrementalDetokenizer ---------------------------------------------------------------

IncrementalDetokenizer::IncrementalDetokenizer(const Tokenizer& tokenizer, bool renderSpecial)
    : tokenizer_(tokenizer), renderSpecial_(renderSpecial) {}

std::string IncrementalDetokenizer::push(TokenId id) {
  std::string bytes = tokenizer_.tokenBytes(id, renderSpecial_);
  if (atStart_ && !bytes.empty()) {
    const TokenType type = tokenizer_.tokenType(id);
    // SentencePiece's dummy prefix: the first piece of text carries a space that the encoder
    // added, so it is dropped once. Rendered control tokens (<s>) do not count as that piece.
    if (type != TokenType::Control && type != TokenType::Unknown) {
      if (tokenizer_.stripsLeadingSpace() && bytes.front() == ' ') bytes.erase(0, 1);
      atStart_ = false;
    }
  }
  pending_ += bytes;
  utf8::SanitizeResult ready = utf8::sanitize(pending_, /*endOfInput=*/false);
  pending_.erase(0, ready.consumed);
  return std::move(ready.text);
}

std::string IncrementalDetokenizer::flush() {
  std::string rest = utf8::toValid(pending_);
  pending_.clear();
  return rest;
}

}  // namespace ember
