#include "gguf/gguf_describe.h"

#include <charconv>

namespace ember::gguf {

namespace {

std::string escaped(const std::string& text) {
  static const char* const kHex = "0123456789abcdef";
  std::string out = "\"";
  for (char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (byte < 0x20 || byte == 0x7f) {
          out += "\\x";
          out += kHex[byte >> 4];
          out += kHex[byte & 15];
        } else {
          out += c;
        }
    }
  }
  return out + "\"";
}

// Shortest round-trip text; plain decimal (100000, 0.00001) unless that gets long.
template <typename T>
std::string shortest(T number) {
  char buffer[512];
  auto result = std::to_chars(buffer, buffer + sizeof(buffer), number, std::chars_format::fixed);
  if (result.ec == std::errc() && result.ptr - buffer <= 16) return std::string(buffer, result.ptr);
  result = std::to_chars(buffer, buffer + sizeof(buffer), number);
  return std::string(buffer, result.ptr);
}

}  // namespace

std::string valueTypeLabel(const Value& value) {
  if (value.type != ValueType::Array) return std::string(valueTypeName(value.type));
  const Array& array = value.asArray();
  if (array.elementType == ValueType::Array && !array.items.empty())
    return "array<" + valueTypeLabel(array.items.front()) + ">";
  return "array<" + std::string(valueTypeName(array.elementType)) + ">";
}

std::string formatNumber(const Value& value) {
  if (const auto* u = std::get_if<uint64_t>(&value.data)) return std::to_string(*u);
  if (const auto* i = std::get_if<int64_t>(&value.data)) return std::to_string(*i);
  if (const auto* d = std::get_if<double>(&value.data)) {
    if (value.type == ValueType::Float32) return shortest(static_cast<float>(*d));
    return shortest(*d);
  }
  return describeValue(value);
}

std::string truncateUtf8(const std::string& text, size_t maxBytes) {
  if (text.size() <= maxBytes) return text;
  size_t cut = maxBytes;
  // Step back over continuation bytes (10xxxxxx) so the cut lands before a lead byte.
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
  return text.substr(0, cut);
}

std::string describeValue(const Value& value, const DescribeLimits& limits) {
  switch (value.type) {
    case ValueType::Bool: return value.asBool() ? "true" : "false";
    case ValueType::String: {
      const std::string& text = value.asString();
      if (text.size() <= limits.maxStringBytes) return escaped(text);
      return escaped(truncateUtf8(text, limits.maxStringBytes)) + "... (" +
             std::to_string(text.size()) + " bytes)";
    }
    case ValueType::Array: {
      const Array& array = value.asArray();
      std::string out = "[";
      const size_t shown = std::min(array.size(), limits.maxItems);
      for (size_t i = 0; i < shown; ++i) {
        if (i > 0) out += ", ";
        out += describeValue(array.at(i), limits);
      }
      if (shown < array.size())
        out += (shown > 0 ? ", ... (" : "... (") + std::to_string(array.size()) + " items)";
      return out + "]";
    }
    default: return formatNumber(value);
  }
}

std::string formatShape(const std::vector<uint64_t>& shape) {
  std::string out = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i > 0) out += ", ";
    out += std::to_string(shape[i]);
  }
  return out + "]";
}

}  // namespace ember::gguf
