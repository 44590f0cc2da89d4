#include "chat/json_value.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "chat/template_error.h"
#include "chat/unicode_text.h"
#include "chat/value_format.h"

namespace ember::chat {

namespace {

// Deeper input than this is refused rather than risking the stack on recursion.
constexpr int kMaxJsonDepth = 256;

Value convert(const nlohmann::ordered_json& json, int depth) {
  if (depth > kMaxJsonDepth)
    throwLimit("template variables nest deeper than " + std::to_string(kMaxJsonDepth) + " levels");
  using T = nlohmann::ordered_json::value_t;
  switch (json.type()) {
    case T::null: return Value(nullptr);
    case T::boolean: return Value(json.get<bool>());
    case T::number_integer: return Value(json.get<int64_t>());
    case T::number_unsigned: {
      const auto u = json.get<uint64_t>();
      if (u > static_cast<uint64_t>(INT64_MAX)) return Value(static_cast<double>(u));
      return Value(static_cast<int64_t>(u));
    }
    case T::number_float: return Value(json.get<double>());
    case T::string: {
      // Python strings are always valid Unicode; a caller's broken bytes stop here, clearly.
      const auto& s = json.get_ref<const std::string&>();
      if (!text::isValidUtf8(s)) throwRuntime("a template variable holds text that is not valid UTF-8");
      return Value(s);
    }
    case T::array: {
      std::vector<Value> items;
      items.reserve(json.size());
      for (const auto& item : json) items.push_back(convert(item, depth + 1));
      return Value::makeList(std::move(items));
    }
    case T::object: {
      Dict dict;
      dict.entries.reserve(json.size());
      for (const auto& [key, item] : json.items()) {
        if (!text::isValidUtf8(key)) throwRuntime("a template variable name is not valid UTF-8");
        dict.entries.emplace_back(Value(key), convert(item, depth + 1));
      }
      return Value(std::move(dict));
    }
    default: throwRuntime("unsupported JSON value (binary or discarded)");
  }
}

}  // namespace

Value valueFromJson(const nlohmann::ordered_json& json) { return convert(json, 0); }

namespace {

void appendUnicodeEscape(std::string& out, unsigned unit) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "\\u%04x", unit & 0xFFFFu);
  out += buf;
}

void appendJsonString(std::string& out, const std::string& s, bool ensureAscii) {
  out += '"';
  for (char32_t c : text::decode(s)) {
    switch (c) {
      case '"': out += "\\\""; continue;
      case '\\': out += "\\\\"; continue;
      case '\n': out += "\\n"; continue;
      case '\r': out += "\\r"; continue;
      case '\t': out += "\\t"; continue;
      case '\b': out += "\\b"; continue;
      case '\f': out += "\\f"; continue;
      default: break;
    }
    if (c < 0x20) {
      appendUnicodeEscape(out, c);
    } else if (ensureAscii && c > 0x7E) {
      if (c >= 0x10000) {
        const char32_t v = c - 0x10000;
        appendUnicodeEscape(out, 0xD800 + (v >> 10));
        appendUnicodeEscape(out, 0xDC00 + (v & 0x3FF));
      } else {
        appendUnicodeEscape(out, c);
      }
    } else {
      text::appendUtf8(out, c);
    }
  }
  out += '"';
}

std::string jsonFloat(double d) {
  if (std::isnan(d)) return "NaN";
  if (std::isinf(d)) return d > 0 ? "Infinity" : "-Infinity";
  return formatFloat(d);
}

// Python's json key coercion: str as is, numbers and literals spelled as JSON.
std::string jsonKey(const Value& key) {
  switch (key.kind()) {
    case Value::Kind::String: return key.asString();
    case Value::Kind::Bool: return key.asBool() ? "true" : "false";
    case Value::Kind::None: return "null";
    case Value::Kind::Int: return std::to_string(key.asInt());
    case Value::Kind::Float: return jsonFloat(key.asFloat());
    default:
      throwRuntime("keys must be str, int, float, bool or None, not " + key.typeName());
  }
}

class JsonWriter {
 public:
  explicit JsonWriter(const JsonDumpOptions& o) : options_(o) {
    itemSeparator_ = o.itemSeparator.value_or(o.indent ? "," : ", ");
  }

  void write(const Value& v, int level) {
    switch (v.kind()) {
      case Value::Kind::None: out_ += "null"; return;
      case Value::Kind::Bool: out_ += v.asBool() ? "true" : "false"; return;
      case Value::Kind::Int: out_ += std::to_string(v.asInt()); return;
      case Value::Kind::Float: out_ += jsonFloat(v.asFloat()); return;
      case Value::Kind::String: appendJsonString(out_, v.asString(), options_.ensureAscii); return;
      case Value::Kind::List: writeList(v.items(), level); return;
      case Value::Kind::Dict: writeDict(v.asDict(), level); return;
      default:
        throwRuntime("Object of type " + v.typeName() + " is not JSON serializable");
    }
  }

  std::string take() { return std::move(out_); }

 private:
  void newline(int level) {
    if (!options_.indent) return;
    out_ += '\n';
    for (int i = 0; i < level; ++i) out_ += *options_.indent;
  }

  void writeList(const std::vector<Value>& items, int level) {
    if (items.empty()) {
      out_ += "[]";
      return;
    }
    out_ += '[';
    for (size_t i = 0; i < items.size(); ++i) {
      if (i) out_ += itemSeparator_;
      newline(level + 1);
      write(items[i], level + 1);
    }
    newline(level);
    out_ += ']';
  }

  void writeDict(const Dict& dict, int level) {
    if (dict.entries.empty()) {
      out_ += "{}";
      return;
    }
    std::vector<const std::pair<Value, Value>*> entries;
    for (const auto& e : dict.entries) entries.push_back(&e);
    if (options_.sortKeys) {
      std::stable_sort(entries.begin(), entries.end(),
                       [](auto* a, auto* b) { return pyCompare(a->first, b->first) < 0; });
    }
    out_ += '{';
    bool first = true;
    for (const auto* e : entries) {
      if (!first) out_ += itemSeparator_;
      first = false;
      newline(level + 1);
      appendJsonString(out_, jsonKey(e->first), options_.ensureAscii);
      out_ += options_.keySeparator;
      write(e->second, level + 1);
    }
    newline(level);
    out_ += '}';
  }

  const JsonDumpOptions& options_;
  std::string itemSeparator_;
  std::string out_;
};

}  // namespace

std::string pyJsonDumps(const Value& value, const JsonDumpOptions& options) {
  JsonWriter writer(options);
  writer.write(value, 0);
  return writer.take();
}

}  // namespace ember::chat
