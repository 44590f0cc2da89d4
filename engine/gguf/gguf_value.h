#pragma once
// One GGUF metadata value: a scalar, a string, or a (possibly nested) array of one element type.
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace ember::gguf {

enum class ValueType : uint32_t {
  UInt8 = 0, Int8 = 1, UInt16 = 2, Int16 = 3, UInt32 = 4, Int32 = 5, Float32 = 6, Bool = 7,
  String = 8, Array = 9, UInt64 = 10, Int64 = 11, Float64 = 12,
};
std::string_view valueTypeName(ValueType type);

struct Value;
struct PackedItems;
struct Array {
  ValueType elementType = ValueType::UInt8;
  // The items of a built array, and of a small one read from a file.
  std::vector<Value> items;
  // A long array of numbers or strings read from a file is kept in its encoded form instead, with
  // `items` empty: one Value per item took 48 bytes, 38 MB for a 262144-token vocabulary. Shared
  // and immutable, so copies of the Value stay cheap and outlive the file.
  std::shared_ptr<const PackedItems> packed;

  // Readers go through these, which see both forms.
  size_t size() const;
  bool empty() const { return size() == 0; }
  Value at(size_t index) const;  // throws ember::Error when index >= size()
  // Item `index` of an array of strings, without a copy; throws unless elementType == String.
  std::string_view stringAt(size_t index) const;
  bool operator==(const Array& other) const;  // same element type and equal items
};

struct Value {
  ValueType type = ValueType::UInt8;
  // Unsigned integers are held as uint64_t, signed ones as int64_t, floats as double.
  std::variant<uint64_t, int64_t, double, bool, std::string, Array> data;
  bool operator==(const Value&) const = default;  // same type and same data (NaN != NaN)

  bool isInteger() const;
  bool isFloat() const;
  // Numeric conversions; throw ember::Error when the value is not numeric or out of range.
  int64_t asInt() const;
  uint64_t asUInt() const;
  double asFloat() const;
  bool asBool() const;                  // throws unless type == Bool
  const std::string& asString() const;  // throws unless type == String
  const Array& asArray() const;         // throws unless type == Array

  // Construction with the matching GGUF type (for writers and tests).
  static Value makeUInt8(uint8_t v) { return {ValueType::UInt8, uint64_t{v}}; }
  static Value makeInt8(int8_t v) { return {ValueType::Int8, int64_t{v}}; }
  static Value makeUInt16(uint16_t v) { return {ValueType::UInt16, uint64_t{v}}; }
  static Value makeInt16(int16_t v) { return {ValueType::Int16, int64_t{v}}; }
  static Value makeUInt32(uint32_t v) { return {ValueType::UInt32, uint64_t{v}}; }
  static Value makeInt32(int32_t v) { return {ValueType::Int32, int64_t{v}}; }
  static Value makeUInt64(uint64_t v) { return {ValueType::UInt64, v}; }
  static Value makeInt64(int64_t v) { return {ValueType::Int64, v}; }
  static Value makeFloat32(float v) { return {ValueType::Float32, double{v}}; }
  static Value makeFloat64(double v) { return {ValueType::Float64, v}; }
  static Value makeBool(bool v) { return {ValueType::Bool, v}; }
  static Value makeString(std::string v) { return {ValueType::String, std::move(v)}; }
  // Throws ember::Error when an item's type differs from elementType.
  static Value makeArray(ValueType elementType, std::vector<Value> items);
  static Value makeStringArray(const std::vector<std::string>& items);
};

// The encoded items of a long array (see Array::packed): numbers as GGUF stores them, little-endian
// and packedWidth(type) bytes each; strings one after another, stringEnds[i] being where string i
// ends in `bytes`.
struct PackedItems {
  size_t count = 0;
  std::string bytes;
  std::vector<uint64_t> stringEnds;  // (count) for arrays of strings, else empty
};
// Bytes per packed item of a number type; 0 for the types that are never packed.
size_t packedWidth(ValueType type);

}  // namespace ember::gguf
