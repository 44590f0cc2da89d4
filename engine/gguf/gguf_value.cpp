#include "gguf/gguf_value.h"

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

Value Value::makeArray(ValueType elementType, std::vector<Value> items) {
  for (const Value& item : items)
    if (item.type != elementType)
      throw Error("array of " + std::string(valueTypeName(elementType)) +
                  " given an item of type " + std::string(valueTypeName(item.type)));
  return {ValueType::Array, Array{elementType, std::move(items)}};
}

Value Value::makeStringArray(const std::vector<std::string>& items) {
  std::vector<Value> values;
  values.reserve(items.size());
  for (const std::string& item : items) values.push_back(makeString(item));
  return {ValueType::Array, Array{ValueType::String, std::move(values)}};
}

}  // namespace ember::gguf
