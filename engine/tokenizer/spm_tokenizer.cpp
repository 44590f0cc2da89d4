#include "tokenizer/spm_tokenizer.h"

#include <sentencepiece_processor.h>

#include <cstdlib>
#include <fstream>
#include <future>
#include <optional>
#include <sstream>
#include <unordered_map>

#include "ember/error.h"
#include "tokenizer/spm_encoder.h"
#include "tokenizer/spm_model_proto.h"

namespace ember {
namespace {

constexpr std::string_view kSpaceSymbol = "\xE2\x96\x81";  // U+2581, SentencePiece's space
constexpr std::string_view kUnknownSurface = " \xE2\x81\x87 ";  // libsentencepiece's unk text

std::string replaceAll(std::string_view text, std::string_view from, std::string_view to) {
  std::string out;
  out.reserve(text.size());
  size_t start = 0;
  for (size_t hit = text.find(from); hit != std::string_view::npos;
       hit = text.find(from, start)) {
    out.append(text.substr(start, hit - start)).append(to);
    start = hit + from.size();
  }
  out.append(text.substr(start));
  return out;
}

// "<0xHH>" -> the byte; -1 when the piece is not spelled that way.
int byteOfPiece(std::string_view piece) {
  if (piece.size() != 6 || !piece.starts_with("<0x") || piece.back() != '>') return -1;
  int value = 0;
  for (char c : piece.substr(3, 2)) {
    int digit = -1;
    if (c >= '0' && c <= '9') digit = c - '0';
    if (c >= 'A' && c <= 'F') digit = c - 'A' + 10;
    if (c >= 'a' && c <= 'f') digit = c - 'a' + 10;
    if (digit < 0) return -1;
    value = value * 16 + digit;
  }
  return value;
}

// Whether decoding drops the space the dummy prefix added. libsentencepiece adds the prefix to
// every string it encodes; the engine encodes text in fragments split at special tokens, so each
// fragment gets one, which is what llama.cpp does (a space after every special token, as in
// Llama 2's "<s>[INST]" -> "<s>", "▁[", "INST", "]").
bool modelAddsDummyPrefix(const spm::ModelProto& model) {
  return model.normalizer.addDummyPrefix && !model.trainer.treatWhitespaceAsSuffix;
}

class SentencePieceTokenizer final : public Tokenizer {
 public:
  // Encodes with libsentencepiece once loadModel has run, or with Ember's own encoder once
  // useOwnEncoder has.
  explicit SentencePieceTokenizer(bool addsDummyPrefix) : addsDummyPrefix_(addsDummyPrefix) {}
  // The own encoder refers to this object's vocabulary, so it stays where it was built.
  SentencePieceTokenizer(const SentencePieceTokenizer&) = delete;
  SentencePieceTokenizer& operator=(const SentencePieceTokenizer&) = delete;

  // After setVocabulary: the texts, types and index the encoder reads are in place.
  void useOwnEncoder(std::vector<float> scores, SpmPieceRules rules) {
    encoder_ = std::make_unique<SpmEncoder>(*this, tokenTexts_, tokenTypes_, std::move(scores),
                                            std::move(rules), addsDummyPrefix_);
  }

  // loadModel and setVocabulary touch separate members, so they may run on two threads at once;
  // checkPieceCount once both are done.
  void loadModel(std::string_view serializedModel, const std::string& origin) {
    processor_ = std::make_unique<sentencepiece::SentencePieceProcessor>();
    const auto status = processor_->LoadFromSerializedProto(serializedModel);
    if (!status.ok()) {
      throw Error("libsentencepiece rejected the tokenizer of " + origin + ": " +
                  status.ToString());
    }
  }

  void setVocabulary(std::vector<std::string> texts, std::vector<TokenType> types,
                     SpecialTokens special) {
    tokenTexts_ = std::move(texts);
    tokenTypes_ = std::move(types);
    special_ = std::move(special);
    finishVocabulary();
  }

  void checkPieceCount(const std::string& origin) const {
    if (processor_->GetPieceSize() != static_cast<int>(tokenTexts_.size())) {
      throw Error("libsentencepiece loaded " + std::to_string(processor_->GetPieceSize()) +
                  " pieces from " + origin + ", expected " + std::to_string(tokenTexts_.size()));
    }
  }

  std::string tokenBytes(TokenId id, bool renderSpecial) const override {
    if (id < 0 || static_cast<size_t>(id) >= tokenTexts_.size()) {
      throw Error("token id " + std::to_string(id) + " is outside the vocabulary of " +
                  std::to_string(tokenTexts_.size()) + " tokens");
    }
    const std::string& text = tokenTexts_[static_cast<size_t>(id)];
    switch (tokenTypes_[static_cast<size_t>(id)]) {
      case TokenType::Control: return renderSpecial ? text : std::string();
      case TokenType::Unknown: return renderSpecial ? text : std::string(kUnknownSurface);
      case TokenType::Byte: {
        const int byte = byteOfPiece(text);
        if (byte >= 0) return std::string(1, static_cast<char>(byte));
        return text;
      }
      default: return replaceAll(text, kSpaceSymbol, " ");
    }
  }

