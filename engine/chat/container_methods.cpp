// Python methods of dict, list and tuple that templates call (message.get('k'),
// tool.items()). Methods that would mutate are refused, as in Jinja2's immutable sandbox.
#include <algorithm>

#include "chat/builtins.h"
#include "chat/interpreter.h"
#include "chat/template_error.h"

namespace ember::chat {
namespace {

Value unsafeAttribute(const Value& self, std::string_view name) {
  return Value::unsafe("access to attribute '" + std::string(name) + "' of '" + self.typeName() +
                       "' object is unsafe.");
}

Value dictItems(Interpreter&, const Value& self, CallArgs& args) {
  bindArguments("items", args, {});
  std::vector<Value> items;
  for (const auto& [k, v] : self.asDict().entries) items.push_back(Value::makeTuple({k, v}));
  return Value::makeList(std::move(items));
}

Value dictKeys(Interpreter&, const Value& self, CallArgs& args) {
  bindArguments("keys", args, {});
  std::vector<Value> keys;
  for (const auto& entry : self.asDict().entries) keys.push_back(entry.first);
  return Value::makeList(std::move(keys));
}

Value dictValues(Interpreter&, const Value& self, CallArgs& args) {
  bindArguments("values", args, {});
  std::vector<Value> values;
  for (const auto& entry : self.asDict().entries) values.push_back(entry.second);
  return Value::makeList(std::move(values));
}

Value dictGet(Interpreter&, const Value& self, CallArgs& args) {
  if (!args.keywords.empty()) throwRuntime("get() takes no keyword arguments");
  auto a = bindArguments("get", args, {"key", "default"});
  if (!a[0]) throwRuntime("get expected at least 1 argument, got 0");
  if (const Value* found = self.asDict().find(*a[0])) return *found;
  return a[1] ? *a[1] : Value(nullptr);
}

Value copySelf(Interpreter&, const Value& self, CallArgs& args) {
  bindArguments("copy", args, {});
  return self;
}

Value sequenceCount(Interpreter&, const Value& self, CallArgs& args) {
  auto a = bindArguments("count", args, {"value"});
  if (!a[0]) throwRuntime("count() takes exactly one argument (0 given)");
  const auto& items = self.items();
  return Value(static_cast<int64_t>(
      std::count_if(items.begin(), items.end(), [&](const Value& v) { return pyEquals(v, *a[0]); })));
}

Value sequenceIndex(Interpreter&, const Value& self, CallArgs& args) {
  auto a = bindArguments("index", args, {"value"});
  if (!a[0]) throwRuntime("index expected at least 1 argument, got 0");
  const auto& items = self.items();
  for (size_t i = 0; i < items.size(); ++i)
    if (pyEquals(items[i], *a[0])) return Value(static_cast<int64_t>(i));
  throwRuntime(self.typeName() + ".index(x): x not in " + self.typeName());
}

bool isOneOf(std::string_view name, std::initializer_list<std::string_view> names) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

}  // namespace

std::optional<Value> dictMethod(const Value& self, std::string_view name) {
  if (name == "items") return makeBoundMethod(self, "items", dictItems);
  if (name == "keys") return makeBoundMethod(self, "keys", dictKeys);
  if (name == "values") return makeBoundMethod(self, "values", dictValues);
  if (name == "get") return makeBoundMethod(self, "get", dictGet);
  if (name == "copy") return makeBoundMethod(self, "copy", copySelf);
  if (isOneOf(name, {"pop", "popitem", "setdefault", "update", "clear"}))
    return unsafeAttribute(self, name);
  if (name == "fromkeys") return makeUnsupportedMethod(self, std::string(name));
  return std::nullopt;
}

std::optional<Value> listMethod(const Value& self, std::string_view name) {
  if (name == "count") return makeBoundMethod(self, "count", sequenceCount);
  if (name == "index") return makeBoundMethod(self, "index", sequenceIndex);
  if (self.isTuple()) return std::nullopt;
  if (name == "copy") return makeBoundMethod(self, "copy", copySelf);
  if (isOneOf(name, {"append", "clear", "extend", "insert", "pop", "remove", "reverse", "sort"}))
    return unsafeAttribute(self, name);
  return std::nullopt;
}

}  // namespace ember::chat
