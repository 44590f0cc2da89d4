#pragma once
// Ember's own SentencePiece encoder for GGUF vocabularies (tokenizer.ggml.model = "llama"): the
// BPE model of SentencePiece, where the adjacent pair whose joined text is the piece with the
// highest score merges first (the leftmost pair on a tie), with libsentencepiece's identity
// normalization (optional dummy-prefix space, spaces spelled U+2581, one U+FFFD per ill-formed
// byte), user-defined pieces kept whole, pieces of type UNUSED split back into the pair they were
// merged from, and unknown characters spelled as <0xHH> byte pieces when the vocabulary has them
// (else a run of them is one unknown token).
//
// It holds no copy of the vocabulary: texts and the text -> id index are the Tokenizer's own. Its
// own heap is the scores (4 bytes a piece), the ids of user-defined pieces sorted by text (for
// longest-prefix matching) and the few user-defined texts whose spaces the model spells U+2581.
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tokenizer/tokenizer.h"

namespace ember {

// How libsentencepiece would see the pieces of a GGUF vocabulary: which id is the one UNKNOWN
// piece, which other UNKNOWN-typed pieces count as UNUSED, and the U+2581 spelling of user-defined
// pieces that the GGUF stores with real spaces. Shared by the library model and the own encoder
// so that both read a vocabulary the same way.
struct SpmPieceRules {
  TokenId unknown = -1;
  bool byteFallback = false;  // the vocabulary has BYTE pieces
  // (id, text) for user-defined pieces respelled with U+2581 for spaces
  std::vector<std::pair<TokenId, std::string>> respelled;
};

// Throws ember::Error when the vocabulary has no piece that can be the unknown one.
SpmPieceRules spmPieceRulesOf(const std::vector<std::string>& texts,
                              const std::vector<TokenType>& types,
                              std::optional<TokenId> unknownTokenId);

class SpmEncoder {
 public:
  // `vocab` is the tokenizer whose findToken() the encoder reads, and `texts` and `types` are its
  // vocabulary: all three must outlive the encoder and be complete already. `scores` has one
  // entry per piece. Throws ember::Error for an empty piece or a text defined twice, which
  // libsentencepiece refuses too.
  SpmEncoder(const Tokenizer& vocab, const std::vector<std::string>& texts,
             const std::vector<TokenType>& types, std::vector<float> scores, SpmPieceRules rules,
             bool addDummyPrefix);

  // Appends the ids of `fragment` (text without special tokens) to `out`.
  void encode(std::string_view fragment, std::vector<TokenId>& out) const;


 private:
  // A piece as libsentencepiece files it: merge targets (NORMAL, USER_DEFINED), UNUSED (merge
  // targets that are split again afterwards) and reserved (CONTROL, UNKNOWN, BYTE).
  enum class Role : uint8_t { Piece, Unused, Reserved };
  Role roleOf(TokenId id) const;
  // The id of a text as libsentencepiece's PieceToId finds it, or -1.
  TokenId find(std::string_view text) const;
  // Length of the longest user-defined piece that `text` starts with, or 0.
  size_t userDefinedPrefix(std::string_view text) const;
  std::string normalize(std::string_view fragment) const;

  const Tokenizer& vocab_;
  const std::vector<std::string>& texts_;  // (vocab)
  const std::vector<TokenType>& types_;    // (vocab)
  std::vector<float> scores_;                           // (vocab)
  std::vector<std::pair<std::string, TokenId>> respelled_;  // sorted by text
  // (user-defined pieces) their texts as the library spells them (views into texts_ or
  // respelled_), sorted
  std::vector<std::pair<std::string_view, TokenId>> userDefinedByText_;
  std::array<TokenId, 256> byteIds_{};                  // <0xHH> piece of each byte, or unknown
  std::array<bool, 256> userDefinedFirstByte_{};
  TokenId unknown_;
  bool byteFallback_;
  bool addDummyPrefix_;
};

}  // namespace ember
