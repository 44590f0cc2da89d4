#pragma once
// Objects a template creates while it renders: macros (callable, with a closure over the
// scope they were defined in) and the `loop` variable of a for loop.
#include <memory>
#include <string>
#include <vector>

#include "chat/ast.h"
#include "chat/interpreter.h"
#include "chat/value.h"

namespace ember::chat {

class MacroObject : public Object {
 public:
  // The closure is held weakly: the defining scope usually stores the macro itself, and a
  // strong reference would keep both alive forever.
  MacroObject(const MacroStmt& macro, const ScopePtr& closure, Value caller = {})
      : macro_(macro), closure_(closure), caller_(std::move(caller)) {}
  std::string typeName() const override { return "Macro"; }
  bool isCallable() const override { return true; }
  Value call(Interpreter& interp, CallArgs args) const override;
  std::string repr() const override { return "<Macro '" + macro_.name + "'>"; }
  std::optional<Value> attribute(std::string_view name) const override;

 private:
  const MacroStmt& macro_;
  std::weak_ptr<Scope> closure_;
  Value caller_;
};

// Jinja's LoopContext: index, index0, revindex, revindex0, first, last, length, previtem,
// nextitem, depth, depth0, cycle(...), changed(...).
class LoopObject : public Object {
 public:
  explicit LoopObject(std::vector<Value> items);
  void setIndex(size_t index0) { state_->index0 = index0; }
  std::string typeName() const override { return "LoopContext"; }
  std::optional<Value> attribute(std::string_view name) const override;
  std::string repr() const override;

 private:
  struct State {
    std::vector<Value> items;
    size_t index0 = 0;
    bool hasLastChanged = false;
    Value lastChanged;
  };
  std::shared_ptr<State> state_;
};

}  // namespace ember::chat
