#include "tokenizer/spm_model_proto.h"

#include <bit>
#include <cstring>

#include "ember/error.h"

namespace ember::spm {
namespace {

// Protobuf wire types.
constexpr int kVarint = 0;
constexpr int kFixed64 = 1;
constexpr int kLengthDelimited = 2;
constexpr int kFixed32 = 5;

namespace field {
constexpr uint32_t kModelPieces = 1, kModelTrainerSpec = 2, kModelNormalizerSpec = 3;
constexpr uint32_t kPieceText = 1, kPieceScore = 2, kPieceType = 3;
constexpr uint32_t kTrainerModelType = 3, kTrainerTreatWhitespaceAsSuffix = 24,
                   kTrainerByteFallback = 35, kTrainerUnkId = 40, kTrainerBosId = 41,
                   kTrainerEosId = 42, kTrainerPadId = 43, kTrainerUnkPiece = 45,
                   kTrainerBosPiece = 46, kTrainerEosPiece = 47, kTrainerPadPiece = 48;
constexpr uint32_t kNormalizerName = 1, kNormalizerCharsMap = 2, kNormalizerAddDummyPrefix = 3,
                   kNormalizerRemoveExtraWhitespaces = 4, kNormalizerEscapeWhitespaces = 5;
}  // namespace field

class WireWriter {
 public:
  void varint(uint64_t value) {
    while (value >= 0x80) {
      out_.push_back(static_cast<char>((value & 0x7F) | 0x80));
      value >>= 7;
    }
    out_.push_back(static_cast<char>(value));
  }
  void tag(uint32_t number, int wireType) { varint((uint64_t{number} << 3) | wireType); }
  void uint64Field(uint32_t number, uint64_t value) {
    tag(number, kVarint);
    varint(value);
  }
  // int32 fields encode negative values as ten-byte two's complement varints.
  void int32Field(uint32_t number, int32_t value) {
    uint64Field(number, static_cast<uint64_t>(static_cast<int64_t>(value)));
  }
  void boolField(uint32_t number, bool value) { uint64Field(number, value ? 1 : 0); }
  void bytesField(uint32_t number, std::string_view bytes) {
    tag(number, kLengthDelimited);
    varint(bytes.size());
    out_.append(bytes);
  }
  void floatField(uint32_t number, float value) {
    tag(number, kFixed32);
    const uint32_t bits = std::bit_cast<uint32_t>(value);
    for (int shift = 0; shift < 32; shift += 8) out_.push_back(static_cast<char>(bits >> shift));
  }
  std::string& bytes() { return out_; }
  void clear() { out_.clear(); }

 private:
  std::string out_;
};

struct WireField {
  uint32_t number = 0;
  int wireType = 0;
  uint64_t integer = 0;    // varint, fixed32 and fixed64 values
  std::string_view bytes;  // length-delimited payload
};

// Reads fields one after another, checking every length against the remaining bytes.
class WireReader {
 public:
  WireReader(std::string_view data, std::string_view context) : data_(data), context_(context) {}

  bool atEnd() const { return pos_ >= data_.size(); }

  WireField next() {
    WireField f;
    const size_t start = pos_;
    const uint64_t key = varint();
    f.number = static_cast<uint32_t>(key >> 3);
    f.wireType = static_cast<int>(key & 7);
    if (f.number == 0) fail(start, "field number 0");
    switch (f.wireType) {
      case kVarint: f.integer = varint(); break;
      case kFixed64: f.integer = fixed(8); break;
      case kFixed32: f.integer = fixed(4); break;
      case kLengthDelimited: {
        const uint64_t length = varint();
        if (length > data_.size() - pos_) fail(start, "a length past the end of the data");
        f.bytes = data_.substr(pos_, static_cast<size_t>(length));
        pos_ += static_cast<size_t>(length);
        break;
      }
      default: fail(start, "unsupported wire type " + std::to_string(f.wireType));
    }
    return f;
  }

