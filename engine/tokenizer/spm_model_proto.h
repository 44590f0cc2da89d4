#pragma once
// A minimal writer and reader of sentencepiece's ModelProto in protobuf wire format, so that the
// engine can hand libsentencepiece a model built from a GGUF vocabulary (and read the settings of
// a tokenizer.model file) without protobuf or sentencepiece_model.pb.h.
//
// Only the fields below are written or read; others are skipped when reading. Field numbers come
// from sentencepiece's src/sentencepiece_model.proto:
//   ModelProto     pieces=1 trainer_spec=2 normalizer_spec=3
//   SentencePiece  piece=1 score=2 (float) type=3
//   TrainerSpec    model_type=3 treat_whitespace_as_suffix=24 byte_fallback=35 unk_id=40
//                  bos_id=41 eos_id=42 pad_id=43 unk_piece=45 bos_piece=46 eos_piece=47
//                  pad_piece=48
//   NormalizerSpec name=1 add_dummy_prefix=3 remove_extra_whitespaces=4 escape_whitespaces=5
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "tokenizer/tokenizer.h"

namespace ember::spm {

// SentencePiece's piece types have the same numbers as TokenType (NORMAL=1 ... BYTE=6).
struct ModelPiece {
  std::string text;
  float score = 0.0f;
  TokenType type = TokenType::Normal;
};

enum class ModelType : int32_t { Unigram = 1, Bpe = 2, Word = 3, Char = 4 };

// Defaults are the .proto's defaults, so a field absent from a file reads as the library sees it.
struct TrainerSpec {
  ModelType modelType = ModelType::Unigram;
  bool treatWhitespaceAsSuffix = false;
  bool byteFallback = false;
  int32_t unkId = 0;
  int32_t bosId = 1;
  int32_t eosId = 2;
  int32_t padId = -1;
  std::string unkPiece = "<unk>";
  std::string bosPiece = "<s>";
  std::string eosPiece = "</s>";
  std::string padPiece = "<pad>";
};

struct NormalizerSpec {
  std::string name;
  bool addDummyPrefix = true;
  bool removeExtraWhitespaces = true;
  bool escapeWhitespaces = true;
  bool hasCharsMap = false;  // read only: a precompiled_charsmap is present (never written)
};

struct ModelProto {
  std::vector<ModelPiece> pieces;
  TrainerSpec trainer;
  NormalizerSpec normalizer;
};

// Serializes the fields listed above.
std::string serializeModelProto(const ModelProto& model);

// Parses a serialized ModelProto; throws ember::Error saying what is malformed and where.
ModelProto parseModelProto(std::string_view bytes);

}  // namespace ember::spm
