// Expression parsing, in Jinja2's precedence order (lowest first): conditional, or, and, not,
// comparisons, + -, ~, * / // %, **, unary - +, then primaries with postfix [] . () and the
// filter/test chain.
#include <algorithm>

#include "chat/filters.h"
#include "chat/parser.h"
#include "chat/template_error.h"
#include "chat/value_tests.h"

namespace ember::chat {

ExprPtr Parser::parseTuple(bool withCondition, std::initializer_list<std::string_view> extraEnd,
                           bool explicitParentheses) {
  const SourceLocation at = here();
  std::vector<ExprPtr> items;
  bool isTuple = false;
  auto atEnd = [&] {
    const Token& t = current();
    if (t.type == TokenType::VariableEnd || t.type == TokenType::BlockEnd) return true;
    if (t.type == TokenType::Operator && t.text == ")") return true;
    return t.type == TokenType::Name &&
           std::find(extraEnd.begin(), extraEnd.end(), t.text) != extraEnd.end();
  };
  for (;;) {
    if (!items.empty()) expectOperator(",");
    if (atEnd()) break;
    items.push_back(parseExpression(withCondition));
    if (!atOperator(",")) break;
    isTuple = true;
  }
  if (!isTuple) {
    if (!items.empty()) return std::move(items[0]);
    if (!explicitParentheses) fail("expected an expression, got " + describeCurrent());
  }
  auto node = std::make_unique<ListExpr>(at, true);
  node->items = std::move(items);
  return node;
}

ExprPtr Parser::parseExpression(bool withCondition) {
  DepthGuard guard(*this);
  return withCondition ? parseCondition() : parseOr();
}

ExprPtr Parser::parseCondition() {
  ExprPtr expr = parseOr();
  while (atName("if")) {
    auto node = std::make_unique<ConditionalExpr>(here());
    advance();
    node->condition = parseOr();
    if (skipName("else")) node->otherwise = parseCondition();
    node->then = std::move(expr);
    expr = std::move(node);
  }
  return expr;
}

ExprPtr Parser::parseOr() {
  ExprPtr left = parseAnd();
  while (atName("or")) {
    const SourceLocation at = here();
    advance();
    left = std::make_unique<BinaryExpr>(at, BinaryOp::Or, std::move(left), parseAnd());
  }
  return left;
}

ExprPtr Parser::parseAnd() {
  ExprPtr left = parseNot();
  while (atName("and")) {
    const SourceLocation at = here();
    advance();
    left = std::make_unique<BinaryExpr>(at, BinaryOp::And, std::move(left), parseNot());
  }
  return left;
}

ExprPtr Parser::parseNot() {
  if (atName("not")) {
    DepthGuard guard(*this);
    const SourceLocation at = here();
    advance();
    return std::make_unique<UnaryExpr>(at, UnaryOp::Not, parseNot());
  }
  return parseCompare();
}

ExprPtr Parser::parseCompare() {
  const SourceLocation at = here();
  ExprPtr first = parseAdditive();
  std::vector<std::pair<CompareOp, ExprPtr>> rest;
  for (;;) {
    const Token& t = current();
    CompareOp op;
    if (t.type == TokenType::Operator && t.text == "==") op = CompareOp::Equal;
    else if (t.type == TokenType::Operator && t.text == "!=") op = CompareOp::NotEqual;
    else if (t.type == TokenType::Operator && t.text == "<") op = CompareOp::Less;
    else if (t.type == TokenType::Operator && t.text == "<=") op = CompareOp::LessEqual;
    else if (t.type == TokenType::Operator && t.text == ">") op = CompareOp::Greater;
    else if (t.type == TokenType::Operator && t.text == ">=") op = CompareOp::GreaterEqual;
    else if (atName("in")) op = CompareOp::In;
    else if (atName("not") && look().type == TokenType::Name && look().text == "in") {
      op = CompareOp::NotIn;
      advance();
    } else {
      break;
    }
    advance();
    rest.emplace_back(op, parseAdditive());
  }
  if (rest.empty()) return first;
  auto node = std::make_unique<CompareExpr>(at, std::move(first));
  node->rest = std::move(rest);
  return node;
}

ExprPtr Parser::parseAdditive() {
  ExprPtr left = parseConcat();
  while (atOperator("+") || atOperator("-")) {
    const SourceLocation at = here();
    const BinaryOp op = advance().text == "+" ? BinaryOp::Add : BinaryOp::Subtract;
    left = std::make_unique<BinaryExpr>(at, op, std::move(left), parseConcat());
  }
  return left;
}

ExprPtr Parser::parseConcat() {
  const SourceLocation at = here();
  ExprPtr first = parseMultiplicative();
  if (!atOperator("~")) return first;
  auto node = std::make_unique<ConcatExpr>(at);
  node->parts.push_back(std::move(first));
  while (skipOperator("~")) node->parts.push_back(parseMultiplicative());
  return node;
}

ExprPtr Parser::parseMultiplicative() {
  ExprPtr left = parsePower();
  for (;;) {
    BinaryOp op;
    if (atOperator("*")) op = BinaryOp::Multiply;
    else if (atOperator("/")) op = BinaryOp::Divide;
    else if (atOperator("//")) op = BinaryOp::FloorDivide;
    else if (atOperator("%")) op = BinaryOp::Modulo;
    else break;
    const SourceLocation at = here();
    advance();
    left = std::make_unique<BinaryExpr>(at, op, std::move(left), parsePower());
  }
  return left;
}

ExprPtr Parser::parsePower() {
  ExprPtr left = parseUnary(true);
  while (atOperator("**")) {
    const SourceLocation at = here();
    advance();
    left = std::make_unique<BinaryExpr>(at, BinaryOp::Power, std::move(left), parseUnary(true));
  }
  return left;
}

ExprPtr Parser::parseUnary(bool withFilter) {
  DepthGuard guard(*this);
  const SourceLocation at = here();
  ExprPtr node;
  if (atOperator("-")) {
    advance();
    node = std::make_unique<UnaryExpr>(at, UnaryOp::Negate, parseUnary(false));
  } else if (atOperator("+")) {
    advance();
    node = std::make_unique<UnaryExpr>(at, UnaryOp::Plus, parseUnary(false));
  } else {
    node = parsePrimary();
  }
  node = parsePostfix(std::move(node));
  if (withFilter) node = parseFilterOrTest(std::move(node));
  return node;
}

ExprPtr Parser::parsePrimary() {
  const Token& t = current();
  const SourceLocation at = here();
  switch (t.type) {
    case TokenType::Name: {
      const std::string name = advance().text;
      if (name == "true" || name == "True") return std::make_unique<LiteralExpr>(at, Value(true));
      if (name == "false" || name == "False")
        return std::make_unique<LiteralExpr>(at, Value(false));
      if (name == "none" || name == "None")
        return std::make_unique<LiteralExpr>(at, Value(nullptr));
      return std::make_unique<NameExpr>(at, name);
    }
    case TokenType::String: {
      std::string value = advance().text;
      while (current().type == TokenType::String) value += advance().text;  // "a" "b"
      return std::make_unique<LiteralExpr>(at, Value(std::move(value)));
    }
    case TokenType::Integer: return std::make_unique<LiteralExpr>(at, Value(advance().intValue));
    case TokenType::Float: return std::make_unique<LiteralExpr>(at, Value(advance().floatValue));
    case TokenType::Operator:
      if (t.text == "(") {
        advance();
        ExprPtr inner = parseTuple(true, {}, true);
        expectOperator(")");
        return inner;
      }
      if (t.text == "[") return parseList();
      if (t.text == "{") return parseDict();
      break;
    default: break;
  }
  fail("unexpected " + describeCurrent());
}

ExprPtr Parser::parseList() {
  DepthGuard guard(*this);
  auto node = std::make_unique<ListExpr>(here(), false);
  expectOperator("[");
  while (!atOperator("]")) {
    if (!node->items.empty()) expectOperator(",");
    if (atOperator("]")) break;
    node->items.push_back(parseExpression());
  }
  advance();
  return node;
}

ExprPtr Parser::parseDict() {
  DepthGuard guard(*this);
  auto node = std::make_unique<DictExpr>(here());
  expectOperator("{");
  while (!atOperator("}")) {
    if (!node->items.empty()) expectOperator(",");
    if (atOperator("}")) break;
    ExprPtr key = parseExpression();
    expectOperator(":");
    node->items.emplace_back(std::move(key), parseExpression());
  }
  advance();
  return node;
}

ExprPtr Parser::parsePostfix(ExprPtr node) {
  for (;;) {
    if (atOperator(".") || atOperator("[")) {
      node = parseSubscript(std::move(node));
    } else if (atOperator("(")) {
      node = parseCall(std::move(node));
    } else {
      return node;
    }
  }
}

ExprPtr Parser::parseFilterOrTest(ExprPtr node) {
  for (;;) {
    if (atOperator("|")) {
      node = parseFilterChain(std::move(node));
    } else if (atName("is")) {
      node = parseTest(std::move(node));
    } else if (atOperator("(")) {
      node = parseCall(std::move(node));
    } else {
      return node;
    }
  }
}

ExprPtr Parser::parseSubscript(ExprPtr node) {
  DepthGuard guard(*this);
  const SourceLocation at = here();
  if (skipOperator(".")) {
    if (current().type == TokenType::Name)
      return std::make_unique<GetAttrExpr>(at, std::move(node), advance().text);
    if (current().type == TokenType::Integer) {
      const SourceLocation indexAt = here();
      auto index = std::make_unique<LiteralExpr>(indexAt, Value(advance().intValue));
      return std::make_unique<GetItemExpr>(at, std::move(node), std::move(index));
    }
    fail("expected name or number after '.'");
  }
  expectOperator("[");
  std::vector<ExprPtr> args;
  while (!atOperator("]")) {
    if (!args.empty()) expectOperator(",");
    args.push_back(parseSubscribed());
  }
  advance();
  if (args.size() == 1) return std::make_unique<GetItemExpr>(at, std::move(node), std::move(args[0]));
  if (args.empty()) fail("expected an index or a slice", at);
  auto tuple = std::make_unique<ListExpr>(at, true);
  tuple->items = std::move(args);
  return std::make_unique<GetItemExpr>(at, std::move(node), std::move(tuple));
}

ExprPtr Parser::parseSubscribed() {
  const SourceLocation at = here();
  ExprPtr first;
  if (!atOperator(":")) {
    first = parseExpression();
    if (!atOperator(":")) return first;
  }
  auto slice = std::make_unique<SliceExpr>(at);
  slice->start = std::move(first);
  advance();  // ':'
  if (!atOperator("]") && !atOperator(",") && !atOperator(":")) slice->stop = parseExpression();
  if (skipOperator(":")) {
    if (!atOperator("]") && !atOperator(",")) slice->step = parseExpression();
  }
  return slice;
}

void Parser::parseCallArguments(std::vector<Argument>& args) {
  expectOperator("(");
  bool sawKeyword = false;
  while (!atOperator(")")) {
    if (!args.empty()) expectOperator(",");
    if (atOperator(")")) break;
    if (atOperator("*") || atOperator("**"))
      throw TemplateError(TemplateErrorKind::Unsupported,
                          "*args and **kwargs in calls are not supported", here().line,
                          here().column);
    Argument arg;
    if (current().type == TokenType::Name && look().type == TokenType::Operator &&
        look().text == "=") {
      arg.name = advance().text;
      advance();
      sawKeyword = true;
    } else if (sawKeyword) {
      fail("positional argument follows keyword argument");
    }
    arg.value = parseExpression();
    args.push_back(std::move(arg));
  }
  advance();
}

ExprPtr Parser::parseCall(ExprPtr callee) {
  DepthGuard guard(*this);
  auto node = std::make_unique<CallExpr>(here(), std::move(callee));
  parseCallArguments(node->args);
  return node;
}

std::unique_ptr<FilterExpr> Parser::parseOneFilter(ExprPtr operand) {
  const SourceLocation at = here();
  std::string name = expectName();
  while (atOperator(".")) {
    advance();
    name += "." + expectName();
  }
  if (!isKnownFilter(name))
    throw TemplateError(TemplateErrorKind::Unsupported, "No filter named '" + name + "'.",
                        at.line, at.column);
  auto node = std::make_unique<FilterExpr>(at, std::move(operand), std::move(name));
  if (atOperator("(")) parseCallArguments(node->args);
  return node;
}

ExprPtr Parser::parseFilterChain(ExprPtr node) {
  while (skipOperator("|")) {
    DepthGuard guard(*this);
    node = parseOneFilter(std::move(node));
  }
  return node;
}

ExprPtr Parser::parseTest(ExprPtr node) {
  DepthGuard guard(*this);
  const SourceLocation at = here();
  advance();  // 'is'
  const bool negated = skipName("not");
  std::string name = expectName();
  while (atOperator(".")) {
    advance();
    name += "." + expectName();
  }
  if (!isKnownTest(name))
    throw TemplateError(TemplateErrorKind::Unsupported, "No test named '" + name + "' found.", at.line,
                        at.column);
  auto test = std::make_unique<TestExpr>(at, std::move(node), std::move(name));
  test->negated = negated;
  const Token& t = current();
  const bool startsArgument =
      t.type == TokenType::Name || t.type == TokenType::String || t.type == TokenType::Integer ||
      t.type == TokenType::Float ||
      (t.type == TokenType::Operator && (t.text == "[" || t.text == "{"));
  if (atOperator("(")) {
    parseCallArguments(test->args);
  } else if (startsArgument && !atName("else") && !atName("or") && !atName("and")) {
    if (atName("is")) fail("you cannot chain multiple tests with 'is'");
    Argument arg;
    arg.value = parsePostfix(parsePrimary());
    test->args.push_back(std::move(arg));
  }
  return test;
}

}  // namespace ember::chat
