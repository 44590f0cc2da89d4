#pragma once
// The tokenizer.ggml.* metadata of a GGUF file, read and validated once, for the concrete
// tokenizers to build themselves from.
#include <optional>
#include <string>
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
GgufVocabulary readGgufVocabulary(const gguf::GgufFile& file);

}  // namespace ember
