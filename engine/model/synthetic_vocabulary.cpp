#include "model/synthetic_vocabulary.h"

#include <cstdio>

#include "ember/error.h"
#include "tokenizer/tokenizer.h"

namespace ember::model {
namespace {

constexpr const char* kWordStart = "\xE2\x96\x81";  // U+2581, SentencePiece's space

// The filler pieces: every string over {▁, a..z} of length 1, then 2, ..., until `count`.
std::vector<std::string> fillerPieces(size_t count) {
  std::vector<std::string> alphabet = {kWordStart};
  for (char c = 'a'; c <= 'z'; ++c) alphabet.emplace_back(1, c);
  std::vector<std::string> pieces;
  std::vector<std::string> previous = {""};
  while (pieces.size() < count) {
    std::vector<std::string> longer;
    for (const std::string& stem : previous) {
      for (const std::string& letter : alphabet) {
        longer.push_back(stem + letter);
        if (pieces.size() < count) pieces.push_back(longer.back());
      }
    }
    previous = std::move(longer);
  }
  return pieces;
}

}  // namespace

std::vector<std::pair<std::string, gguf::Value>> syntheticVocabularyMetadata(int32_t vocabSize) {
  using gguf::Value;
  using gguf::ValueType;
  if (vocabSize < kSyntheticMinimumVocab)
    throw Error("synthetic vocabulary: " + std::to_string(vocabSize) + " tokens (at least " +
                std::to_string(kSyntheticMinimumVocab) + " needed)");
  std::vector<std::string> tokens = {"<unk>", "<s>", "</s>"};
  std::vector<Value> types = {Value::makeInt32(int32_t(TokenType::Unknown)),
                              Value::makeInt32(int32_t(TokenType::Control)),
                              Value::makeInt32(int32_t(TokenType::Control))};
  for (int byte = 0; byte < 256; ++byte) {
    char text[8];
    std::snprintf(text, sizeof(text), "<0x%02X>", byte);
    tokens.emplace_back(text);
    types.push_back(Value::makeInt32(int32_t(TokenType::Byte)));
  }
  for (std::string& piece : fillerPieces(size_t(vocabSize) - tokens.size())) {
    tokens.push_back(std::move(piece));
    types.push_back(Value::makeInt32(int32_t(TokenType::Normal)));
  }
  // Special and byte tokens score 0; fillers score lower the longer (later) they are, which is
  // the order SentencePiece's BPE merges them in.
  std::vector<Value> scores;
  scores.reserve(tokens.size());
  for (size_t i = 0; i < tokens.size(); ++i)
    scores.push_back(Value::makeFloat32(i < 259 ? 0.0f : -float(i - 259)));

  std::vector<std::pair<std::string, Value>> keys;
  keys.emplace_back("tokenizer.ggml.model", Value::makeString("llama"));
  keys.emplace_back("tokenizer.ggml.tokens", Value::makeStringArray(tokens));
  keys.emplace_back("tokenizer.ggml.scores", Value::makeArray(ValueType::Float32, std::move(scores)));
  keys.emplace_back("tokenizer.ggml.token_type", Value::makeArray(ValueType::Int32, std::move(types)));
  keys.emplace_back("tokenizer.ggml.unknown_token_id", Value::makeUInt32(kSyntheticUnknownId));
  keys.emplace_back("tokenizer.ggml.bos_token_id", Value::makeUInt32(kSyntheticBosId));
  keys.emplace_back("tokenizer.ggml.eos_token_id", Value::makeUInt32(kSyntheticEosId));
  keys.emplace_back("tokenizer.ggml.add_bos_token", Value::makeBool(true));
  return keys;
}

}  // namespace ember::model
