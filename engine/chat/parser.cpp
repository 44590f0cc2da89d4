// Statement parsing: the template body, tags and their end tags.
#include "chat/parser.h"

#include <algorithm>

#include "chat/filters.h"
#include "chat/template_error.h"

namespace ember::chat {
namespace {

// Deep enough for any real template (they nest a dozen levels), shallow enough that the
// recursive parser and evaluator stay far from the stack's end.
constexpr int kMaxNesting = 256;

bool contains(std::initializer_list<std::string_view> names, std::string_view name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

}  // namespace

TemplateAst parseTemplate(std::string_view source) { return Parser(tokenize(source)).parseAll(); }

Parser::DepthGuard::DepthGuard(Parser& p) : parser_(p) {
  if (++parser_.depth_ > kMaxNesting)
    throw TemplateError(TemplateErrorKind::Limit,
                        "template nests deeper than " + std::to_string(kMaxNesting) + " levels",
                        p.current().line, p.current().column);
}

TemplateAst Parser::parseAll() {
  TemplateAst ast;
  ast.body = subparse({});
  return ast;
}

const Token& Parser::look(size_t ahead) const {
  return tokens_[std::min(pos_ + ahead, tokens_.size() - 1)];
}

const Token& Parser::advance() {
  const Token& t = tokens_[pos_];
  if (pos_ + 1 < tokens_.size()) ++pos_;
  return t;
}

bool Parser::atOperator(std::string_view op) const {
  return current().type == TokenType::Operator && current().text == op;
}

bool Parser::atName(std::string_view name) const {
  return current().type == TokenType::Name && current().text == name;
}

bool Parser::skipOperator(std::string_view op) {
  if (!atOperator(op)) return false;
  advance();
  return true;
}

bool Parser::skipName(std::string_view name) {
  if (!atName(name)) return false;
  advance();
  return true;
}

std::string Parser::describeCurrent() const {
  const Token& t = current();
  switch (t.type) {
    case TokenType::Data: return "template data";
    case TokenType::VariableBegin: return "'{{'";
    case TokenType::VariableEnd: return "end of print statement";
    case TokenType::BlockBegin: return "'{%'";
    case TokenType::BlockEnd: return "end of statement block";
    case TokenType::Name: return "name '" + t.text + "'";
    case TokenType::String: return "string";
    case TokenType::Integer: return "integer";
    case TokenType::Float: return "float";
    case TokenType::Operator: return "'" + t.text + "'";
    case TokenType::End: return "end of template";
  }
  return "token";
}

void Parser::fail(const std::string& message) const { fail(message, here()); }

void Parser::fail(const std::string& message, SourceLocation at) const {
  throw TemplateError(TemplateErrorKind::Syntax, message, at.line, at.column);
}

void Parser::expectOperator(std::string_view op) {
  if (!skipOperator(op)) fail("expected '" + std::string(op) + "', got " + describeCurrent());
}

std::string Parser::expectName() {
  if (current().type != TokenType::Name) fail("expected a name, got " + describeCurrent());
  return advance().text;
}

void Parser::expect(TokenType type, std::string_view what) {
  if (current().type != type) fail("expected " + std::string(what) + ", got " + describeCurrent());
  advance();
}

void Parser::finishBlock(std::string_view endTag) {
  if (!skipName(endTag)) fail("expected '" + std::string(endTag) + "', got " + describeCurrent());
  expect(TokenType::BlockEnd, "end of statement block");
}

Body Parser::subparse(std::initializer_list<std::string_view> endTags) {
  DepthGuard guard(*this);
  Body body;
  for (;;) {
    const Token& t = current();
    const SourceLocation at{t.line, t.column};
    switch (t.type) {
      case TokenType::Data:
        body.push_back(std::make_unique<TextStmt>(at, t.text));
        advance();
        break;
      case TokenType::VariableBegin: {
        advance();
        auto expr = parseTuple(true);
        expect(TokenType::VariableEnd, "end of print statement");
        body.push_back(std::make_unique<OutputStmt>(at, std::move(expr)));
        break;
      }
      case TokenType::BlockBegin:
        advance();
        if (current().type == TokenType::Name && contains(endTags, current().text)) return body;
        body.push_back(parseStatement());
        break;
      case TokenType::End: {
        if (endTags.size() == 0) return body;
        std::string expected;
        for (auto tag : endTags) expected += (expected.empty() ? "'" : " or '") + std::string(tag) + "'";
        fail("unexpected end of template; expected " + expected);
      }
      default: fail("unexpected " + describeCurrent());
    }
  }
}

StmtPtr Parser::parseStatement() {
  if (current().type != TokenType::Name) fail("tag name expected, got " + describeCurrent());
  const std::string tag = current().text;
  const SourceLocation at = here();
  if (tag == "if") return parseIf();
  if (tag == "for") return parseFor();
  if (tag == "set") return parseSet();
  if (tag == "macro") return parseMacro();
  if (tag == "call") return parseCallBlock();
  if (tag == "filter") return parseFilterBlock();
  if (tag == "with") return parseWith();
  if (tag == "generation") return parseScopedBlock("endgeneration");  // HF's extension
  if (tag == "break" || tag == "continue") {
    if (loopDepth_ == 0) fail("'" + tag + "' outside of a loop");
    advance();
    expect(TokenType::BlockEnd, "end of statement block");
    return std::make_unique<LoopControlStmt>(at, tag == "break" ? StmtKind::Break
                                                                : StmtKind::Continue);
  }
  static const std::initializer_list<std::string_view> kUnsupported = {
      "include", "import", "from", "extends", "block", "autoescape"};
  if (contains(kUnsupported, tag))
    throw TemplateError(TemplateErrorKind::Unsupported,
                        "the '" + tag + "' tag is not supported in chat templates", at.line,
                        at.column);
  fail("encountered unknown tag '" + tag + "'");
}

StmtPtr Parser::parseIf() {
  auto node = std::make_unique<IfStmt>(here());
  advance();
  for (;;) {
    auto condition = parseTuple(false);
    expect(TokenType::BlockEnd, "end of statement block");
    Body body = subparse({"elif", "else", "endif"});
    node->branches.emplace_back(std::move(condition), std::move(body));
    if (skipName("elif")) continue;
    if (skipName("else")) {
      expect(TokenType::BlockEnd, "end of statement block");
      node->otherwise = subparse({"endif"});
    }
    finishBlock("endif");
    return node;
  }
}

StmtPtr Parser::parseFor() {
  auto node = std::make_unique<ForStmt>(here());
  advance();
  node->target = parseAssignTarget(false, {"in"});
  if (!skipName("in")) fail("expected 'in', got " + describeCurrent());
  node->iterable = parseTuple(false, {"recursive"});
  if (skipName("if")) node->filter = parseExpression();
  if (atName("recursive"))
    throw TemplateError(TemplateErrorKind::Unsupported, "recursive for loops are not supported",
                        here().line, here().column);
  expect(TokenType::BlockEnd, "end of statement block");
  ++loopDepth_;
  node->body = subparse({"endfor", "else"});
  --loopDepth_;
  if (skipName("else")) {
    expect(TokenType::BlockEnd, "end of statement block");
    node->otherwise = subparse({"endfor"});
  }
  finishBlock("endfor");
  return node;
}

AssignTarget Parser::parseAssignTarget(bool withNamespace,
                                       std::initializer_list<std::string_view> end) {
  AssignTarget target;
  if (withNamespace && current().type == TokenType::Name && look().type == TokenType::Operator &&
      look().text == ".") {
    target.names.push_back(expectName());
    advance();
    target.attribute = expectName();
    return target;
  }
  const bool parenthesised = skipOperator("(");
  for (;;) {
    target.names.push_back(expectName());
    if (!skipOperator(",")) break;
    target.unpack = true;
    if (current().type != TokenType::Name || contains(end, current().text)) break;
  }
  if (parenthesised) {
    expectOperator(")");
    target.unpack = target.unpack || target.names.size() > 1;
  }
  for (const auto& name : target.names)
    if (name == "true" || name == "false" || name == "none" || name == "True" ||
        name == "False" || name == "None")
      fail("can't assign to the constant '" + name + "'");
  return target;
}

StmtPtr Parser::parseSet() {
  const SourceLocation at = here();
  advance();
  AssignTarget target = parseAssignTarget(true, {});
  if (skipOperator("=")) {
    auto node = std::make_unique<SetStmt>(at);
    node->target = std::move(target);
    node->value = parseTuple(true);
    expect(TokenType::BlockEnd, "end of statement block");
    return node;
  }
  auto node = std::make_unique<SetBlockStmt>(at);
  node->target = std::move(target);
  while (atOperator("|")) {
    advance();
    node->filters.push_back(parseOneFilter(nullptr));
  }
  expect(TokenType::BlockEnd, "end of statement block");
  node->body = subparse({"endset"});
  finishBlock("endset");
  return node;
}

void Parser::parseParameters(std::vector<Parameter>& params) {
  expectOperator("(");
  while (!atOperator(")")) {
    if (!params.empty()) expectOperator(",");
    if (atOperator(")")) break;
    Parameter p;
    p.name = expectName();
    if (skipOperator("=")) p.defaultValue = parseExpression();
    params.push_back(std::move(p));
  }
  advance();
}

StmtPtr Parser::parseMacro() {
  auto node = std::make_unique<MacroStmt>(here());
  advance();
  node->name = expectName();
  parseParameters(node->params);
  expect(TokenType::BlockEnd, "end of statement block");
  const int savedLoopDepth = loopDepth_;
  loopDepth_ = 0;
  node->body = subparse({"endmacro"});
  loopDepth_ = savedLoopDepth;
  finishBlock("endmacro");
  return node;
}

StmtPtr Parser::parseCallBlock() {
  auto node = std::make_unique<CallBlockStmt>(here());
  node->caller = std::make_unique<MacroStmt>(here());
  node->caller->name = "caller";
  advance();
  if (atOperator("(")) parseParameters(node->caller->params);
  node->call = parseExpression();
  if (node->call->kind != ExprKind::Call) fail("expected a call after 'call'", node->loc);
  expect(TokenType::BlockEnd, "end of statement block");
  const int savedLoopDepth = loopDepth_;
  loopDepth_ = 0;
  node->caller->body = subparse({"endcall"});
  loopDepth_ = savedLoopDepth;
  finishBlock("endcall");
  return node;
}

StmtPtr Parser::parseFilterBlock() {
  auto node = std::make_unique<FilterBlockStmt>(here());
  advance();
  node->filters.push_back(parseOneFilter(nullptr));
  while (skipOperator("|")) node->filters.push_back(parseOneFilter(nullptr));
  expect(TokenType::BlockEnd, "end of statement block");
  node->body = subparse({"endfilter"});
  finishBlock("endfilter");
  return node;
}

StmtPtr Parser::parseWith() {
  auto node = std::make_unique<WithStmt>(here());
  advance();
  while (current().type != TokenType::BlockEnd) {
    if (!node->assignments.empty()) expectOperator(",");
    AssignTarget target = parseAssignTarget(false, {});
    expectOperator("=");
    node->assignments.emplace_back(std::move(target), parseExpression());
  }
  advance();
  node->body = subparse({"endwith"});
  finishBlock("endwith");
  return node;
}

StmtPtr Parser::parseScopedBlock(std::string_view endTag) {
  auto node = std::make_unique<ScopeStmt>(here());
  advance();
  expect(TokenType::BlockEnd, "end of statement block");
  node->body = subparse({endTag});
  finishBlock(endTag);
  return node;
}

}  // namespace ember::chat
