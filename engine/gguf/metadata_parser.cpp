#include "gguf/metadata_parser.h"

#include <bit>
#include <memory>
#include <set>
#include <string_view>

#include "common/checked_math.h"
#include "gguf/gguf_file.h"

namespace ember::gguf {

namespace {

constexpr uint32_t kLastValueType = static_cast<uint32_t>(ValueType::Float64);

// Bytes one element of `type` takes at least; used to bound array counts before allocating.
uint64_t minEncodedSize(ValueType type) {
  switch (type) {
    case ValueType::UInt8:
    case ValueType::Int8:
    case ValueType::Bool: return 1;
    case ValueType::UInt16:
    case ValueType::Int16: return 2;
    case ValueType::UInt32:
    case ValueType::Int32:
    case ValueType::Float32: return 4;
    case ValueType::UInt64:
    case ValueType::Int64:
    case ValueType::Float64: return 8;
    case ValueType::String: return 8;     // the length alone
    case ValueType::Array: return 4 + 8;  // element type + count
  }
  return 1;
}

class MetadataParser {
 public:
  explicit MetadataParser(ByteCursor& cursor) : cursor_(cursor) {}

  ValueType readType(std::string_view context) {
    const uint64_t at = cursor_.position();
    const uint32_t id = cursor_.u32(std::string(context) + " type");
    if (id > kLastValueType)
      cursor_.fail(at, "unknown " + std::string(context) + " type id " + std::to_string(id) +
                           " (expected 0 to " + std::to_string(kLastValueType) + ")");
    return static_cast<ValueType>(id);
  }

  Value readValue(ValueType type, unsigned depth) {
    Value value;
    value.type = type;
    switch (type) {
      case ValueType::UInt8: value.data = uint64_t{cursor_.u8("a uint8 value")}; break;
      case ValueType::Int8:
        value.data = int64_t{static_cast<int8_t>(cursor_.u8("an int8 value"))};
        break;
      case ValueType::UInt16: value.data = uint64_t{cursor_.u16("a uint16 value")}; break;
      case ValueType::Int16:
        value.data = int64_t{static_cast<int16_t>(cursor_.u16("an int16 value"))};
        break;
      case ValueType::UInt32: value.data = uint64_t{cursor_.u32("a uint32 value")}; break;
      case ValueType::Int32:
        value.data = int64_t{static_cast<int32_t>(cursor_.u32("an int32 value"))};
        break;
      case ValueType::UInt64: value.data = cursor_.u64("a uint64 value"); break;
      case ValueType::Int64:
        value.data = static_cast<int64_t>(cursor_.u64("an int64 value"));
        break;
      case ValueType::Float32:
        value.data = static_cast<double>(std::bit_cast<float>(cursor_.u32("a float32 value")));
        break;
      case ValueType::Float64: value.data = std::bit_cast<double>(cursor_.u64("a float64 value")); break;
      case ValueType::Bool: value.data = readBool(); break;
      case ValueType::String: value.data = std::string(cursor_.string("a string value")); break;
      case ValueType::Array: value.data = readArray(depth + 1); break;
    }
    return value;
  }

 private:
  bool readBool() {
    const uint64_t at = cursor_.position();
    const uint8_t byte = cursor_.u8("a bool value");
    if (byte > 1) cursor_.fail(at, "bool value " + std::to_string(byte) + " is neither 0 nor 1");
    return byte == 1;
  }

  Array readArray(unsigned depth) {
    const uint64_t start = cursor_.position();
    if (depth > kMaxArrayNesting)
      cursor_.fail(start, "arrays nested " + std::to_string(depth) +
                              " levels deep (expected at most " + std::to_string(kMaxArrayNesting) +
                              ")");
    Array array;
    array.elementType = readType("array element");
    const uint64_t countAt = cursor_.position();
    const uint64_t count = cursor_.u64("the array length");
    const uint64_t fits = cursor_.remaining() / minEncodedSize(array.elementType);
    if (count > fits)
      cursor_.fail(countAt, "array length " + std::to_string(count) +
                                " is larger than the file could hold (expected at most " +
                                std::to_string(fits) + " " +
                                std::string(valueTypeName(array.elementType)) + " elements)");
    if (count >= kPackedArrayItems && (array.elementType == ValueType::String ||
                                       packedWidth(array.elementType) > 0)) {
      array.packed = readPacked(array.elementType, count);
      return array;
    }
    array.items.reserve(count);
    for (uint64_t i = 0; i < count; ++i) array.items.push_back(readValue(array.elementType, depth));
    return array;
  }

  // The items of a long array of numbers or strings, kept encoded (see Array::packed).
  std::shared_ptr<const PackedItems> readPacked(ValueType type, uint64_t count) {
    auto packed = std::make_shared<PackedItems>();
    packed->count = static_cast<size_t>(count);
    if (type != ValueType::String) {
      packed->bytes = std::string(cursor_.bytes(count * packedWidth(type), "the array items"));
      return packed;
    }
    // Two passes over the strings: the first checks them and sizes the buffer.
    const uint64_t start = cursor_.position();
    uint64_t total = 0;
    for (uint64_t i = 0; i < count; ++i) total += cursor_.string("a string value").size();
    cursor_.seek(start);
    packed->bytes.reserve(static_cast<size_t>(total));
    packed->stringEnds.reserve(static_cast<size_t>(count));
    for (uint64_t i = 0; i < count; ++i) {
      packed->bytes.append(cursor_.string("a string value"));
      packed->stringEnds.push_back(packed->bytes.size());
    }
    return packed;
  }

  ByteCursor& cursor_;
};

void validateAlignment(const ByteCursor& cursor, const Value& value, uint64_t at,
                       ParsedMetadata& out) {
  if (value.type != ValueType::UInt32)
    cursor.fail(at, "general.alignment is stored as " + std::string(valueTypeName(value.type)) +
                        " (expected uint32)");
  const uint64_t alignment = value.asUInt();
  if (!isPowerOfTwo(alignment))
    cursor.fail(at, "general.alignment is " + std::to_string(alignment) +
                        " (expected a non-zero power of two)");
  out.alignment = alignment;
}

}  // namespace

ParsedMetadata parseMetadata(ByteCursor& cursor, uint64_t count) {
  ParsedMetadata out;
  std::set<std::string, std::less<>> seen;
  MetadataParser parser(cursor);
  for (uint64_t i = 0; i < count; ++i) {
    const uint64_t entryAt = cursor.position();
    const std::string_view key = cursor.string("a metadata key");
    if (key.empty()) cursor.fail(entryAt, "metadata key " + std::to_string(i) + " is empty");
    if (key.size() > kMaxKeyBytes)
      cursor.fail(entryAt, "metadata key is " + std::to_string(key.size()) +
                               " bytes long (expected at most " + std::to_string(kMaxKeyBytes) +
                               ")");
    if (!seen.emplace(key).second)
      cursor.fail(entryAt, "duplicate metadata key '" + std::string(key) + "'");
    uint64_t valueAt = 0;
    Value value;
    try {
      const ValueType type = parser.readType("metadata value");
      valueAt = cursor.position();
      value = parser.readValue(type, 0);
    } catch (const GgufError& e) {
      // Say whose value was broken: "... (in the value of 'tokenizer.ggml.tokens')".
      throw GgufError(e.file(), e.offset(),
                      e.detail() + " (in the value of '" + std::string(key) + "')");
    }
    if (key == "general.alignment") validateAlignment(cursor, value, valueAt, out);
    out.entries.emplace_back(std::string(key), std::move(value));
    out.valueOffsets.push_back(valueAt);
  }
  return out;
}

}  // namespace ember::gguf
