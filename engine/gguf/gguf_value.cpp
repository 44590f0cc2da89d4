#include "gguf/gguf_value.h"

#include <bit>
#include <cstring>
#include <limits>
#include <string>

#include "ember/error.h"

namespace ember::gguf {

std::string_view valueTypeName(ValueType type) {
  switch (type) {
    case ValueType::UInt8: return "uint8";
    case ValueType::Int8: return "int8";
    case ValueType::UInt16: return "uint16";
    case ValueType::Int16: return "int16";
    case ValueType::UInt32: return "uint32";
    case ValueType::Int32: return "int32";
    case ValueType::Float32: return "float32";
    case ValueType::Bool: return "bool";
    case ValueType::String: return "string";
    case ValueType::Array: return "array";
    case ValueType::UInt64: return "uint64";
    case ValueType::Int64: return "int64";
    case ValueType::Float64: return "float64";
  }
  return "unknown";
}

namespace {

[[noreturn]] void throwWrongType(ValueType actual, const char* wanted) {
  throw Error("metadata value of type " + std::string(valueTypeName(actual)) + " used as " +
              wanted);
}

}  // namespace

bool Value::isInteger() const {
  return std::holds_alternative<uint64_t>(data) || std::holds_alternative<int64_t>(data);
}

bool Value::isFloat() const {
  return std::holds_alternative<double>(data);
}

int64_t Value::asInt() const {
  if (const auto* u = std::get_if<uint64_t>(&data)) {
    if (*u > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
      throw Error("metadata value " + std::to_string(*u) + " does not fit a signed 64-bit integer");
    return static_cast<int64_t>(*u);
  }
  if (const auto* i = std::get_if<int64_t>(&data)) return *i;
  throwWrongType(type, "an integer");
}

uint64_t Value::asUInt() const {
  if (const auto* u = std::get_if<uint64_t>(&data)) return *u;
  if (const auto* i = std::get_if<int64_t>(&data)) {
    if (*i < 0)
      throw Error("metadata value " + std::to_string(*i) + " is negative, expected unsigned");
    return static_cast<uint64_t>(*i);
  }
  throwWrongType(type, "an unsigned integer");
}

double Value::asFloat() const {
  if (const auto* d = std::get_if<double>(&data)) return *d;
  if (const auto* u = std::get_if<uint64_t>(&data)) return static_cast<double>(*u);
  if (const auto* i = std::get_if<int64_t>(&data)) return static_cast<double>(*i);
  throwWrongType(type, "a number");
}

bool Value::asBool() const {
  if (const auto* b = std::get_if<bool>(&data)) return *b;
  throwWrongType(type, "a bool");
}

const std::string& Value::asString() const {
  if (const auto* s = std::get_if<std::string>(&data)) return *s;
  throwWrongType(type, "a string");
}

const Array& Value::asArray() const {
  if (const auto* a = std::get_if<Array>(&data)) return *a;
  throwWrongType(type, "an array");
}

size_t Array::size() const { return packed ? packed->count : items.size(); }

Value Array::at(size_t index) const {
  if (index >= size())
    throw Error("metadata array item " + std::to_string(index) + " is past its " +
                std::to_string(size()) + " items");
  if (!packed) return items[index];
  if (elementType == ValueType::String) return Value::makeString(std::string(stringAt(index)));
  const size_t width = packedWidth(elementType);
  uint64_t bits = 0;
  std::memcpy(&bits, packed->bytes.data() + index * width, width);  // little-endian, as GGUF
  switch (elementType) {
    case ValueType::Int8: return Value::makeInt8(static_cast<int8_t>(bits));
    case ValueType::Int16: return Value::makeInt16(static_cast<int16_t>(bits));
    case ValueType::Int32: return Value::makeInt32(static_cast<int32_t>(bits));
    case ValueType::Int64: return Value::makeInt64(static_cast<int64_t>(bits));
    case ValueType::Float32:
      return Value::makeFloat32(std::bit_cast<float>(static_cast<uint32_t>(bits)));
    case ValueType::Float64: return Value::makeFloat64(std::bit_cast<double>(bits));
    default: return {elementType, bits};  // the unsigned types
  }
}

std::string_view Array::stringAt(size_t index) const {
  if (elementType != ValueType::String)
    throw Error("metadata array of " + std::string(valueTypeName(elementType)) +
                " used as an array of strings");
  if (index >= size())
    throw Error("metadata array item " + std::to_string(index) + " is past its " +
                std::to_string(size()) + " items");
  if (!packed) return items[index].asString();
  const size_t begin = index == 0 ? 0 : packed->stringEnds[index - 1];
  return std::string_view(packed->bytes).substr(begin, packed->stringEnds[index] - begin);
}

bool Array::operator==(const Array& other) const {
  if (elementType != other.elementType || size() != other.size()) return false;
  if (!packed && !other.packed) return items == other.items;
  for (size_t i = 0; i < size(); ++i)
    if (!(at(i) == other.at(i))) return false;
  return true;
}

size_t packedWidth(ValueType type) {
  switch (type) {
    case ValueType::UInt8:
    case ValueType::Int8: return 1;
    case ValueType::UInt16:
    case ValueType::Int16: return 2;
    case ValueType::UInt32:
    case ValueType::Int32:
    case ValueType::Float32: return 4;
    case ValueType::UInt64:
    case ValueType::Int64:
    case ValueType::Float64: return 8;
    default: return 0;  // strings, bools and arrays have no fixed packed width
  }
}

Value Value::makeArray(ValueType elementType, std::vector<Value> items) {
  for (const Value& item : items)
    if (item.type != elementType)
      throw Error("array of " + std::string(valueTypeName(elementType)) +
                  " given an item of type " + std::string(valueTypeName(item.type)));
  return {ValueType::Array, Array{elementType, std::move(items), nullptr}};
}

Value Value::makeStringArray(const std::vector<std::string>& items) {
  std::vector<Value> values;
  values.reserve(items.size());
  for (const std::string& item : items) values.push_back(makeString(item));
  return {ValueType::Array, Array{ValueType::String, std::move(values), nullptr}};
}

}  // namespace ember::gguf
