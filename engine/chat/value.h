#pragma once
// The renderer's value: what a Jinja expression evaluates to, with Python's data model (the one
// Jinja2 runs on): undefined, None, bool, int, float, str (UTF-8), list/tuple, dict (insertion
// ordered) and objects (namespace, loop, callables). Lists and dicts are immutable once built
// (HF renders in an ImmutableSandboxedEnvironment), so copies share their storage.
#include <concepts>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "chat/content_spans.h"

namespace ember::chat {

struct List;
struct Dict;
class Object;
class Interpreter;

class Value {
 public:
  enum class Kind { Undefined, None, Bool, Int, Float, String, List, Dict, Object };

  Value() = default;  // undefined
  Value(std::nullptr_t) : data_(nullptr) {}
  Value(bool b) : data_(b) {}
  template <std::integral T>
    requires(!std::same_as<T, bool> && !std::same_as<T, char>)
  Value(T i) : data_(static_cast<int64_t>(i)) {}
  Value(double d) : data_(d) {}
  Value(std::string s) : data_(std::move(s)) {}
  Value(std::string_view s) : data_(std::string(s)) {}
  Value(const char* s) : data_(std::string(s)) {}
  Value(List list);
  Value(Dict dict);
  Value(std::shared_ptr<Object> object);

  // An undefined value that remembers why it is undefined; using it in an operation that
  // Jinja2's Undefined refuses fails with this message (e.g. "'x' is undefined").
  static Value undefined(std::string message);
  // An undefined value standing for an attribute the sandbox refuses; using it raises a
  // Security error (Jinja2's SecurityError) instead of an Undefined one.
  static Value unsafe(std::string message);
  static Value makeList(std::vector<Value> items);
  static Value makeTuple(std::vector<Value> items);
  // A string whose bytes in `spans` came from message content (see content_spans.h).
  static Value markedString(std::string s, ContentSpans spans);
  // A string made of bytes [begin, begin + s.size()) of `source` (a string), keeping the spans
  // of those bytes: trimming and stripping keep what was message content marked.
  static Value substringOf(const Value& source, std::string s, size_t begin);

  Kind kind() const { return static_cast<Kind>(data_.index()); }
  bool isUndefined() const { return kind() == Kind::Undefined; }
  bool isNone() const { return kind() == Kind::None; }
  bool isBool() const { return kind() == Kind::Bool; }
  bool isInt() const { return kind() == Kind::Int; }
  bool isFloat() const { return kind() == Kind::Float; }
  bool isNumber() const { return isBool() || isInt() || isFloat(); }
  bool isIntegral() const { return isBool() || isInt(); }  // Python int, including bool
  bool isString() const { return kind() == Kind::String; }
  bool isList() const { return kind() == Kind::List; }  // list or tuple
  bool isTuple() const;
  bool isDict() const { return kind() == Kind::Dict; }
  bool isObject() const { return kind() == Kind::Object; }
  bool isCallable() const;

  bool asBool() const { return std::get<bool>(data_); }
  int64_t asInt() const;     // int or bool
  double asFloat() const;    // int, bool or float
  const std::string& asString() const { return std::get<std::string>(data_); }
  const List& asList() const { return *std::get<std::shared_ptr<const List>>(data_); }
  const std::vector<Value>& items() const;  // of a list or tuple
  const Dict& asDict() const { return *std::get<std::shared_ptr<const Dict>>(data_); }
  const std::shared_ptr<Object>& asObject() const {
    return std::get<std::shared_ptr<Object>>(data_);
  }
  const std::string& undefinedMessage() const;
  bool isUnsafeUndefined() const;

  bool truthy() const;           // Python bool(x)
  std::string typeName() const;  // Python type(x).__name__: str, int, dict, NoneType, ...
  // Identity for Jinja's `sameas` test: same shared storage for containers and objects.
  bool sameAs(const Value& other) const;
  // The message-content spans of a string; empty for anything else or unmarked text.
  const ContentSpans& contentSpans() const;

 private:
  struct UndefinedReason {
    std::string message;
    bool unsafe = false;
  };
  using UndefinedInfo = std::shared_ptr<const UndefinedReason>;
  std::variant<UndefinedInfo, std::nullptr_t, bool, int64_t, double, std::string,
               std::shared_ptr<const List>, std::shared_ptr<const Dict>, std::shared_ptr<Object>>
      data_;
  std::shared_ptr<const ContentSpans> spans_;  // strings only; null when unmarked
};

struct List {
  std::vector<Value> items;
  bool isTuple = false;
  uint32_t depth = 1;  // levels of lists and dicts, this one included; set when wrapped in a Value
};

// A Python dict: insertion ordered; keys compare with Python equality (1 == 1.0 == True).
struct Dict {
  std::vector<std::pair<Value, Value>> entries;
  uint32_t depth = 1;  // as List::depth

  const Value* find(const Value& key) const;
  const Value* find(std::string_view key) const;
  const Value* find(const std::string& key) const { return find(std::string_view(key)); }
  const Value* find(const char* key) const { return find(std::string_view(key)); }
  void set(Value key, Value value);  // replaces an equal key in place, else appends
};

// Arguments of a call: f(a, b, name=c).
struct CallArgs {
  std::vector<Value> positional;
  std::vector<std::pair<std::string, Value>> keywords;
};

// Objects: namespaces, the loop variable, macros and built-in functions.
class Object {
 public:
  virtual ~Object() = default;
  virtual std::string typeName() const = 0;
  // nullopt when the object has no such attribute.
  virtual std::optional<Value> attribute(std::string_view name) const;
  virtual bool isCallable() const { return false; }
  virtual Value call(Interpreter& interp, CallArgs args) const;
  virtual std::string repr() const;
};

// Throws the error that using an undefined value raises (Undefined or Security kind).
[[noreturn]] void throwUndefined(const Value& undefinedValue);

// Python's == between any two values (deep for containers).
bool pyEquals(const Value& a, const Value& b);
// Python's ordering for <, sorted(), min/max: negative, zero or positive. Throws a runtime
// TemplateError for types Python cannot order ("'<' not supported between ...").
int pyCompare(const Value& a, const Value& b, std::string_view op = "<");

}  // namespace ember::chat
