// Statement execution: text, output, if, for, set, macros, call/filter/with blocks, loop
// controls; plus the render limits.
#include "chat/interpreter.h"

#include "chat/builtins.h"
#include "chat/template_error.h"
#include "chat/template_objects.h"
#include "chat/value_format.h"

namespace ember::chat {

const Value* Scope::find(std::string_view name) const {
  for (const Scope* s = this; s; s = s->parent_.get())
    for (const auto& [n, v] : s->vars_)
      if (n == name) return &v;
  return nullptr;
}

void Scope::set(std::string_view name, Value value) {
  for (auto& [n, v] : vars_) {
    if (n == name) {
      v = std::move(value);
      return;
    }
  }
  vars_.emplace_back(std::string(name), std::move(value));
}

Interpreter::Interpreter(const RenderOptions& options) : options_(options) {}

MarkedText Interpreter::render(const TemplateAst& ast, const Dict& variables) {
  // Breaks the cycles namespaces may form, however the render ends. The render holds every
  // namespace it made (trackNamespace), so none is freed from inside another's clear(): a
  // chain of a million namespaces, each holding the next, unwinds flat instead of recursing
  // once per link.
  struct NamespaceReleaser {
    std::vector<std::shared_ptr<Namespace>>& namespaces;
    ~NamespaceReleaser() {
      for (auto& ns : namespaces) ns->clear();
      namespaces.clear();
    }
  } releaser{namespaces_};

  auto globals = std::make_shared<Scope>();
  for (auto& [name, value] : makeGlobals()) globals->set(name, std::move(value));
  auto root = std::make_shared<Scope>(globals);
  for (const auto& [key, value] : variables.entries)
    if (key.isString()) root->set(key.asString(), value);
  MarkedText out;
  execute(ast.body, root, out);
  return out;
}

void Interpreter::trackNamespace(const std::shared_ptr<Namespace>& ns) {
  // Held until the render ends (see render()), so they count as data the template built.
  workBytes_ += sizeof(Namespace) + sizeof(ns);
  if (workBytes_ > options_.limits.maxWorkBytes)
    throwLimit("the template built more than " + std::to_string(options_.limits.maxWorkBytes) +
               " bytes of data");
  namespaces_.push_back(ns);
}

void Interpreter::checkStringSize(size_t bytes) {
  if (bytes > options_.limits.maxOutputBytes)
    throwLimit("a string of " + std::to_string(bytes) + " bytes exceeds the limit of " +
               std::to_string(options_.limits.maxOutputBytes) + " bytes");
  workBytes_ += bytes;
  if (workBytes_ > options_.limits.maxWorkBytes)
    throwLimit("the template built more than " + std::to_string(options_.limits.maxWorkBytes) +
               " bytes of text");
}

// A list is bounded by item count against the same limit as text: each item of a list that
// is printed takes at least a byte, so nothing useful is lost.
void Interpreter::checkListSize(size_t items) {
  if (items > options_.limits.maxOutputBytes)
    throwLimit("a list of " + std::to_string(items) + " items exceeds the limit of " +
               std::to_string(options_.limits.maxOutputBytes) + " items");
  workBytes_ += items * sizeof(Value);
  if (workBytes_ > options_.limits.maxWorkBytes)
    throwLimit("the template built more than " + std::to_string(options_.limits.maxWorkBytes) +
               " bytes of data");
}

void Interpreter::countIterations(uint64_t n) {
  iterations_ += n;
  if (iterations_ > options_.limits.maxLoopIterations)
    throwLimit("the template ran more than " + std::to_string(options_.limits.maxLoopIterations) +
               " loop iterations");
}

std::tm Interpreter::now() const {
  if (options_.clock) return options_.clock();
  const std::time_t t = std::time(nullptr);
  std::tm local{};
  localtime_r(&t, &local);
  return local;
}

void Interpreter::append(MarkedText& out, std::string_view text) {
  if (out.text.size() + text.size() > options_.limits.maxOutputBytes)
    throwLimit("the rendered text exceeds the limit of " +
               std::to_string(options_.limits.maxOutputBytes) + " bytes");
  workBytes_ += text.size();
  if (workBytes_ > options_.limits.maxWorkBytes)
    throwLimit("the template built more than " + std::to_string(options_.limits.maxWorkBytes) +
               " bytes of text");
  out.text += text;
}

void Interpreter::appendValue(MarkedText& out, const Value& value) {
  const size_t at = out.text.size();
  append(out, std::string_view(toPyStr(value)));
  appendSpans(out.spans, value.contentSpans(), at);
}

Interpreter::DepthGuard::DepthGuard(Interpreter& interp) : interp_(interp) {
  if (++interp_.evaluationDepth_ > interp_.options_.limits.maxEvaluationDepth) {
    --interp_.evaluationDepth_;
    throwLimit("the template nests deeper than " +
               std::to_string(interp_.options_.limits.maxEvaluationDepth) +
               " levels while rendering (runaway recursion?)");
  }
}

Interpreter::Flow Interpreter::execute(const Body& body, const ScopePtr& scope, MarkedText& out) {
  DepthGuard guard(*this);
  for (const auto& stmt : body) {
    Flow flow;
    try {
      flow = executeStatement(*stmt, scope, out);
    } catch (const TemplateError& e) {
      if (e.hasLocation()) throw;
      throw e.located(stmt->loc.line, stmt->loc.column);
    }
    if (flow != Flow::Normal) return flow;
  }
  return Flow::Normal;
}

Value Interpreter::renderBody(const Body& body, const ScopePtr& scope) {
  MarkedText out;
  execute(body, std::make_shared<Scope>(scope), out);
  return Value::markedString(std::move(out.text), std::move(out.spans));
}

Value Interpreter::applyFilterChain(const std::vector<std::unique_ptr<FilterExpr>>& filters,
                                    Value input, const ScopePtr& scope) {
  for (const auto& f : filters) {
    try {
      input = applyFilter(f->name, input, evaluateArguments(f->args, scope));
    } catch (const TemplateError& e) {
      if (e.hasLocation()) throw;
      throw e.located(f->loc.line, f->loc.column);
    }
  }
  return input;
}

Interpreter::Flow Interpreter::executeStatement(const Stmt& stmt, const ScopePtr& scope,
                                                MarkedText& out) {
  switch (stmt.kind) {
    case StmtKind::Text: append(out, static_cast<const TextStmt&>(stmt).text); break;
    case StmtKind::Output:
      appendValue(out, evaluate(*static_cast<const OutputStmt&>(stmt).expr, scope));
      break;
    case StmtKind::If: {
      const auto& s = static_cast<const IfStmt&>(stmt);
      for (const auto& [condition, body] : s.branches)
        if (evaluate(*condition, scope).truthy()) return execute(body, scope, out);
      return execute(s.otherwise, scope, out);
    }
    case StmtKind::For: return executeFor(static_cast<const ForStmt&>(stmt), scope, out);
    case StmtKind::Set: {
      const auto& s = static_cast<const SetStmt&>(stmt);
      assign(s.target, evaluate(*s.value, scope), scope);
      break;
    }
    case StmtKind::SetBlock: {
      const auto& s = static_cast<const SetBlockStmt&>(stmt);
      assign(s.target, applyFilterChain(s.filters, renderBody(s.body, scope), scope), scope);
      break;
    }
    case StmtKind::Macro: {
      const auto& s = static_cast<const MacroStmt&>(stmt);
      scope->set(s.name, Value(std::shared_ptr<Object>(std::make_shared<MacroObject>(s, scope))));
      break;
    }
    case StmtKind::CallBlock: {
      const auto& s = static_cast<const CallBlockStmt&>(stmt);
      const auto& call = static_cast<const CallExpr&>(*s.call);
      const Value caller(std::shared_ptr<Object>(std::make_shared<MacroObject>(*s.caller, scope)));
      const Value callee = evaluate(*call.callee, scope);
      CallArgs args = evaluateArguments(call.args, scope);
      args.keywords.emplace_back("caller", caller);
      appendValue(out, this->call(callee, std::move(args)));
      break;
    }
    case StmtKind::FilterBlock: {
      const auto& s = static_cast<const FilterBlockStmt&>(stmt);
      appendValue(out, applyFilterChain(s.filters, renderBody(s.body, scope), scope));
      break;
    }
    case StmtKind::With: {
      const auto& s = static_cast<const WithStmt&>(stmt);
      auto inner = std::make_shared<Scope>(scope);
      for (const auto& [target, value] : s.assignments) assign(target, evaluate(*value, scope), inner);
      return execute(s.body, inner, out);
    }
    case StmtKind::Scope:
      return execute(static_cast<const ScopeStmt&>(stmt).body, std::make_shared<Scope>(scope), out);
    case StmtKind::Break: return Flow::Break;
    case StmtKind::Continue: return Flow::Continue;
  }
  return Flow::Normal;
}

// Each iteration gets its own scope: a `set` inside the body is gone at the next iteration
// and after the loop, as in Jinja2.
Interpreter::Flow Interpreter::executeFor(const ForStmt& stmt, const ScopePtr& scope,
                                          MarkedText& out) {
  std::vector<Value> items = iterateValue(evaluate(*stmt.iterable, scope));
  if (stmt.filter) {
    std::vector<Value> kept;
    for (auto& item : items) {
      countIterations();
      auto probe = std::make_shared<Scope>(scope);
      assign(stmt.target, item, probe);
      if (evaluate(*stmt.filter, probe).truthy()) kept.push_back(std::move(item));
    }
    items = std::move(kept);
  }
  if (items.empty()) return execute(stmt.otherwise, std::make_shared<Scope>(scope), out);
  auto loop = std::make_shared<LoopObject>(items);
  const Value loopValue{std::shared_ptr<Object>(loop)};
  for (size_t i = 0; i < items.size(); ++i) {
    countIterations();
    auto iteration = std::make_shared<Scope>(scope);
    loop->setIndex(i);
    iteration->set("loop", loopValue);
    assign(stmt.target, items[i], iteration);
    if (execute(stmt.body, iteration, out) == Flow::Break) break;
  }
  return Flow::Normal;
}

void Interpreter::assign(const AssignTarget& target, const Value& value, const ScopePtr& scope) {
  if (!target.attribute.empty()) {
    const Value* object = scope->find(target.names[0]);
    auto* ns = object && object->isObject() ? dynamic_cast<Namespace*>(object->asObject().get())
                                            : nullptr;
    if (!ns) throwRuntime("cannot assign attribute on non-namespace object");
    ns->setAttribute(target.attribute, value);
    return;
  }
  if (!target.unpack) {
    scope->set(target.names[0], value);
    return;
  }
  const std::vector<Value> parts = iterateValue(value);
  const size_t expected = target.names.size();
  if (parts.size() > expected)
    throwRuntime("too many values to unpack (expected " + std::to_string(expected) + ")");
  if (parts.size() < expected)
    throwRuntime("not enough values to unpack (expected " + std::to_string(expected) + ", got " +
                 std::to_string(parts.size()) + ")");
  for (size_t i = 0; i < expected; ++i) scope->set(target.names[i], parts[i]);
}

Value Interpreter::callMacro(const MacroStmt& macro, const ScopePtr& closure, CallArgs args,
                             const Value& caller) {
  if (callDepth_ >= options_.limits.maxCallDepth)
    throwLimit("macro calls nest deeper than " + std::to_string(options_.limits.maxCallDepth) +
               " levels");
  struct DepthCount {
    int& depth;
    explicit DepthCount(int& d) : depth(d) { ++depth; }
    ~DepthCount() { --depth; }
  } depthCount(callDepth_);

  auto scope = std::make_shared<Scope>(closure);
  std::vector<bool> bound(macro.params.size(), false);
  std::vector<Value> extraPositional;
  for (size_t i = 0; i < args.positional.size(); ++i) {
    if (i < macro.params.size()) {
      scope->set(macro.params[i].name, args.positional[i]);
      bound[i] = true;
    } else {
      extraPositional.push_back(args.positional[i]);
    }
  }
  Dict extraKeywords;
  Value callerValue = caller;
  for (auto& [name, value] : args.keywords) {
    size_t index = 0;
    while (index < macro.params.size() && macro.params[index].name != name) ++index;
    if (index < macro.params.size()) {
      if (bound[index])
        throwRuntime("macro '" + macro.name + "' got multiple values for argument '" + name + "'");
      scope->set(name, value);
      bound[index] = true;
    } else if (name == "caller") {
      callerValue = value;
    } else {
      extraKeywords.set(Value(name), value);
    }
  }
  // Defaults are evaluated in the macro's scope, so they can use the parameters before them.
  for (size_t i = 0; i < macro.params.size(); ++i) {
    if (bound[i]) continue;
    const Parameter& p = macro.params[i];
    scope->set(p.name, p.defaultValue ? evaluate(*p.defaultValue, scope)
                                      : Value::undefined("parameter '" + p.name + "' was not provided"));
  }
  scope->set("varargs", Value::makeTuple(std::move(extraPositional)));
  scope->set("kwargs", Value(std::move(extraKeywords)));
  if (!callerValue.isUndefined()) scope->set("caller", callerValue);
  MarkedText out;
  execute(macro.body, scope, out);
  return Value::markedString(std::move(out.text), std::move(out.spans));
}

}  // namespace ember::chat
