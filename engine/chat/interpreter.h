#pragma once
// Walks the AST: statements write text, expressions produce Values. Attribute and item access,
// calls, filters and tests follow Jinja2's sandboxed environment (HF's
// ImmutableSandboxedEnvironment with the default Undefined).
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "chat/ast.h"
#include "chat/render_options.h"
#include "chat/value.h"

namespace ember::chat {

class Namespace;

// Rendered text and which of its bytes came from message content.
struct MarkedText {
  std::string text;
  ContentSpans spans;
};

// One level of variables: the globals, the template's variables, a loop iteration, a macro
// call. Lookups walk up to the parent; assignments stay in the level they are made in.
class Scope {
 public:
  explicit Scope(std::shared_ptr<Scope> parent = nullptr) : parent_(std::move(parent)) {}
  const Value* find(std::string_view name) const;
  void set(std::string_view name, Value value);

 private:
  std::shared_ptr<Scope> parent_;
  std::vector<std::pair<std::string, Value>> vars_;
};
using ScopePtr = std::shared_ptr<Scope>;

class Interpreter {
 public:
  explicit Interpreter(const RenderOptions& options);

  MarkedText render(const TemplateAst& ast, const Dict& variables);

  // The operations below are Jinja2's environment operations, used by the evaluator and by
  // filters, methods and globals. Errors are thrown as TemplateError without a position; the
  // evaluator adds the position of the expression that failed.
  Value evaluate(const Expr& expr, const ScopePtr& scope);
  Value getAttribute(const Value& object, std::string_view name);
  Value getItem(const Value& object, const Value& key);
  Value call(const Value& callee, CallArgs args);
  Value applyFilter(std::string_view name, const Value& input, CallArgs args);
  bool applyTest(std::string_view name, const Value& input, CallArgs args);
  Value callMacro(const MacroStmt& macro, const ScopePtr& closure, CallArgs args,
                  const Value& caller);

  void trackNamespace(const std::shared_ptr<Namespace>& ns);

  // Accounting against RenderLimits.
  void checkStringSize(size_t bytes);  // a string about to be built; also counts work
  void checkListSize(size_t items);    // a list about to be built (bounded like a string)
  void countIterations(uint64_t n = 1);
  std::tm now() const;

 private:
  enum class Flow { Normal, Break, Continue };

  // Statements (interpreter.cpp).
  Flow execute(const Body& body, const ScopePtr& scope, MarkedText& out);
  Flow executeStatement(const Stmt& stmt, const ScopePtr& scope, MarkedText& out);
  Flow executeFor(const ForStmt& stmt, const ScopePtr& scope, MarkedText& out);
  void assign(const AssignTarget& target, const Value& value, const ScopePtr& scope);
  void append(MarkedText& out, std::string_view text);
  void appendValue(MarkedText& out, const Value& value);  // str(value), keeping its content spans
  Value renderBody(const Body& body, const ScopePtr& scope);  // a string with content spans
  Value applyFilterChain(const std::vector<std::unique_ptr<FilterExpr>>& filters, Value input,
                         const ScopePtr& scope);

  // Expressions (evaluator.cpp).
  Value evaluateNode(const Expr& expr, const ScopePtr& scope);
  Value evaluateCompare(const CompareExpr& expr, const ScopePtr& scope);
  Value evaluateSlice(const Value& object, const SliceExpr& slice, const ScopePtr& scope);
  CallArgs evaluateArguments(const std::vector<Argument>& args, const ScopePtr& scope);

  RenderOptions options_;
  std::vector<std::shared_ptr<Namespace>> namespaces_;  // every namespace() of this render
  uint64_t iterations_ = 0;
  uint64_t workBytes_ = 0;
  int callDepth_ = 0;
  int evaluationDepth_ = 0;

  class DepthGuard {
   public:
    explicit DepthGuard(Interpreter& interp);
    ~DepthGuard() { --interp_.evaluationDepth_; }
   private:
    Interpreter& interp_;
  };
};

// Python's iter(value) materialised: list/tuple items, str code points, dict keys; undefined
// iterates as empty. Throws "'int' object is not iterable" otherwise.
std::vector<Value> iterateValue(const Value& value);

}  // namespace ember::chat
