#pragma once
// SentencePiece tokenizer (tokenizer.ggml.model = "llama"): Ember's own encoder for GGUF
// vocabularies, libsentencepiece for tokenizer.model files and on request.
#include <filesystem>
#include <memory>
#include <optional>
#include <string>

#include "tokenizer/gguf_vocabulary.h"
#include "tokenizer/tokenizer.h"

namespace ember {

// Which encoder a SentencePiece tokenizer built from a GGUF vocabulary uses: Ember's own
// (SpmEncoder: compact tables over the vocabulary the tokenizer keeps anyway), or libsentencepiece
// loaded with a model built from the vocabulary (about 52 MB more heap for Gemma 3's 262144
// pieces). Both give the same ids. tokenizer.model files always use libsentencepiece.
enum class SpmEncoderChoice { Own, Library };

// Own, unless the environment variable EMBER_SPM_ENCODER is "libsentencepiece" ("ember" or unset
// mean Own); throws ember::Error for any other value.
SpmEncoderChoice defaultSpmEncoder();

// Builds a SentencePiece tokenizer from a GGUF vocabulary (pieces, scores, types, special ids,
// add_space_prefix) with the given encoder (defaultSpmEncoder() when not given); throws
// ember::Error when the vocabulary is not one libsentencepiece would accept (no scores, no
// unknown piece, an empty piece or a piece defined twice).
std::unique_ptr<Tokenizer> makeSentencePieceTokenizer(const GgufVocabulary& vocab);
std::unique_ptr<Tokenizer> makeSentencePieceTokenizer(const GgufVocabulary& vocab,
                                                      SpmEncoderChoice choice);

// The encoder of a tokenizer made here, or nullopt for any other tokenizer.
std::optional<SpmEncoderChoice> spmEncoderOf(const Tokenizer& tokenizer);

// The model that makeSentencePieceTokenizer hands libsentencepiece, serialized; throws
// ember::Error as above. For tests that load the library on its own.
std::string sentencePieceModelOf(const GgufVocabulary& vocab);

// Loads a SentencePiece tokenizer.model protobuf file; throws ember::Error with the reason when
// the file is missing or not a valid model.
std::unique_ptr<Tokenizer> makeSentencePieceTokenizerFromModelFile(
    const std::filesystem::path& path);

}  // namespace ember
