#pragma once
// Built-in objects of the template world: native functions and bound methods, Jinja's
// namespace(), the globals HF provides (raise_exception, strftime_now) next to Jinja's own
// (range, dict, namespace, cycler, joiner), and the Python methods of str, dict and list that
// templates call ('x'.startswith(...), message.get('k'), tool.items()).
#include <functional>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "chat/value.h"

namespace ember::chat {

// Binds a call's arguments to parameter names like a Python function whose parameters are all
// positional-or-keyword. Parameters not given come back as nullopt. Throws Python's TypeErrors
// (too many arguments, unexpected keyword, multiple values).
std::vector<std::optional<Value>> bindArguments(std::string_view function, const CallArgs& args,
                                                std::initializer_list<std::string_view> params);

using NativeFunction = std::function<Value(Interpreter&, CallArgs&)>;

class BuiltinFunction : public Object {
 public:
  // `owner` names the receiver's type for a bound method ("str"), or is empty for a function.
  BuiltinFunction(std::string name, NativeFunction fn, std::string owner = {});
  std::string typeName() const override;
  bool isCallable() const override { return true; }
  Value call(Interpreter& interp, CallArgs args) const override;
  std::string repr() const override;

 private:
  std::string name_;
  NativeFunction fn_;
  std::string owner_;
};

Value makeFunction(std::string name, NativeFunction fn);
using NativeMethod = Value (*)(Interpreter&, const Value& self, CallArgs&);
Value makeBoundMethod(const Value& self, std::string name, NativeMethod method);
// A method that exists in Python but is not implemented here: calling it is Unsupported.
Value makeUnsupportedMethod(const Value& self, std::string name);

// Jinja's namespace(): the one mutable object a template can write to (`set ns.x = ...`).
class Namespace : public Object {
 public:
  std::string typeName() const override { return "Namespace"; }
  std::optional<Value> attribute(std::string_view name) const override;
  void setAttribute(std::string_view name, Value value);
  std::string repr() const override;
  // Drops every attribute; the interpreter does this after a render to break reference
  // cycles a template may have built (`set ns.self = ns`).
  void clear() { attributes_.entries.clear(); }

 private:
  Dict attributes_;
};

std::vector<std::pair<std::string, Value>> makeGlobals();

// Attribute access on built-in types; nullopt when the type has no such attribute. Mutating
// methods come back as unsafe undefined values, as in Jinja2's immutable sandbox.
std::optional<Value> stringMethod(const Value& self, std::string_view name);
std::optional<Value> dictMethod(const Value& self, std::string_view name);
std::optional<Value> listMethod(const Value& self, std::string_view name);

// Python's str.strip/split family, shared by the methods and the trim filter.
enum class StripSide { Both, Left, Right };
std::string pyStrip(std::string_view s, const std::optional<std::string>& chars, StripSide side);
// str.splitlines(keepends): \n, \r, \r\n and the other Unicode line boundaries.
std::vector<std::string> pySplitLines(std::string_view s, bool keepEnds);

}  // namespace ember::chat
