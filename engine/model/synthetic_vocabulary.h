#pragma once
// A minimal SentencePiece-style vocabulary ("llama" tokenizer model) of a given size for the
// synthetic models: <unk>, <s>, </s>, the 256 byte tokens <0x00>..<0xFF> (byte fallback makes
// any text encodable), then filler pieces: "▁" and "a".."z", then their combinations ("▁a",
// "ab", ...) in order of length with descending scores, so that plain text merges into words.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "gguf/gguf_value.h"

namespace ember::model {

constexpr int32_t kSyntheticUnknownId = 0, kSyntheticBosId = 1, kSyntheticEosId = 2;
constexpr int32_t kSyntheticMinimumVocab = 3 + 256 + 27;

// The tokenizer.ggml.* metadata entries (model, tokens, scores, token_type, special ids,
// add_bos_token) for `vocabSize` tokens; throws ember::Error below kSyntheticMinimumVocab.
std::vector<std::pair<std::string, gguf::Value>> syntheticVocabularyMetadata(int32_t vocabSize);

}  // namespace ember::model
