#include "chat/value.h"

#include <algorithm>

#include "chat/template_error.h"
#include "chat/value_format.h"

namespace ember::chat {

namespace {

// How deeply lists and dicts may nest. Every walk over a value (printing, comparing, converting
// to JSON, freeing it) recurses once per level, so this bound is what keeps a template that
// wraps a list in a list a million times from exhausting the thread's stack. Python's own
// recursion limit is of the same size: its repr of a deeper value fails as well.
constexpr uint32_t kMaxNesting = 1000;

uint32_t nestingOf(const Value& v) {
  if (v.isList()) return v.asList().depth;
  if (v.isDict()) return v.asDict().depth;
  return 0;
}

uint32_t levelAbove(uint32_t deepestChild) {
  if (deepestChild >= kMaxNesting)
    throwLimit("a list or dict nests deeper than " + std::to_string(kMaxNesting) + " levels");
  return deepestChild + 1;
}

}  // namespace

Value::Value(List list) {
  uint32_t deepest = 0;
  for (const auto& item : list.items) deepest = std::max(deepest, nestingOf(item));
  list.depth = levelAbove(deepest);
  data_ = std::make_shared<const List>(std::move(list));
}

Value::Value(Dict dict) {
  uint32_t deepest = 0;
  for (const auto& [key, value] : dict.entries)
    deepest = std::max({deepest, nestingOf(key), nestingOf(value)});
  dict.depth = levelAbove(deepest);
  data_ = std::make_shared<const Dict>(std::move(dict));
}

Value::Value(std::shared_ptr<Object> object) : data_(std::move(object)) {}

Value Value::undefined(std::string message) {
  Value v;
  v.data_ = std::make_shared<const UndefinedReason>(UndefinedReason{std::move(message), false});
  return v;
}

Value Value::unsafe(std::string message) {
  Value v;
  v.data_ = std::make_shared<const UndefinedReason>(UndefinedReason{std::move(message), true});
  return v;
}

bool Value::isUnsafeUndefined() const {
  const auto* info = std::get_if<UndefinedInfo>(&data_);
  return info && *info && (*info)->unsafe;
}

void throwUndefined(const Value& v) {
  throw TemplateError(v.isUnsafeUndefined() ? TemplateErrorKind::Security
                                            : TemplateErrorKind::Undefined,
                      v.undefinedMessage());
}

Value Value::makeList(std::vector<Value> items) { return Value(List{std::move(items), false}); }
Value Value::makeTuple(std::vector<Value> items) { return Value(List{std::move(items), true}); }

Value Value::markedString(std::string s, ContentSpans spans) {
  Value v(std::move(s));
  if (!spans.empty()) v.spans_ = std::make_shared<const ContentSpans>(std::move(spans));
  return v;
}

Value Value::substringOf(const Value& source, std::string s, size_t begin) {
  const size_t end = begin + s.size();
  return markedString(std::move(s), sliceSpans(source.contentSpans(), begin, end));
}

const ContentSpans& Value::contentSpans() const {
  static const ContentSpans kNone;
  return spans_ && isString() ? *spans_ : kNone;
}

bool Value::isTuple() const { return isList() && asList().isTuple; }

bool Value::isCallable() const { return isObject() && asObject()->isCallable(); }

int64_t Value::asInt() const {
  if (isBool()) return asBool() ? 1 : 0;
  return std::get<int64_t>(data_);
}

double Value::asFloat() const {
  if (isFloat()) return std::get<double>(data_);
  return static_cast<double>(asInt());
}

const std::vector<Value>& Value::items() const { return asList().items; }

const std::string& Value::undefinedMessage() const {
  static const std::string generic = "value is undefined";
  const auto& info = std::get<UndefinedInfo>(data_);
  return info ? info->message : generic;
}

bool Value::truthy() const {
  switch (kind()) {
    case Kind::Undefined:
    case Kind::None: return false;
    case Kind::Bool: return asBool();
    case Kind::Int: return asInt() != 0;
    case Kind::Float: return asFloat() != 0.0;
    case Kind::String: return !asString().empty();
    case Kind::List: return !items().empty();
    case Kind::Dict: return !asDict().entries.empty();
    case Kind::Object: return true;
  }
  return false;
}

std::string Value::typeName() const {
  switch (kind()) {
    case Kind::Undefined: return "Undefined";
    case Kind::None: return "NoneType";
    case Kind::Bool: return "bool";
    case Kind::Int: return "int";
    case Kind::Float: return "float";
    case Kind::String: return "str";
    case Kind::List: return isTuple() ? "tuple" : "list";
    case Kind::Dict: return "dict";
    case Kind::Object: return asObject()->typeName();
  }
  return "object";
}

bool Value::sameAs(const Value& other) const {
  if (kind() != other.kind()) return false;
  switch (kind()) {
    case Kind::List: return &asList() == &other.asList();
    case Kind::Dict: return &asDict() == &other.asDict();
    case Kind::Object: return asObject() == other.asObject();
    case Kind::Undefined: return false;
    default: return pyEquals(*this, other) && typeName() == other.typeName();
  }
}

const Value* Dict::find(const Value& key) const {
  for (const auto& [k, v] : entries)
    if (pyEquals(k, key)) return &v;
  return nullptr;
}

const Value* Dict::find(std::string_view key) const {
  for (const auto& [k, v] : entries)
    if (k.isString() && k.asString() == key) return &v;
  return nullptr;
}

void Dict::set(Value key, Value value) {
  for (auto& [k, v] : entries) {
    if (pyEquals(k, key)) {
      v = std::move(value);
      return;
    }
  }
  entries.emplace_back(std::move(key), std::move(value));
}

std::optional<Value> Object::attribute(std::string_view) const { return std::nullopt; }

Value Object::call(Interpreter&, CallArgs) const {
  throwRuntime("'" + typeName() + "' object is not callable");
}

std::string Object::repr() const { return "<" + typeName() + " object>"; }

bool pyEquals(const Value& a, const Value& b) {
  using K = Value::Kind;
  if (a.isNumber() && b.isNumber()) {
    if (a.isIntegral() && b.isIntegral()) return a.asInt() == b.asInt();
    return a.asFloat() == b.asFloat();
  }
  if (a.kind() != b.kind()) return false;
  switch (a.kind()) {
    case K::Undefined:
    case K::None: return true;
    case K::String: return a.asString() == b.asString();
    case K::List: {
      if (a.isTuple() != b.isTuple()) return false;
      const auto& x = a.items();
      const auto& y = b.items();
      if (x.size() != y.size()) return false;
      for (size_t i = 0; i < x.size(); ++i)
        if (!pyEquals(x[i], y[i])) return false;
      return true;
    }
    case K::Dict: {
      const auto& x = a.asDict().entries;
      if (x.size() != b.asDict().entries.size()) return false;
      for (const auto& [k, v] : x) {
        const Value* other = b.asDict().find(k);
        if (!other || !pyEquals(v, *other)) return false;
      }
      return true;
    }
    case K::Object: return a.asObject() == b.asObject();
    default: return false;
  }
}

int pyCompare(const Value& a, const Value& b, std::string_view op) {
  if (a.isUndefined()) throwUndefined(a);
  if (b.isUndefined()) throwUndefined(b);
  if (a.isNumber() && b.isNumber()) {
    if (a.isIntegral() && b.isIntegral())
      return a.asInt() < b.asInt() ? -1 : (a.asInt() > b.asInt() ? 1 : 0);
    const double x = a.asFloat();
    const double y = b.asFloat();
    return x < y ? -1 : (x > y ? 1 : 0);
  }
  if (a.isString() && b.isString()) {
    // Byte order of UTF-8 is code point order, which is what Python compares.
    const int c = a.asString().compare(b.asString());
    return c < 0 ? -1 : (c > 0 ? 1 : 0);
  }
  if (a.isList() && b.isList() && a.isTuple() == b.isTuple()) {
    const auto& x = a.items();
    const auto& y = b.items();
    for (size_t i = 0; i < x.size() && i < y.size(); ++i) {
      if (pyEquals(x[i], y[i])) continue;
      return pyCompare(x[i], y[i], op);
    }
    return x.size() < y.size() ? -1 : (x.size() > y.size() ? 1 : 0);
  }
  throwRuntime("'" + std::string(op) + "' not supported between instances of '" + a.typeName() +
               "' and '" + b.typeName() + "'");
}

}  // namespace ember::chat
