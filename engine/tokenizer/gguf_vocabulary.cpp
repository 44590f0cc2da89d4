#include "tokenizer/gguf_vocabulary.h"

#include <algorithm>
#include <array>

#include "ember/error.h"
#include "gguf/gguf_file.h"

namespace ember {
namespace {

constexpr std::string_view kPrefix = "tokenizer.ggml.";

// Texts of control tokens that end a model's turn, taken from the eos_token / eos_token_id
// entries of the models' own tokenizer_config.json and generation_config.json: ChatML (Qwen,
// SmolLM), Llama 3, Gemma, Phi-3, GPT-2/StarCoder, Command-R, CodeLlama infill, gpt-oss,
// DeepSeek and SmolVLM.
constexpr std::array<std::string_view, 15> kEndOfTurnTexts = {
    "<|im_end|>",     "<|eot_id|>",         "<|eom_id|>",  "<|end_of_text|>",
    "<end_of_turn>",  "<|endoftext|>",      "<|end|>",     "<|END_OF_TURN_TOKEN|>",
    "<EOT>",          "<|return|>",         "<|call|>",    "<end_of_utterance>",
    "</s>",           "<｜end▁of▁sentence｜>", "<|eot|>",
};

// Texts llama.cpp always treats as end-of-generation control tokens, overriding the file's type
// (a user-defined "</s>" in Phi-3, for one): they are then matched in text only when special
// tokens are parsed, and print nothing when decoded.
constexpr std::array<std::string_view, 22> kControlByText = {
    "<|eot_id|>", "<|im_end|>",     "<|end|>",           "<|return|>",          "<|call|>",
    "<|flush|>",  "<|calls|>",      "<end_of_turn>",     "<|endoftext|>",       "</s>",
    "<|eom_id|>", "<EOT>",          "_<EOT>",            "[EOT]",               "[EOS]",
    "<|end_of_text|>", "<end_of_utterance>", "<eos>",    "<turn|>",             "<|tool_response>",
    "<｜end▁of▁sentence｜>", "[e~[",
};

void applyControlOverrides(GgufVocabulary& vocab) {
  for (size_t i = 0; i < vocab.tokens.size() && i < vocab.types.size(); ++i) {
    TokenType& type = vocab.types[i];
    if (type != TokenType::Normal && type != TokenType::UserDefined &&
        type != TokenType::Undefined) {
      continue;
    }
    if (std::find(kControlByText.begin(), kControlByText.end(), vocab.tokens[i]) !=
        kControlByText.end()) {
      type = TokenType::Control;
    }
  }
}

// gpt-oss's harmony format (o200k_harmony), as llama.cpp's vocabulary loader handles it: the
// message markers <|start|>, <|channel|>, <|message|> and <|constrain|> are always rendered as
// text (user-defined), so a reader can tell the channels apart in the output.
void renderHarmonyMarkers(GgufVocabulary& vocab) {
  static constexpr std::array<std::string_view, 4> kMarkers = {"<|start|>", "<|channel|>",
                                                               "<|message|>", "<|constrain|>"};
  for (size_t i = 0; i < vocab.tokens.size() && i < vocab.types.size(); ++i)
    if (std::find(kMarkers.begin(), kMarkers.end(), vocab.tokens[i]) != kMarkers.end())
      vocab.types[i] = TokenType::UserDefined;
}

// The same loader's rule for harmony and solar-open: where the end-of-generation set holds
// <|return|> and <|call|> (or <|calls|>), or <|call|>/<|calls|> and <|flush|>, <|end|> only
// closes one message of the answer (the reasoning channel's), so it leaves the set and is
// rendered as text.
void keepHarmonyEndInAnswer(GgufVocabulary& vocab) {
  std::vector<TokenId>& eog = vocab.special.endOfGeneration;
  bool hasReturn = false, hasCall = false, hasFlush = false;
  std::optional<TokenId> end;
  for (const TokenId id : eog) {
    const std::string& text = vocab.tokens[size_t(id)];
    hasReturn |= text == "<|return|>";
    hasCall |= text == "<|call|>" || text == "<|calls|>";
    hasFlush |= text == "<|flush|>";
    if (text == "<|end|>") end = id;
  }
  if (!end || !((hasReturn && hasCall) || (hasCall && hasFlush))) return;
  eog.erase(std::find(eog.begin(), eog.end(), *end));
  if (size_t(*end) < vocab.types.size()) vocab.types[size_t(*end)] = TokenType::UserDefined;
}

[[noreturn]] void fail(const gguf::GgufFile& file, const std::string& what) {
  throw Error(file.path() + ": " + what);
}

std::string key(std::string_view name) { return std::string(kPrefix) + std::string(name); }

std::optional<TokenId> readSpecialId(const gguf::GgufFile& file, std::string_view name,
                                     size_t vocabSize) {
  const std::optional<int64_t> id = file.findInt(key(name));
  if (!id) return std::nullopt;
  if (*id < 0 || static_cast<uint64_t>(*id) >= vocabSize) {
    fail(file, key(name) + " = " + std::to_string(*id) + " is outside the vocabulary of " +
                   std::to_string(vocabSize) + " tokens");
  }
  return static_cast<TokenId>(*id);
}

std::vector<TokenType> readTokenTypes(const gguf::GgufFile& file, size_t vocabSize) {
  if (!file.find(key("token_type"))) return std::vector<TokenType>(vocabSize, TokenType::Normal);
  const std::vector<int64_t> raw = file.getIntArray(key("token_type"));
  if (raw.size() != vocabSize) {
    fail(file, key("token_type") + " has " + std::to_string(raw.size()) + " entries but " +
                   key("tokens") + " has " + std::to_string(vocabSize));
  }
  std::vector<TokenType> types(vocabSize);
  for (size_t i = 0; i < vocabSize; ++i) {
    if (raw[i] < 0 || raw[i] > static_cast<int64_t>(TokenType::Byte)) {
      fail(file, key("token_type") + "[" + std::to_string(i) + "] = " + std::to_string(raw[i]) +
                     " is not a token type (expected 0 to 6)");
    }
    types[i] = static_cast<TokenType>(raw[i]);
  }
  return types;
}

void checkByteTokens(const gguf::GgufFile& file, const GgufVocabulary& vocab) {
  for (size_t i = 0; i < vocab.tokens.size(); ++i) {
    if (vocab.types[i] == TokenType::Byte && !parseByteToken(vocab.tokens[i])) {
      fail(file, "token " + std::to_string(i) + " '" + vocab.tokens[i] +
                     "' is typed as a byte token but is not of the form <0xHH>");
    }
  }
}

}  // namespace

std::optional<uint8_t> parseByteToken(std::string_view text) {
  if (text.size() != 6 || text.substr(0, 3) != "<0x" || text[5] != '>') return std::nullopt;
  const auto hex = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return -1;
  };
  const int high = hex(text[3]), low = hex(text[4]);
  if (high < 0 || low < 0) return std::nullopt;
  return static_cast<uint8_t>(high * 16 + low);
}

