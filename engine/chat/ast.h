#pragma once
// The parsed template: expression and statement nodes. Nodes are immutable after parsing and
// carry their template position for error messages.
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "chat/value.h"

namespace ember::chat {

struct SourceLocation {
  int line = 0;
  int column = 0;
};

// ---- expressions ----

enum class ExprKind {
  Literal, Name, List, Dict, Unary, Binary, Concat, Compare, Conditional, GetAttr, GetItem,
  Slice, Call, Filter, Test,
};

struct Expr {
  explicit Expr(ExprKind k, SourceLocation l) : kind(k), loc(l) {}
  virtual ~Expr() = default;
  ExprKind kind;
  SourceLocation loc;
};
using ExprPtr = std::unique_ptr<Expr>;

struct Argument {
  std::string name;  // empty for a positional argument
  ExprPtr value;
};

struct LiteralExpr : Expr {
  LiteralExpr(SourceLocation l, Value v) : Expr(ExprKind::Literal, l), value(std::move(v)) {}
  Value value;
};

struct NameExpr : Expr {
  NameExpr(SourceLocation l, std::string n) : Expr(ExprKind::Name, l), name(std::move(n)) {}
  std::string name;
};

struct ListExpr : Expr {  // [a, b] or (a, b)
  ListExpr(SourceLocation l, bool t) : Expr(ExprKind::List, l), isTuple(t) {}
  std::vector<ExprPtr> items;
  bool isTuple;
};

struct DictExpr : Expr {
  explicit DictExpr(SourceLocation l) : Expr(ExprKind::Dict, l) {}
  std::vector<std::pair<ExprPtr, ExprPtr>> items;
};

enum class UnaryOp { Not, Negate, Plus };
struct UnaryExpr : Expr {
  UnaryExpr(SourceLocation l, UnaryOp o, ExprPtr e)
      : Expr(ExprKind::Unary, l), op(o), operand(std::move(e)) {}
  UnaryOp op;
  ExprPtr operand;
};

enum class BinaryOp { And, Or, Add, Subtract, Multiply, Divide, FloorDivide, Modulo, Power };
struct BinaryExpr : Expr {
  BinaryExpr(SourceLocation l, BinaryOp o, ExprPtr a, ExprPtr b)
      : Expr(ExprKind::Binary, l), op(o), left(std::move(a)), right(std::move(b)) {}
  BinaryOp op;
  ExprPtr left, right;
};

struct ConcatExpr : Expr {  // a ~ b ~ c
  explicit ConcatExpr(SourceLocation l) : Expr(ExprKind::Concat, l) {}
  std::vector<ExprPtr> parts;
};

enum class CompareOp { Equal, NotEqual, Less, LessEqual, Greater, GreaterEqual, In, NotIn };
struct CompareExpr : Expr {  // a < b <= c: chained like Python
  CompareExpr(SourceLocation l, ExprPtr f) : Expr(ExprKind::Compare, l), first(std::move(f)) {}
  ExprPtr first;
  std::vector<std::pair<CompareOp, ExprPtr>> rest;
};

struct ConditionalExpr : Expr {  // then if condition else otherwise
  explicit ConditionalExpr(SourceLocation l) : Expr(ExprKind::Conditional, l) {}
  ExprPtr condition, then, otherwise;  // otherwise may be null
};

struct GetAttrExpr : Expr {  // object.name
  GetAttrExpr(SourceLocation l, ExprPtr o, std::string n)
      : Expr(ExprKind::GetAttr, l), object(std::move(o)), name(std::move(n)) {}
  ExprPtr object;
  std::string name;
};

struct GetItemExpr : Expr {  // object[index]; index may be a SliceExpr
  GetItemExpr(SourceLocation l, ExprPtr o, ExprPtr i)
      : Expr(ExprKind::GetItem, l), object(std::move(o)), index(std::move(i)) {}
  ExprPtr object, index;
};

struct SliceExpr : Expr {  // start:stop:step, each part optional
  explicit SliceExpr(SourceLocation l) : Expr(ExprKind::Slice, l) {}
  ExprPtr start, stop, step;
};

struct CallExpr : Expr {
  CallExpr(SourceLocation l, ExprPtr c) : Expr(ExprKind::Call, l), callee(std::move(c)) {}
  ExprPtr callee;
  std::vector<Argument> args;
};

struct FilterExpr : Expr {  // operand | name(args); operand is null inside {% filter %}
  FilterExpr(SourceLocation l, ExprPtr o, std::string n)
      : Expr(ExprKind::Filter, l), operand(std::move(o)), name(std::move(n)) {}
  ExprPtr operand;
  std::string name;
  std::vector<Argument> args;
};

struct TestExpr : Expr {  // operand is [not] name(args)
  TestExpr(SourceLocation l, ExprPtr o, std::string n)
      : Expr(ExprKind::Test, l), operand(std::move(o)), name(std::move(n)) {}
  ExprPtr operand;
  std::string name;
  std::vector<Argument> args;
  bool negated = false;
};

// ---- statements ----

enum class StmtKind {
  Text, Output, If, For, Set, SetBlock, Macro, CallBlock, FilterBlock, With, Break, Continue,
  Scope,
};

struct Stmt {
  Stmt(StmtKind k, SourceLocation l) : kind(k), loc(l) {}
  virtual ~Stmt() = default;
  StmtKind kind;
  SourceLocation loc;
};
using StmtPtr = std::unique_ptr<Stmt>;
using Body = std::vector<StmtPtr>;

struct TextStmt : Stmt {
  TextStmt(SourceLocation l, std::string t) : Stmt(StmtKind::Text, l), text(std::move(t)) {}
  std::string text;
};

struct OutputStmt : Stmt {  // {{ expr }}
  OutputStmt(SourceLocation l, ExprPtr e) : Stmt(StmtKind::Output, l), expr(std::move(e)) {}
  ExprPtr expr;
};

struct IfStmt : Stmt {
  explicit IfStmt(SourceLocation l) : Stmt(StmtKind::If, l) {}
  std::vector<std::pair<ExprPtr, Body>> branches;  // if / elif
  Body otherwise;
};

// What a for or set statement assigns to: one name, several names (unpacking), or a namespace
// attribute (`ns.attr`).
struct AssignTarget {
  std::vector<std::string> names;
  bool unpack = false;
  std::string attribute;  // non-empty: names[0].attribute
};

struct ForStmt : Stmt {
  explicit ForStmt(SourceLocation l) : Stmt(StmtKind::For, l) {}
  AssignTarget target;
  ExprPtr iterable;
  ExprPtr filter;  // `for x in xs if cond`; may be null
  Body body;
  Body otherwise;
};

struct SetStmt : Stmt {
  explicit SetStmt(SourceLocation l) : Stmt(StmtKind::Set, l) {}
  AssignTarget target;
  ExprPtr value;
};

struct SetBlockStmt : Stmt {  // {% set x | filters %}...{% endset %}
  explicit SetBlockStmt(SourceLocation l) : Stmt(StmtKind::SetBlock, l) {}
  AssignTarget target;
  std::vector<std::unique_ptr<FilterExpr>> filters;
  Body body;
};

struct Parameter {
  std::string name;
  ExprPtr defaultValue;  // may be null
};

struct MacroStmt : Stmt {
  explicit MacroStmt(SourceLocation l) : Stmt(StmtKind::Macro, l) {}
  std::string name;
  std::vector<Parameter> params;
  Body body;
};

struct CallBlockStmt : Stmt {  // {% call(params) macro(args) %}body{% endcall %}
  explicit CallBlockStmt(SourceLocation l) : Stmt(StmtKind::CallBlock, l) {}
  std::unique_ptr<MacroStmt> caller;  // the body, as the `caller` macro
  ExprPtr call;
};

struct FilterBlockStmt : Stmt {  // {% filter upper %}body{% endfilter %}
  explicit FilterBlockStmt(SourceLocation l) : Stmt(StmtKind::FilterBlock, l) {}
  std::vector<std::unique_ptr<FilterExpr>> filters;
  Body body;
};

struct WithStmt : Stmt {  // {% with a = 1 %}body{% endwith %}
  explicit WithStmt(SourceLocation l) : Stmt(StmtKind::With, l) {}
  std::vector<std::pair<AssignTarget, ExprPtr>> assignments;
  Body body;
};

struct LoopControlStmt : Stmt {  // {% break %} / {% continue %}
  LoopControlStmt(SourceLocation l, StmtKind k) : Stmt(k, l) {}
};

struct ScopeStmt : Stmt {  // a body rendered in place, e.g. HF's {% generation %}
  explicit ScopeStmt(SourceLocation l) : Stmt(StmtKind::Scope, l) {}
  Body body;
};

struct TemplateAst {
  Body body;
};

}  // namespace ember::chat