  // Rejects a known field whose wire type is not the one the .proto gives it.
  void expect(const WireField& f, int wireType) const {
    if (f.wireType != wireType) {
      throw Error("malformed SentencePiece model: " + std::string(context_) + " field " +
                  std::to_string(f.number) + " has wire type " + std::to_string(f.wireType) +
                  ", expected " + std::to_string(wireType));
    }
  }

 private:
  uint64_t varint() {
    uint64_t value = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (pos_ >= data_.size()) fail(pos_, "a truncated varint");
      const auto byte = static_cast<uint8_t>(data_[pos_++]);
      value |= uint64_t{byte & 0x7Fu} << shift;
      if ((byte & 0x80) == 0) return value;
    }
    fail(pos_, "a varint longer than ten bytes");
  }
  uint64_t fixed(size_t width) {
    if (data_.size() - pos_ < width) fail(pos_, "a truncated fixed-width value");
    uint64_t value = 0;
    for (size_t i = 0; i < width; ++i)
      value |= uint64_t{static_cast<uint8_t>(data_[pos_ + i])} << (8 * i);
    pos_ += width;
    return value;
  }
  [[noreturn]] void fail(size_t offset, const std::string& what) const {
    throw Error("malformed SentencePiece model: " + what + " in " + std::string(context_) +
                " at byte " + std::to_string(offset));
  }

  std::string_view data_;
  std::string_view context_;
  size_t pos_ = 0;
};

float floatFromBits(uint64_t bits) { return std::bit_cast<float>(static_cast<uint32_t>(bits)); }
// int32 fields arrive as 64-bit two's complement; the low 32 bits are the value.
int32_t int32FromVarint(uint64_t value) {
  return static_cast<int32_t>(static_cast<uint32_t>(value));
}

ModelPiece parsePiece(std::string_view bytes) {
  ModelPiece piece;
  WireReader reader(bytes, "SentencePiece");
  while (!reader.atEnd()) {
    const WireField f = reader.next();
    if (f.number == field::kPieceText) {
      reader.expect(f, kLengthDelimited);
      piece.text = std::string(f.bytes);
    } else if (f.number == field::kPieceScore) {
      reader.expect(f, kFixed32);
      piece.score = floatFromBits(f.integer);
    } else if (f.number == field::kPieceType) {
      reader.expect(f, kVarint);
      piece.type = static_cast<TokenType>(int32FromVarint(f.integer));
    }
  }
  return piece;
}

void parseTrainerSpec(std::string_view bytes, TrainerSpec& spec) {
  WireReader reader(bytes, "TrainerSpec");
  while (!reader.atEnd()) {
    const WireField f = reader.next();
    auto integer = [&] {
      reader.expect(f, kVarint);
      return int32FromVarint(f.integer);
    };
    auto text = [&] {
      reader.expect(f, kLengthDelimited);
      return std::string(f.bytes);
    };
    switch (f.number) {
      case field::kTrainerModelType: spec.modelType = static_cast<ModelType>(integer()); break;
      case field::kTrainerTreatWhitespaceAsSuffix:
        spec.treatWhitespaceAsSuffix = integer() != 0;
        break;
      case field::kTrainerByteFallback: spec.byteFallback = integer() != 0; break;
      case field::kTrainerUnkId: spec.unkId = integer(); break;
      case field::kTrainerBosId: spec.bosId = integer(); break;
      case field::kTrainerEosId: spec.eosId = integer(); break;
      case field::kTrainerPadId: spec.padId = integer(); break;
      case field::kTrainerUnkPiece: spec.unkPiece = text(); break;
      case field::kTrainerBosPiece: spec.bosPiece = text(); break;
      case field::kTrainerEosPiece: spec.eosPiece = text(); break;
      case field::kTrainerPadPiece: spec.padPiece = text(); break;
      default: break;
    }
  }
}

void parseNormalizerSpec(std::string_view bytes, NormalizerSpec& spec) {
  WireReader reader(bytes, "NormalizerSpec");
  while (!reader.atEnd()) {
    const WireField f = reader.next();
    auto flag = [&] {
      reader.expect(f, kVarint);
      return f.integer != 0;
    };
    switch (f.number) {
      case field::kNormalizerName:
        reader.expect(f, kLengthDelimited);
        spec.name = std::string(f.bytes);
        break;
      case field::kNormalizerCharsMap:
        reader.expect(f, kLengthDelimited);
        spec.hasCharsMap = !f.bytes.empty();
        break;
      case field::kNormalizerAddDummyPrefix: spec.addDummyPrefix = flag(); break;
      case field::kNormalizerRemoveExtraWhitespaces: spec.removeExtraWhitespaces = flag(); break;
      case field::kNormalizerEscapeWhitespaces: spec.escapeWhitespaces = flag(); break;
      default: break;
    }
  }
}

}  // namespace