  size_t vocabSize() const override { return tokenTexts_.size(); }
  bool stripsLeadingSpace() const override { return addsDummyPrefix_; }
  std::string_view kindName() const override { return "sentencepiece"; }
  SpmEncoderChoice encoderChoice() const {
    return encoder_ ? SpmEncoderChoice::Own : SpmEncoderChoice::Library;
  }

 protected:
  void encodeFragment(std::string_view fragment, std::vector<TokenId>& out) const override {
    if (encoder_) return encoder_->encode(fragment, out);
    if (fragment.empty()) return;  // the library gives no dummy prefix to empty text either
    std::vector<int> ids;
    const auto status = processor_->Encode(fragment, &ids);
    if (!status.ok()) throw Error("libsentencepiece could not encode text: " + status.ToString());
    out.insert(out.end(), ids.begin(), ids.end());
  }

 private:
  bool addsDummyPrefix_;
  std::unique_ptr<sentencepiece::SentencePieceProcessor> processor_;
  std::unique_ptr<SpmEncoder> encoder_;
};

std::optional<TokenId> idWithin(int32_t id, size_t vocabSize) {
  if (id < 0 || static_cast<size_t>(id) >= vocabSize) return std::nullopt;
  return id;
}

// The piece count, after checking that every piece has a score (both encoders need them).
size_t checkedPieceCount(const GgufVocabulary& vocab) {
  const size_t n = vocab.tokens.size();
  if (n == 0) throw Error("the SentencePiece vocabulary (tokenizer.ggml.tokens) is empty");
  if (vocab.scores.size() != n) {
    throw Error("a SentencePiece vocabulary needs tokenizer.ggml.scores for each of its " +
                std::to_string(n) + " tokens (found " + std::to_string(vocab.scores.size()) +
                ")");
  }
  return n;
}

spm::ModelProto modelFromVocabulary(const GgufVocabulary& vocab) {
  const size_t n = checkedPieceCount(vocab);
  spm::ModelProto model;
  model.pieces.resize(n);
  const SpmPieceRules rules = spmPieceRulesOf(vocab.tokens, vocab.types, vocab.special.unk);
  for (size_t i = 0; i < n; ++i) {
    spm::ModelPiece& piece = model.pieces[i];
    piece.text = vocab.tokens[i];
    piece.score = vocab.scores[i];
    piece.type = i < vocab.types.size() ? vocab.types[i] : TokenType::Normal;
    if (piece.type == TokenType::Undefined) piece.type = TokenType::Normal;
    // Only one piece may be UNKNOWN; the others count as unused (see spmPieceRulesOf).
    if (piece.type == TokenType::Unknown) piece.type = TokenType::Unused;
  }
  model.pieces[static_cast<size_t>(rules.unknown)].type = TokenType::Unknown;
  model.trainer.unkId = rules.unknown;
  model.trainer.byteFallback = rules.byteFallback;
  for (const auto& [id, text] : rules.respelled) model.pieces[static_cast<size_t>(id)].text = text;

  // tokenizer.ggml.model "llama" means score-ordered merging of adjacent pieces with byte
  // fallback, which is libsentencepiece's BPE model (Llama 2's and Gemma's tokenizer.model are
  // BPE models too); Viterbi (UNIGRAM) would segment differently.
  spm::TrainerSpec& trainer = model.trainer;
  trainer.modelType = spm::ModelType::Bpe;
  auto pieceName = [&](std::optional<TokenId> id, std::string& name) {
    if (id) name = vocab.tokens[static_cast<size_t>(*id)];
    return id ? *id : -1;
  };
  trainer.unkPiece = vocab.tokens[static_cast<size_t>(trainer.unkId)];
  trainer.bosId = pieceName(vocab.special.bos, trainer.bosPiece);
  trainer.eosId = pieceName(vocab.special.eos, trainer.eosPiece);
  trainer.padId = pieceName(vocab.special.pad, trainer.padPiece);

  model.normalizer.name = "identity";  // no precompiled charsmap: the text is used as given
  model.normalizer.addDummyPrefix = vocab.addSpacePrefix.value_or(true);
  model.normalizer.removeExtraWhitespaces = false;
  model.normalizer.escapeWhitespaces = true;
  return model;
}

std::string readWholeFile(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error("cannot open SentencePiece model " + path.string());
  std::ostringstream bytes;
  bytes << in.rdbuf();
  if (in.bad()) throw Error("cannot read SentencePiece model " + path.string());
  return std::move(bytes).str();
}

std::unique_ptr<Tokenizer> makeLibraryTokenizer(const GgufVocabulary& vocab) {
  const std::string origin = "the GGUF vocabulary";
  std::string serialized;
  bool addsDummyPrefix = false;
  {
    const spm::ModelProto model = modelFromVocabulary(vocab);  // freed before the library loads
    serialized = spm::serializeModelProto(model);
    addsDummyPrefix = modelAddsDummyPrefix(model);
  }
  auto tokenizer = std::make_unique<SentencePieceTokenizer>(addsDummyPrefix);
  // libsentencepiece's load and the engine's own copy and index of the texts do not depend on
  // each other: the library loads on a second thread meanwhile.
  auto library = std::async(std::launch::async,
                            [&] { tokenizer->loadModel(serialized, origin); });
  try {
    std::vector<TokenType> types = vocab.types;
    types.resize(vocab.tokens.size(), TokenType::Normal);
    tokenizer->setVocabulary(vocab.tokens, std::move(types), vocab.special);
  } catch (...) {
    library.wait();  // the task refers to this frame
    throw;
  }
  library.get();  // rethrows the library's refusal
  tokenizer->checkPieceCount(origin);
  return tokenizer;
}

}  // namespace

SpmEncoderChoice defaultSpmEncoder() {
  const char* value = std::getenv("EMBER_SPM_ENCODER");
  if (value == nullptr || *value == '\0' || std::string_view(value) == "ember")
    return SpmEncoderChoice::Own;
  if (std::string_view(value) == "libsentencepiece") return SpmEncoderChoice::Library;
  throw Error("EMBER_SPM_ENCODER is '" + std::string(value) +
              "'; it may be 'ember' (the default) or 'libsentencepiece'");
}

std::unique_ptr<Tokenizer> makeSentencePieceTokenizer(const GgufVocabulary& vocab) {
  return makeSentencePieceTokenizer(vocab, defaultSpmEncoder());
}

std::unique_ptr<Tokenizer> makeSentencePieceTokenizer(const GgufVocabulary& vocab,
                                                      SpmEncoderChoice choice) {
  if (choice == SpmEncoderChoice::Library) return makeLibraryTokenizer(vocab);
  const size_t n = checkedPieceCount(vocab);
  SpmPieceRules rules = spmPieceRulesOf(vocab.tokens, vocab.types, vocab.special.unk);
  // The same settings modelFromVocabulary gives the library: dummy prefix unless the GGUF says
  // otherwise, no whitespace removal, no charsmap.
  auto tokenizer = std::make_unique<SentencePieceTokenizer>(vocab.addSpacePrefix.value_or(true));
  std::vector<TokenType> types = vocab.types;
  types.resize(n, TokenType::Normal);
  tokenizer->setVocabulary(vocab.tokens, std::move(types), vocab.special);
  tokenizer->useOwnEncoder(vocab.scores, std::move(rules));
  return tokenizer;
}

std::optional<SpmEncoderChoice> spmEncoderOf(const Tokenizer& tokenizer) {
  const auto* spm = dynamic_cast<const SentencePieceTokenizer*>(&tokenizer);
  if (spm == nullptr) return std::nullopt;
  return spm->encoderChoice();
}

std::string sentencePieceModelOf(const GgufVocabulary& vocab) {
  return spm::serializeModelProto(modelFromVocabulary(vocab));
}

std::unique_ptr<Tokenizer> makeSentencePieceTokenizerFromModelFile(
    const std::filesystem::path& path) {
  const std::string origin = path.string();
  std::string bytes = readWholeFile(path);
  spm::ModelProto model;
  try {
    model = spm::parseModelProto(bytes);
  } catch (const Error& e) {
    throw Error(origin + ": " + e.what());
  }
  if (model.pieces.empty()) throw Error(origin + " is not a SentencePiece model: it has no pieces");
  auto tokenizer = std::make_unique<SentencePieceTokenizer>(modelAddsDummyPrefix(model));
  tokenizer->loadModel(bytes, origin);

  const size_t n = model.pieces.size();
  std::vector<std::string> texts;
  std::vector<TokenType> types;
  texts.reserve(n);
  types.reserve(n);
  SpecialTokens special;
  for (size_t i = 0; i < n; ++i) {
    texts.push_back(std::move(model.pieces[i].text));
    types.push_back(model.pieces[i].type);
    if (types.back() == TokenType::Unknown && !special.unk) special.unk = static_cast<TokenId>(i);
  }
  special.bos = idWithin(model.trainer.bosId, n);
  special.eos = idWithin(model.trainer.eosId, n);
  special.pad = idWithin(model.trainer.padId, n);
  // SentencePiece-trained models expect BOS first, as llama.cpp assumes for "llama" vocabularies.
  special.addBos = special.bos.has_value();
  if (special.eos) special.endOfGeneration.push_back(*special.eos);
  tokenizer->setVocabulary(std::move(texts), std::move(types), std::move(special));
  tokenizer->checkPieceCount(origin);
  return tokenizer;
}

}  // namespace ember
