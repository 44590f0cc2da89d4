#pragma once
// Splits a template into tokens the way Jinja2's lexer does with HF's settings: trim_blocks
// (drop the newline after a block or comment tag), lstrip_blocks (drop the indentation before
// one), `-`/`+` whitespace control, newline normalisation and the dropped final newline.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace ember::chat {

enum class TokenType {
  Data,           // literal template text (already whitespace-controlled)
  VariableBegin,  // {{
  VariableEnd,    // }}
  BlockBegin,     // {%
  BlockEnd,       // %}
  Name,
  String,   // text holds the unescaped value
  Integer,  // intValue
  Float,    // floatValue
  Operator, // text holds the operator: + - * / // ** % ~ [ ] ( ) { } == != < <= > >= = . : | , ;
  End,
};

struct Token {
  TokenType type = TokenType::End;
  std::string text;
  int64_t intValue = 0;
  double floatValue = 0;
  int line = 1;
  int column = 1;
};

// Throws TemplateError (Syntax) with the position of the offending character.
std::vector<Token> tokenize(std::string_view source);

}  // namespace ember::chat