std::string serializeModelProto(const ModelProto& model) {
  WireWriter out;
  WireWriter sub;
  out.bytes().reserve(model.pieces.size() * 24);
  for (const ModelPiece& piece : model.pieces) {
    sub.clear();
    sub.bytesField(field::kPieceText, piece.text);
    sub.floatField(field::kPieceScore, piece.score);
    sub.uint64Field(field::kPieceType, static_cast<uint64_t>(piece.type));
    out.bytesField(field::kModelPieces, sub.bytes());
  }

  const TrainerSpec& t = model.trainer;
  sub.clear();
  sub.uint64Field(field::kTrainerModelType, static_cast<uint64_t>(t.modelType));
  sub.boolField(field::kTrainerTreatWhitespaceAsSuffix, t.treatWhitespaceAsSuffix);
  sub.boolField(field::kTrainerByteFallback, t.byteFallback);
  sub.int32Field(field::kTrainerUnkId, t.unkId);
  sub.int32Field(field::kTrainerBosId, t.bosId);
  sub.int32Field(field::kTrainerEosId, t.eosId);
  sub.int32Field(field::kTrainerPadId, t.padId);
  sub.bytesField(field::kTrainerUnkPiece, t.unkPiece);
  sub.bytesField(field::kTrainerBosPiece, t.bosPiece);
  sub.bytesField(field::kTrainerEosPiece, t.eosPiece);
  sub.bytesField(field::kTrainerPadPiece, t.padPiece);
  out.bytesField(field::kModelTrainerSpec, sub.bytes());

  const NormalizerSpec& n = model.normalizer;
  sub.clear();
  sub.bytesField(field::kNormalizerName, n.name);
  sub.boolField(field::kNormalizerAddDummyPrefix, n.addDummyPrefix);
  sub.boolField(field::kNormalizerRemoveExtraWhitespaces, n.removeExtraWhitespaces);
  sub.boolField(field::kNormalizerEscapeWhitespaces, n.escapeWhitespaces);
  out.bytesField(field::kModelNormalizerSpec, sub.bytes());
  return std::move(out.bytes());
}

ModelProto parseModelProto(std::string_view bytes) {
  ModelProto model;
  WireReader reader(bytes, "ModelProto");
  while (!reader.atEnd()) {
    const WireField f = reader.next();
    switch (f.number) {
      case field::kModelPieces:
        reader.expect(f, kLengthDelimited);
        model.pieces.push_back(parsePiece(f.bytes));
        break;
      case field::kModelTrainerSpec:
        reader.expect(f, kLengthDelimited);
        parseTrainerSpec(f.bytes, model.trainer);  // repeated occurrences merge, as in protobuf
        break;
      case field::kModelNormalizerSpec:
        reader.expect(f, kLengthDelimited);
        parseNormalizerSpec(f.bytes, model.normalizer);
        break;
      default: break;
    }
  }
  return model;
}

}  // namespace ember::spm
