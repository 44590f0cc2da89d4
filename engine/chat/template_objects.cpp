#include "chat/template_objects.h"

#include "chat/builtins.h"
#include "chat/template_error.h"

namespace ember::chat {

Value MacroObject::call(Interpreter& interp, CallArgs args) const {
  const ScopePtr closure = closure_.lock();
  if (!closure) throwRuntime("macro '" + macro_.name + "' outlived the scope it was defined in");
  return interp.callMacro(macro_, closure, std::move(args), caller_);
}

std::optional<Value> MacroObject::attribute(std::string_view name) const {
  if (name == "name") return Value(macro_.name);
  if (name == "arguments") {
    std::vector<Value> names;
    for (const auto& p : macro_.params) names.emplace_back(p.name);
    return Value::makeTuple(std::move(names));
  }
  return std::nullopt;
}

LoopObject::LoopObject(std::vector<Value> items) : state_(std::make_shared<State>()) {
  state_->items = std::move(items);
}

std::optional<Value> LoopObject::attribute(std::string_view name) const {
  const auto& s = *state_;
  const auto i = static_cast<int64_t>(s.index0);
  const auto length = static_cast<int64_t>(s.items.size());
  if (name == "index") return Value(i + 1);
  if (name == "index0") return Value(i);
  if (name == "revindex") return Value(length - i);
  if (name == "revindex0") return Value(length - i - 1);
  if (name == "first") return Value(i == 0);
  if (name == "last") return Value(i + 1 == length);
  if (name == "length") return Value(length);
  if (name == "depth") return Value(1);
  if (name == "depth0") return Value(0);
  if (name == "previtem") {
    if (i == 0) return Value::undefined("there is no previous item");
    return s.items[s.index0 - 1];
  }
  if (name == "nextitem") {
    if (i + 1 >= length) return Value::undefined("there is no next item");
    return s.items[s.index0 + 1];
  }
  auto state = state_;
  if (name == "cycle")
    return makeFunction("cycle", [state](Interpreter&, CallArgs& args) {
      if (args.positional.empty()) throwRuntime("no items for cycling given");
      return args.positional[state->index0 % args.positional.size()];
    });
  if (name == "changed")
    return makeFunction("changed", [state](Interpreter&, CallArgs& args) {
      const Value current = Value::makeTuple(args.positional);
      if (state->hasLastChanged && pyEquals(state->lastChanged, current)) return Value(false);
      state->hasLastChanged = true;
      state->lastChanged = current;
      return Value(true);
    });
  return std::nullopt;
}

std::string LoopObject::repr() const {
  return "<LoopContext " + std::to_string(state_->index0 + 1) + "/" +
         std::to_string(state_->items.size()) + ">";
}

}  // namespace ember::chat
