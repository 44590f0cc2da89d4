// Attribute and item access with the semantics of Jinja2's sandboxed environment:
// `x.name` tries the Python attribute first, then the item; `x[key]` the other way round; a
// miss is an undefined value that remembers what was missing; dunder attributes are refused.
#include <algorithm>

#include "chat/builtins.h"
#include "chat/interpreter.h"
#include "chat/template_error.h"
#include "chat/unicode_text.h"
#include "chat/value_format.h"

namespace ember::chat {
namespace {

// Jinja's object_type_repr: "None" for None, "dict object" for a dict.
std::string objectTypeRepr(const Value& v) {
  if (v.isNone()) return "None";
  return v.typeName() + " object";
}

Value missingAttribute(const Value& object, std::string_view name) {
  return Value::undefined("'" + objectTypeRepr(object) + "' has no attribute '" +
                          std::string(name) + "'");
}

Value missingElement(const Value& object, const Value& key) {
  return Value::undefined(objectTypeRepr(object) + " has no element " + toPyRepr(key));
}

bool isDunder(std::string_view name) { return name.size() >= 2 && name.substr(0, 2) == "__"; }

Value refusedAttribute(const Value& object, std::string_view name) {
  return Value::unsafe("access to attribute '" + std::string(name) + "' of '" +
                       object.typeName() + "' object is unsafe.");
}

// The Python attribute of a built-in value, if it has one.
std::optional<Value> pythonAttribute(const Value& object, std::string_view name) {
  switch (object.kind()) {
    case Value::Kind::Dict: return dictMethod(object, name);
    case Value::Kind::String: return stringMethod(object, name);
    case Value::Kind::List: return listMethod(object, name);
    case Value::Kind::Object: return object.asObject()->attribute(name);
    default: return std::nullopt;
  }
}

// Python index normalisation; nullopt when out of range.
std::optional<size_t> normaliseIndex(int64_t index, size_t size) {
  if (index < 0) index += static_cast<int64_t>(size);
  if (index < 0 || index >= static_cast<int64_t>(size)) return std::nullopt;
  return static_cast<size_t>(index);
}

}  // namespace

Value Interpreter::getAttribute(const Value& object, std::string_view name) {
  if (object.isUndefined()) throwUndefined(object);
  if (isDunder(name)) return refusedAttribute(object, name);
  if (auto attribute = pythonAttribute(object, name)) return *attribute;
  if (object.isDict()) {
    if (const Value* v = object.asDict().find(name)) return *v;
  }
  return missingAttribute(object, name);
}

Value Interpreter::getItem(const Value& object, const Value& key) {
  if (object.isUndefined()) throwUndefined(object);
  switch (object.kind()) {
    case Value::Kind::Dict:
      if (const Value* v = object.asDict().find(key)) return *v;
      break;
    case Value::Kind::List:
      if (key.isIntegral()) {
        const auto& items = object.items();
        if (auto i = normaliseIndex(key.asInt(), items.size())) return items[*i];
        return missingElement(object, key);
      }
      break;
    case Value::Kind::String:
      if (key.isIntegral()) {
        const std::u32string cps = text::decode(object.asString());
        if (auto i = normaliseIndex(key.asInt(), cps.size()))
          return Value(text::encode(std::u32string(1, cps[*i])));
        return missingElement(object, key);
      }
      break;
    default: break;
  }
  if (!key.isString()) return missingElement(object, key);
  const std::string& name = key.asString();
  if (isDunder(name)) return refusedAttribute(object, name);
  if (auto attribute = pythonAttribute(object, name)) return *attribute;
  return missingAttribute(object, name);
}

Value Interpreter::evaluateSlice(const Value& object, const SliceExpr& slice,
                                 const ScopePtr& scope) {
  auto part = [&](const ExprPtr& e) -> std::optional<int64_t> {
    if (!e) return std::nullopt;
    const Value v = evaluate(*e, scope);
    if (v.isNone()) return std::nullopt;
    if (v.isUndefined()) throwUndefined(v);
    if (!v.isIntegral())
      throwRuntime("slice indices must be integers or None or have an __index__ method");
    return v.asInt();
  };
  const auto start = part(slice.start);
  const auto stop = part(slice.stop);
  const int64_t step = part(slice.step).value_or(1);
  if (object.isUndefined()) throwUndefined(object);
  if (step == 0) throwRuntime("slice step cannot be zero");
  if (!object.isList() && !object.isString())
    return Value::undefined(objectTypeRepr(object) + " has no element slice");

  std::u32string cps;
  if (object.isString()) cps = text::decode(object.asString());
  const auto length = static_cast<int64_t>(object.isString() ? cps.size() : object.items().size());
  // CPython's PySlice_AdjustIndices.
  auto adjust = [&](std::optional<int64_t> v, int64_t fallback) {
    if (!v) return fallback;
    int64_t i = *v;
    if (i < 0) {
      i += length;
      if (i < 0) i = step < 0 ? -1 : 0;
    } else if (i >= length) {
      i = step < 0 ? length - 1 : length;
    }
    return i;
  };
  const int64_t first = adjust(start, step < 0 ? length - 1 : 0);
  const int64_t last = adjust(stop, step < 0 ? -1 : length);
  std::vector<size_t> picked;
  for (int64_t i = first; step > 0 ? i < last : i > last; i += step)
    picked.push_back(static_cast<size_t>(i));
  if (object.isString()) {
    std::u32string out;
    for (size_t i : picked) out += cps[i];
    return Value(text::encode(out));
  }
  std::vector<Value> items;
  items.reserve(picked.size());
  for (size_t i : picked) items.push_back(object.items()[i]);
  return object.isTuple() ? Value::makeTuple(std::move(items)) : Value::makeList(std::move(items));
}

std::vector<Value> iterateValue(const Value& value) {
  switch (value.kind()) {
    case Value::Kind::Undefined: return {};
    case Value::Kind::List: return value.items();
    case Value::Kind::String: {
      std::vector<Value> chars;
      for (char32_t c : text::decode(value.asString()))
        chars.emplace_back(text::encode(std::u32string(1, c)));
      return chars;
    }
    case Value::Kind::Dict: {
      std::vector<Value> keys;
      for (const auto& entry : value.asDict().entries) keys.push_back(entry.first);
      return keys;
    }
    default: throwRuntime("'" + value.typeName() + "' object is not iterable");
  }
}

}  // namespace ember::chat
