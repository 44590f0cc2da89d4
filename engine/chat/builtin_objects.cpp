#include <algorithm>

#include "chat/builtins.h"
#include "chat/interpreter.h"
#include "chat/template_error.h"
#include "chat/value_format.h"

namespace ember::chat {

std::vector<std::optional<Value>> bindArguments(std::string_view function, const CallArgs& args,
                                                std::initializer_list<std::string_view> params) {
  std::vector<std::optional<Value>> bound(params.size());
  if (args.positional.size() > params.size())
    throwRuntime(std::string(function) + "() takes at most " + std::to_string(params.size()) +
                 " argument(s) (" + std::to_string(args.positional.size()) + " given)");
  for (size_t i = 0; i < args.positional.size(); ++i) bound[i] = args.positional[i];
  for (const auto& [name, value] : args.keywords) {
    const auto it = std::find(params.begin(), params.end(), name);
    if (it == params.end())
      throwRuntime(std::string(function) + "() got an unexpected keyword argument '" + name + "'");
    auto& slot = bound[static_cast<size_t>(it - params.begin())];
    if (slot)
      throwRuntime(std::string(function) + "() got multiple values for argument '" + name + "'");
    slot = value;
  }
  return bound;
}

BuiltinFunction::BuiltinFunction(std::string name, NativeFunction fn, std::string owner)
    : name_(std::move(name)), fn_(std::move(fn)), owner_(std::move(owner)) {}

std::string BuiltinFunction::typeName() const {
  return owner_.empty() ? "function" : "builtin_function_or_method";
}

Value BuiltinFunction::call(Interpreter& interp, CallArgs args) const { return fn_(interp, args); }

std::string BuiltinFunction::repr() const {
  if (owner_.empty()) return "<function " + name_ + ">";
  return "<built-in method " + name_ + " of " + owner_ + " object>";
}

Value makeFunction(std::string name, NativeFunction fn) {
  return Value(std::make_shared<BuiltinFunction>(std::move(name), std::move(fn)));
}

Value makeBoundMethod(const Value& self, std::string name, NativeMethod method) {
  NativeFunction fn = [self, method](Interpreter& interp, CallArgs& args) {
    return method(interp, self, args);
  };
  return Value(std::make_shared<BuiltinFunction>(std::move(name), std::move(fn), self.typeName()));
}

Value makeUnsupportedMethod(const Value& self, std::string name) {
  const std::string qualified = self.typeName() + "." + name + "()";
  NativeFunction fn = [qualified](Interpreter&, CallArgs&) -> Value {
    throwUnsupported(qualified + " is not supported in chat templates");
  };
  return Value(std::make_shared<BuiltinFunction>(std::move(name), std::move(fn), self.typeName()));
}

std::optional<Value> Namespace::attribute(std::string_view name) const {
  if (const Value* v = attributes_.find(name)) return *v;
  return std::nullopt;
}

void Namespace::setAttribute(std::string_view name, Value value) {
  attributes_.set(Value(name), std::move(value));
}

std::string Namespace::repr() const {
  // Python prints the namespace's attribute dict, whose own guard turns a namespace inside
  // itself into "{...}"; here the dict is a fresh copy each time, so the namespace is the mark.
  const ReprGuard guard(this);
  if (guard.recursive()) return "<Namespace {...}>";
  return "<Namespace " + toPyRepr(Value(attributes_)) + ">";
}

}  // namespace ember::chat
