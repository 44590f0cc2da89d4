#pragma once
// The tokenizer.ggml.* metadata of a GGUF file, read and validated once, for the concrete
// tokenizers to build themselves from.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tokenizer/tokenizer.h"

namespace ember {

struct GgufVocabulary {
  std::string model;                 // tokenizer.ggml.model: "llama" (SentencePiece), "gpt2" (BPE)
  std::string pre;                   // tokenizer.ggml.pre (BPE pre-tokenizer name), may be empty
  std::vector<std::string> tokens;   // tokenizer.ggml.tokens (vocab)
  std::vector<float> scores;         // tokenizer.ggml.scores (vocab) or empty
  std::vector<TokenType> types;      // tokenizer.ggml.token_type (vocab); Normal when absent
  std::vector<std::string> merges;   // tokenizer.ggml.merges ("a b" pairs, BPE only)
  std::optional<bool> addSpacePrefix;  // tokenizer.ggml.add_space_prefix
  SpecialTokens special;             // ids checked against the vocabulary size
};

// Reads and validates the metadata; throws ember::Error naming the file and the key on a missing
// tokenizer, mismatched array lengths, special-token ids outside the vocabulary, and the like.
// special.addBos defaults to true for SentencePiece ("llama") and false otherwise when
// tokenizer.ggml.add_bos_token is absent; special.endOfGeneration is filled as below.
GgufVocabulary readGgufVocabulary(const gguf::GgufFile& file);

// The byte of a SentencePiece byte token, whose text must be exactly "<0xHH>" (two hex digits),
// or nullopt for any other text.
std::optional<uint8_t> parseByteToken(std::string_view text);

// Completes special.endOfGeneration (keeping what is there, without duplicates): eos, eot, eom,
// and every control token whose text is a well-known end-of-turn marker such as <|im_end|>,
// <|eot_id|> or <end_of_turn>.
void addEndOfGenerationTokens(SpecialTokens& special, const std::vector<std::string>& tokens,
                              const std::vector<TokenType>& types);

}  // namespace ember
