#pragma once
// One GGUF metadata value: a scalar, a string, or a (possibly nested) array of one element type.
#include <cstdint>
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
struct Array {
  ValueType elementType = ValueType::UInt8;
  std::vector<Value> items;
};

struct Value {
  ValueType type = ValueType::UInt8;
  // Unsigned integers are held as uint64_t, signed ones as int64_t, floats as double.
  std::variant<uint64_t, int64_t, double, bool, std::string, Array> data;

  bool isInteger() const;
  bool isFloat() const;
  // Numeric conversions; throw ember::Error when the value is not numeric or out of range.
  int64_t asInt() const;
  uint64_t asUInt() const;
  double asFloat() const;
  bool asBool() const;  // throws unless type == Bool
  const std::string& asString() const;  // throws unless type == String
  const Array& asArray() const;         // throws unless type == Array
};

}  // namespace ember::gguf
