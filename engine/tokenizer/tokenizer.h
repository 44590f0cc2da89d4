#pragma once
// The engine's one tokenizer interface. Concrete tokenizers (SentencePiece, byte-level BPE) are
// built from a GGUF's tokenizer.ggml.* metadata or from a tokenizer.model file.
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace ember::gguf {
class GgufFile;
}

namespace ember {

using TokenId = int32_t;

// tokenizer.ggml.token_type values (SentencePiece's piece types).
enum class TokenType : int32_t {
  Undefined = 0, Normal = 1, Unknown = 2, Control = 3, UserDefined = 4, Unused = 5, Byte = 6,
};

struct SpecialTokens {
  std::optional<TokenId> bos, eos, eot, eom, unk, pad, sep;
  bool addBos = false;  // tokenizer.ggml.add_bos_token (defaults per model family)
  bool addEos = false;
  // Tokens that end generation: eos, eot, eom and any other end-of-generation control token.
  std::vector<TokenId> endOfGeneration;
};

class Tokenizer {
 public:
  virtual ~Tokenizer() = default;

  // Builds the tokenizer described by tokenizer.ggml.* metadata; throws ember::Error with a clear
  // message when the metadata is missing or malformed.
  static std::unique_ptr<Tokenizer> fromGguf(const gguf::GgufFile& file);
  // Loads a SentencePiece tokenizer.model protobuf directly.
  static std::unique_ptr<Tokenizer> fromSentencePieceModel(const std::filesystem::path& path);

  // Encodes text. With parseSpecial, the texts of control tokens become their ids (for text
  // rendered by a chat template); without it they are ordinary text (user input). User-defined
  // tokens are ordinary pieces given to the model whole and always match, as libsentencepiece's
  // user symbols and Hugging Face's non-special added tokens do. Matching is leftmost-longest.
  // Ill-formed UTF-8 is replaced with U+FFFD first. addBos/addEos add the special tokens when
  // the model defines them.
  std::vector<TokenId> encode(std::string_view text, bool parseSpecial, bool addBos = false,
                              bool addEos = false) const;

  // A byte range [begin, end) of a text.
  struct TextRange {
    size_t begin = 0;
    size_t end = 0;
  };
  // Encodes text rendered by a chat template: control tokens are parsed everywhere except inside
  // `plainRanges` (sorted, not overlapping: where the user's own text was inserted), so a user who
  // types "<|im_end|>" gets plain text while the template's markers become control tokens. The
  // text is tokenized as one whole, exactly as encode(text, true) would split it otherwise.
  std::vector<TokenId> encodeRendered(std::string_view text, std::span<const TextRange> plainRanges,
                                      bool addBos = false) const;

  // The raw bytes a token stands for (byte tokens as their byte, SentencePiece's U+2581 as a
  // space, byte-level BPE mapped back to bytes). Control tokens give their text only when
  // renderSpecial is true. The bytes of one token need not be valid UTF-8 on their own.
  virtual std::string tokenBytes(TokenId id, bool renderSpecial) const = 0;
  // Whole-sequence decode (applies the leading-space rule); invalid UTF-8 becomes U+FFFD.
  std::string decode(std::span<const TokenId> ids, bool renderSpecial = false) const;

  virtual size_t vocabSize() const = 0;
  const std::string& tokenText(TokenId id) const;  // the piece as stored in the vocabulary
  TokenType tokenType(TokenId id) const;
  std::optional<TokenId> findToken(std::string_view text) const;
  const SpecialTokens& special() const { return special_; }
  bool isEndOfGeneration(TokenId id) const;
  // True when decoding should drop the space that the tokenizer adds before the first word
  // (SentencePiece with add_dummy_prefix).
  virtual bool stripsLeadingSpace() const { return false; }
  virtual std::string_view kindName() const = 0;  // "sentencepiece" or "bpe"

 protected:
  // Splits at special tokens (see encode/encodeRendered) and encodes the fragments between them.
  void encodeSplitting(std::string_view text, bool parseSpecial,
                       std::span<const TextRange> plainRanges, std::vector<TokenId>& out) const;
  // Encodes a fragment of text that contains no special tokens.
  virtual void encodeFragment(std::string_view fragment, std::vector<TokenId>& out) const = 0;

  std::vector<std::string> tokenTexts_;  // (vocab)
  std::vector<TokenType> tokenTypes_;    // (vocab)
  SpecialTokens special_;
  // Call once tokenTexts_/tokenTypes_/special_ are set: builds the text -> id index and the
  // control/user-defined token matcher, and completes special_.endOfGeneration (eos, eot, eom and
  // well-known end-of-turn control tokens, see addEndOfGenerationTokens).
  void finishVocabulary();

 private:
  struct Impl;
  std::shared_ptr<const Impl> index_;
};

// Turns a stream of token ids into UTF-8 text pieces, holding back bytes until a character is
// complete so that no piece ever ends inside a UTF-8 sequence.
class IncrementalDetokenizer {
 public:
  explicit IncrementalDetokenizer(const Tokenizer& tokenizer, bool renderSpecial = false);
  // Returns the text that became complete with this token (possibly empty); bytes that can no
  // longer become a character are replaced with U+FFFD right away. Throws ember::Error for an id
  // outside the vocabulary.
  std::string push(TokenId id);
  // Returns what is still held back (invalid or truncated bytes become U+FFFD).
  std::string flush();

 private:
  const Tokenizer& tokenizer_;
  bool renderSpecial_;
  bool atStart_ = true;
  std::string pending_;
};

}  // namespace ember
