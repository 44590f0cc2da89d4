// Expression evaluation.
#include "chat/builtins.h"
#include "chat/filters.h"
#include "chat/interpreter.h"
#include "chat/operators.h"
#include "chat/template_error.h"
#include "chat/value_format.h"
#include "chat/value_tests.h"

namespace ember::chat {

Value Interpreter::evaluate(const Expr& expr, const ScopePtr& scope) {
  DepthGuard guard(*this);
  try {
    return evaluateNode(expr, scope);
  } catch (const TemplateError& e) {
    if (e.hasLocation()) throw;
    throw e.located(expr.loc.line, expr.loc.column);
  }
}

CallArgs Interpreter::evaluateArguments(const std::vector<Argument>& args, const ScopePtr& scope) {
  CallArgs out;
  for (const auto& arg : args) {
    Value v = evaluate(*arg.value, scope);
    if (arg.name.empty()) {
      out.positional.push_back(std::move(v));
    } else {
      out.keywords.emplace_back(arg.name, std::move(v));
    }
  }
  return out;
}

Value Interpreter::call(const Value& callee, CallArgs args) {
  if (callee.isUndefined()) throwUndefined(callee);
  if (!callee.isCallable()) throwRuntime("'" + callee.typeName() + "' object is not callable");
  return callee.asObject()->call(*this, std::move(args));
}

Value Interpreter::applyFilter(std::string_view name, const Value& input, CallArgs args) {
  return callFilter(*this, name, input, args);
}

bool Interpreter::applyTest(std::string_view name, const Value& input, CallArgs args) {
  return callTest(*this, name, input, args);
}

Value Interpreter::evaluateCompare(const CompareExpr& expr, const ScopePtr& scope) {
  Value left = evaluate(*expr.first, scope);
  for (const auto& [op, rightExpr] : expr.rest) {
    Value right = evaluate(*rightExpr, scope);
    bool result = false;
    switch (op) {
      case CompareOp::Equal: result = pyEquals(left, right); break;
      case CompareOp::NotEqual: result = !pyEquals(left, right); break;
      case CompareOp::Less: result = pyCompare(left, right, "<") < 0; break;
      case CompareOp::LessEqual: result = pyCompare(left, right, "<=") <= 0; break;
      case CompareOp::Greater: result = pyCompare(left, right, ">") > 0; break;
      case CompareOp::GreaterEqual: result = pyCompare(left, right, ">=") >= 0; break;
      case CompareOp::In: result = containsValue(right, left); break;
      case CompareOp::NotIn: result = !containsValue(right, left); break;
    }
    if (!result) return Value(false);
    left = std::move(right);
  }
  return Value(true);
}

Value Interpreter::evaluateNode(const Expr& expr, const ScopePtr& scope) {
  switch (expr.kind) {
    case ExprKind::Literal: return static_cast<const LiteralExpr&>(expr).value;
    case ExprKind::Name: {
      const auto& name = static_cast<const NameExpr&>(expr).name;
      if (const Value* v = scope->find(name)) return *v;
      return Value::undefined("'" + name + "' is undefined");
    }
    case ExprKind::List: {
      const auto& e = static_cast<const ListExpr&>(expr);
      std::vector<Value> items;
      items.reserve(e.items.size());
      for (const auto& item : e.items) items.push_back(evaluate(*item, scope));
      return e.isTuple ? Value::makeTuple(std::move(items)) : Value::makeList(std::move(items));
    }
    case ExprKind::Dict: {
      Dict dict;
      for (const auto& [k, v] : static_cast<const DictExpr&>(expr).items) {
        Value key = evaluate(*k, scope);
        if (key.isList() && !key.isTuple()) throwRuntime("unhashable type: 'list'");
        if (key.isDict()) throwRuntime("unhashable type: 'dict'");
        dict.set(std::move(key), evaluate(*v, scope));
      }
      return Value(std::move(dict));
    }
    case ExprKind::Unary: {
      const auto& e = static_cast<const UnaryExpr&>(expr);
      return unaryOperation(e.op, evaluate(*e.operand, scope));
    }
    case ExprKind::Binary: {
      const auto& e = static_cast<const BinaryExpr&>(expr);
      Value left = evaluate(*e.left, scope);
      // `and` / `or` return one of their operands, like Python.
      if (e.op == BinaryOp::And) return left.truthy() ? evaluate(*e.right, scope) : left;
      if (e.op == BinaryOp::Or) return left.truthy() ? left : evaluate(*e.right, scope);
      return binaryOperation(*this, e.op, left, evaluate(*e.right, scope));
    }
    case ExprKind::Concat: {
      std::string out;
      ContentSpans spans;
      for (const auto& part : static_cast<const ConcatExpr&>(expr).parts) {
        const Value v = evaluate(*part, scope);
        appendSpans(spans, v.contentSpans(), out.size());
        out += toPyStr(v);
        checkStringSize(out.size());
      }
      return Value::markedString(std::move(out), std::move(spans));
    }
    case ExprKind::Compare: return evaluateCompare(static_cast<const CompareExpr&>(expr), scope);
    case ExprKind::Conditional: {
      const auto& e = static_cast<const ConditionalExpr&>(expr);
      if (evaluate(*e.condition, scope).truthy()) return evaluate(*e.then, scope);
      if (e.otherwise) return evaluate(*e.otherwise, scope);
      return Value::undefined("the inline if-expression on line " + std::to_string(e.loc.line) +
                              " evaluated to false and no else section was defined.");
    }
    case ExprKind::GetAttr: {
      const auto& e = static_cast<const GetAttrExpr&>(expr);
      return getAttribute(evaluate(*e.object, scope), e.name);
    }
    case ExprKind::GetItem: {
      const auto& e = static_cast<const GetItemExpr&>(expr);
      Value object = evaluate(*e.object, scope);
      if (e.index->kind == ExprKind::Slice)
        return evaluateSlice(object, static_cast<const SliceExpr&>(*e.index), scope);
      return getItem(object, evaluate(*e.index, scope));
    }
    case ExprKind::Slice: throwRuntime("a slice is only valid inside []");
    case ExprKind::Call: {
      const auto& e = static_cast<const CallExpr&>(expr);
      Value callee = evaluate(*e.callee, scope);
      return call(callee, evaluateArguments(e.args, scope));
    }
    case ExprKind::Filter: {
      const auto& e = static_cast<const FilterExpr&>(expr);
      Value input = e.operand ? evaluate(*e.operand, scope) : Value();
      return applyFilter(e.name, input, evaluateArguments(e.args, scope));
    }
    case ExprKind::Test: {
      const auto& e = static_cast<const TestExpr&>(expr);
      Value input = evaluate(*e.operand, scope);
      return Value(applyTest(e.name, input, evaluateArguments(e.args, scope)) != e.negated);
    }
  }
  throwRuntime("unknown expression");
}

}  // namespace ember::chat
