#pragma once
// The merge step of BPE: a word starts as one symbol per byte (byte-level BPE) or per UTF-8
// character (raw BPE such as Gemma 4's) and the adjacent pair with the best (lowest) merge rank
// is merged until no ranked pair is left. Ties go to the leftmost pair, as in Hugging Face
// tokenizers.
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "tokenizer/tokenizer.h"

namespace ember {

class BpeMerges {
 public:
  // `findToken` resolves byte-level token texts to ids. Each merge is "left right" (byte-level
  // text, one space between); merges whose parts or result are not in the vocabulary are
  // skipped, and a later duplicate of a pair keeps the earlier rank. Throws ember::Error naming
  // the merge when one has no separating space.
  // With `byteLevel` false, words are raw UTF-8: a character that is not a token is written as
  // its bytes' <0xHH> tokens (those missing are dropped, as llama.cpp does).
  BpeMerges(const std::vector<std::string>& merges,
            const std::function<std::optional<TokenId>(std::string_view)>& findToken,
            bool byteLevel = true);

  // Appends the tokens of one pre-tokenized word given as raw bytes. A byte whose single-byte
  // token is missing from the vocabulary (SmolLM2 has none for 0x04, 0xC0, 0xFF, ...) is
  // dropped, as Hugging Face's BPE does when the model has no unk_token, rather than turned into
  // an unknown token that may double as end-of-text.
  void encodeWord(std::string_view bytes, std::vector<TokenId>& out) const;

  size_t size() const { return pairs_.size(); }

 private:
  struct Merge {
    int32_t rank;
    TokenId result;
  };
  static uint64_t key(TokenId left, TokenId right) {
    return (static_cast<uint64_t>(static_cast<uint32_t>(left)) << 32) |
           static_cast<uint32_t>(right);
  }
  const Merge* find(TokenId left, TokenId right) const;

  std::unordered_map<uint64_t, Merge> pairs_;
  std::vector<TokenId> byteTokens_;  // (256) token of each single byte, -1 when absent
  bool byteLevel_ = true;
  std::function<std::optional<TokenId>(std::string_view)> findToken_;  // raw mode's characters
};

}  // namespace ember
