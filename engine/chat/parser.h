#pragma once
// Builds the AST from tokens, following Jinja2's grammar and operator precedence (filters and
// tests bind tighter than arithmetic; `not x is y` is `not (x is y)`). Unknown filters, tests
// and tags are rejected here, with their position, rather than at render time.
#include <initializer_list>
#include <string_view>
#include <vector>

#include "chat/ast.h"
#include "chat/lexer.h"

namespace ember::chat {

// Throws TemplateError (Syntax or Unsupported) with line and column.
TemplateAst parseTemplate(std::string_view source);

class Parser {
 public:
  explicit Parser(std::vector<Token> tokens) : tokens_(std::move(tokens)) {}
  TemplateAst parseAll();

 private:
  // Statements (parser.cpp).
  Body subparse(std::initializer_list<std::string_view> endTags);
  StmtPtr parseStatement();
  StmtPtr parseIf();
  StmtPtr parseFor();
  StmtPtr parseSet();
  StmtPtr parseMacro();
  StmtPtr parseCallBlock();
  StmtPtr parseFilterBlock();
  StmtPtr parseWith();
  StmtPtr parseScopedBlock(std::string_view endTag);
  AssignTarget parseAssignTarget(bool withNamespace, std::initializer_list<std::string_view> end);
  void parseParameters(std::vector<Parameter>& params);
  void finishBlock(std::string_view endTag);  // at `endTag`: consume it and the `%}`

  // Expressions (parser_expr.cpp).
  ExprPtr parseTuple(bool withCondition, std::initializer_list<std::string_view> extraEnd = {},
                     bool explicitParentheses = false);
  ExprPtr parseExpression(bool withCondition = true);
  ExprPtr parseCondition();
  ExprPtr parseOr();
  ExprPtr parseAnd();
  ExprPtr parseNot();
  ExprPtr parseCompare();
  ExprPtr parseAdditive();
  ExprPtr parseConcat();
  ExprPtr parseMultiplicative();
  ExprPtr parsePower();
  ExprPtr parseUnary(bool withFilter);
  ExprPtr parsePrimary();
  ExprPtr parseList();
  ExprPtr parseDict();
  ExprPtr parsePostfix(ExprPtr node);
  ExprPtr parseFilterOrTest(ExprPtr node);
  ExprPtr parseSubscript(ExprPtr node);
  ExprPtr parseSubscribed();
  ExprPtr parseCall(ExprPtr callee);
  void parseCallArguments(std::vector<Argument>& args);
  std::unique_ptr<FilterExpr> parseOneFilter(ExprPtr operand);
  ExprPtr parseFilterChain(ExprPtr node);
  ExprPtr parseTest(ExprPtr node);

  // Tokens.
  const Token& current() const { return tokens_[pos_]; }
  const Token& look(size_t ahead = 1) const;
  const Token& advance();
  bool atOperator(std::string_view op) const;
  bool atName(std::string_view name) const;
  bool skipOperator(std::string_view op);
  bool skipName(std::string_view name);
  void expectOperator(std::string_view op);
  std::string expectName();
  void expect(TokenType type, std::string_view what);
  SourceLocation here() const { return {current().line, current().column}; }
  [[noreturn]] void fail(const std::string& message) const;
  [[noreturn]] void fail(const std::string& message, SourceLocation at) const;
  std::string describeCurrent() const;

  // Bounds the parser's recursion (and so the evaluator's) on hostile nesting.
  class DepthGuard {
   public:
    explicit DepthGuard(Parser& p);
    ~DepthGuard() { --parser_.depth_; }
   private:
    Parser& parser_;
  };

  std::vector<Token> tokens_;
  size_t pos_ = 0;
  int depth_ = 0;
  int loopDepth_ = 0;  // for {% break %} / {% continue %}
};

}  // namespace ember::chat
