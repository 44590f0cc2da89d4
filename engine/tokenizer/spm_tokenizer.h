#pragma once
// SentencePiece tokenizer (tokenizer.ggml.model = "llama") backed by libsentencepiece.
#include <filesystem>
#include <memory>
#include <string>

#include "tokenizer/gguf_vocabulary.h"
#include "tokenizer/tokenizer.h"

namespace ember {

// Builds a sentencepiece model from a GGUF vocabulary (pieces, scores, types, special ids,
// add_space_prefix) and loads it; throws ember::Error when the vocabulary cannot be turned into
// a model that libsentencepiece accepts.
std::unique_ptr<Tokenizer> makeSentencePieceTokenizer(const GgufVocabulary& vocab);

// The model that makeSentencePieceTokenizer hands libsentencepiece, serialized; throws
// ember::Error as above. For tests that load the library on its own.
std::string sentencePieceModelOf(const GgufVocabulary& vocab);

// Loads a SentencePiece tokenizer.model protobuf file; throws ember::Error with the reason when
// the file is missing or not a valid model.
std::unique_ptr<Tokenizer> makeSentencePieceTokenizerFromModelFile(
    const std::filesystem::path& path);

}  // namespace ember