void addEndOfGenerationTokens(SpecialTokens& special, const std::vector<std::string>& tokens,
                              const std::vector<TokenType>& types) {
  auto& eog = special.endOfGeneration;
  const auto add = [&eog](std::optional<TokenId> id) {
    if (id && std::find(eog.begin(), eog.end(), *id) == eog.end()) eog.push_back(*id);
  };
  add(special.eos);
  add(special.eot);
  add(special.eom);
  for (size_t i = 0; i < tokens.size() && i < types.size(); ++i) {
    if (types[i] != TokenType::Control) continue;
    if (std::find(kEndOfTurnTexts.begin(), kEndOfTurnTexts.end(), tokens[i]) !=
        kEndOfTurnTexts.end()) {
      add(static_cast<TokenId>(i));
    }
  }
}

GgufVocabulary readGgufVocabulary(const gguf::GgufFile& file) {
  GgufVocabulary vocab;
  const std::optional<std::string> model = file.findString(key("model"));
  if (!model) fail(file, "no tokenizer in this file (" + key("model") + " is missing)");
  vocab.model = *model;
  if (!file.find(key("tokens"))) {
    fail(file, "no tokenizer vocabulary in this file (" + key("tokens") + " is missing)");
  }
  vocab.tokens = file.getStringArray(key("tokens"));
  const size_t n = vocab.tokens.size();
  if (n == 0) fail(file, key("tokens") + " is empty");
  if (n > static_cast<size_t>(INT32_MAX)) fail(file, key("tokens") + " has too many entries");
  vocab.pre = file.findString(key("pre")).value_or("");

  if (file.find(key("scores"))) {
    vocab.scores = file.getFloatArray(key("scores"));
    if (vocab.scores.size() != n) {
      fail(file, key("scores") + " has " + std::to_string(vocab.scores.size()) +
                     " entries but " + key("tokens") + " has " + std::to_string(n));
    }
  }
  vocab.types = readTokenTypes(file, n);
  applyControlOverrides(vocab);
  renderHarmonyMarkers(vocab);
  checkByteTokens(file, vocab);
  if (file.find(key("merges"))) vocab.merges = file.getStringArray(key("merges"));
  if (vocab.model == "gpt2" && vocab.merges.empty()) {
    fail(file, "byte-level BPE tokenizer without merges (" + key("merges") +
                   " is missing or empty)");
  }
  vocab.addSpacePrefix = file.findBool(key("add_space_prefix"));

  SpecialTokens& special = vocab.special;
  special.bos = readSpecialId(file, "bos_token_id", n);
  special.eos = readSpecialId(file, "eos_token_id", n);
  special.eot = readSpecialId(file, "eot_token_id", n);
  special.eom = readSpecialId(file, "eom_token_id", n);
  special.unk = readSpecialId(file, "unknown_token_id", n);
  special.pad = readSpecialId(file, "padding_token_id", n);
  special.sep = readSpecialId(file, "seperator_token_id", n);  // sic: GGUF's spelling
  // SentencePiece models and Llama 3 start every prompt with BOS unless the file says otherwise.
  // (llama.cpp's list: the Llama 3 family's pre-tokenizer names, tekken and chameleon.)
  static constexpr std::array<std::string_view, 11> kBosByDefault = {
      "llama3", "llama-v3", "llama-bpe", "falcon3", "falcon-h1", "pixtral",
      "midm-2.0", "lfm2", "jina-v5-nano", "tekken", "chameleon"};
  const bool bosByDefault =
      vocab.model == "llama" ||
      std::find(kBosByDefault.begin(), kBosByDefault.end(), vocab.pre) != kBosByDefault.end();
  special.addBos = file.findBool(key("add_bos_token")).value_or(bosByDefault);
  special.addEos = file.findBool(key("add_eos_token")).value_or(false);
  addEndOfGenerationTokens(special, vocab.tokens, vocab.types);
  keepHarmonyEndInAnswer(vocab);
  return vocab;
}

}  // namespace ember
