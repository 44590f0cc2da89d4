#include "chat/lexer.h"

#include <algorithm>

#include "chat/number_literal.h"
#include "chat/string_literal.h"
#include "chat/template_error.h"
#include "chat/unicode_text.h"

namespace ember::chat {
namespace {

// Jinja2 (keep_trailing_newline=False) turns \r\n and \r into \n and drops one final newline.
std::string normalizeNewlines(std::string_view source) {
  std::string out;
  out.reserve(source.size());
  for (size_t i = 0; i < source.size(); ++i) {
    if (source[i] == '\r') {
      out += '\n';
      if (i + 1 < source.size() && source[i + 1] == '\n') ++i;
    } else {
      out += source[i];
    }
  }
  if (!out.empty() && out.back() == '\n') out.pop_back();
  return out;
}

bool isAsciiSpace(char c) { return c == ' ' || (c >= '\t' && c <= '\r'); }
bool isDigitChar(char c) { return c >= '0' && c <= '9'; }
bool isNameStart(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool isNameChar(char c) { return isNameStart(c) || isDigitChar(c); }

// Python's str.rstrip() on UTF-8 text.
std::string rstripPython(const std::string& s) {
  std::u32string cps = text::decode(s);
  while (!cps.empty() && text::isSpace(cps.back())) cps.pop_back();
  return text::encode(cps);
}

// Python's `\s+` fullmatch on the text after the last newline.
bool allWhitespace(std::string_view s) {
  if (s.empty()) return false;
  for (char32_t c : text::decode(s))
    if (!text::isSpace(c)) return false;
  return true;
}

class Lexer {
 public:
  explicit Lexer(std::string source) : src_(std::move(source)) {
    lineStarts_.push_back(0);
    for (size_t i = 0; i < src_.size(); ++i)
      if (src_[i] == '\n') lineStarts_.push_back(i + 1);
  }

  std::vector<Token> run() {
    if (!text::isValidUtf8(src_)) fail(0, "template is not valid UTF-8");
    while (pos_ < src_.size()) lexDataAndTag();
    Token end;
    end.type = TokenType::End;
    place(end, src_.size());
    tokens_.push_back(end);
    return std::move(tokens_);
  }

 private:
  enum class TagKind { Variable, Block, Comment, Raw };

  [[noreturn]] void fail(size_t offset, const std::string& message) const {
    int line, column;
    locate(offset, line, column);
    throw TemplateError(TemplateErrorKind::Syntax, message, line, column);
  }

  void locate(size_t offset, int& line, int& column) const {
    const auto it = std::upper_bound(lineStarts_.begin(), lineStarts_.end(), offset) - 1;
    line = static_cast<int>(it - lineStarts_.begin()) + 1;
    column = static_cast<int>(
                 text::codePointCount(std::string_view(src_).substr(*it, offset - *it))) + 1;
  }

  void place(Token& t, size_t offset) const { locate(offset, t.line, t.column); }

  void emit(TokenType type, size_t offset, std::string textValue = {}) {
    Token t;
    t.type = type;
    t.text = std::move(textValue);
    place(t, offset);
    tokens_.push_back(std::move(t));
  }

  bool startsWith(size_t at, std::string_view s) const {
    return src_.compare(at, s.size(), s) == 0;
  }

  size_t skipWhitespace(size_t at) const {
    while (at < src_.size() && isAsciiSpace(src_[at])) ++at;
    return at;
  }

  // `{%(-|+|)\s*raw\s*(-%}\s*|%})` at `at`; returns the end of the match or npos.
  size_t matchRawBegin(size_t at) const {
    size_t p = at + 2;
    if (p < src_.size() && (src_[p] == '-' || src_[p] == '+')) ++p;
    p = skipWhitespace(p);
    if (!startsWith(p, "raw")) return std::string::npos;
    p = skipWhitespace(p + 3);
    if (startsWith(p, "-%}")) return skipWhitespace(p + 3);
    if (startsWith(p, "%}")) return p + 2;
    return std::string::npos;
  }

  void lexDataAndTag() {
    size_t tag = pos_;
    TagKind kind = TagKind::Variable;
    for (;; ++tag) {
      tag = src_.find('{', tag);
      if (tag == std::string::npos || tag + 1 >= src_.size()) {
        emitData(src_.substr(pos_), pos_);
        pos_ = src_.size();
        return;
      }
      const char next = src_[tag + 1];
      if (next == '{') kind = TagKind::Variable;
      else if (next == '%') kind = matchRawBegin(tag) != std::string::npos ? TagKind::Raw
                                                                             : TagKind::Block;
      else if (next == '#') kind = TagKind::Comment;
      else continue;
      break;
    }
    const char sign = tag + 2 < src_.size() ? src_[tag + 2] : '\0';
    emitData(controlledText(src_.substr(pos_, tag - pos_), kind, sign), pos_);
    switch (kind) {
      case TagKind::Raw: lexRaw(tag); break;
      case TagKind::Comment: lexComment(tag); break;
      case TagKind::Variable:
      case TagKind::Block: lexTag(tag, kind, sign); break;
    }
  }

  // Applies `{%-` (strip all whitespace before) and lstrip_blocks (strip the indentation of a
  // block or comment tag that starts its line).
  std::string controlledText(std::string textBefore, TagKind kind, char sign) const {
    if (sign == '-') return rstripPython(textBefore);
    if (sign == '+' || kind == TagKind::Variable) return textBefore;
    const size_t lineStart = textBefore.rfind('\n') + 1;  // npos + 1 == 0
    if ((lineStart > 0 || lineStarting_) &&
        allWhitespace(std::string_view(textBefore).substr(lineStart)))
      textBefore.resize(lineStart);
    return textBefore;
  }

  void emitData(std::string data, size_t offset) {
    if (!data.empty()) emit(TokenType::Data, offset, std::move(data));
  }

  void lexComment(size_t tag) {
    const char sign = tag + 2 < src_.size() ? src_[tag + 2] : '\0';
    const size_t bodyStart = tag + 2 + ((sign == '-' || sign == '+') ? 1 : 0);
    const size_t close = src_.find("#}", bodyStart);
    if (close == std::string::npos) fail(tag, "missing end of comment tag");
    size_t end = close + 2;
    const char before = close > bodyStart ? src_[close - 1] : '\0';
    if (before == '-') {
      end = skipPythonWhitespace(end);
    } else if (before != '+' && end < src_.size() && src_[end] == '\n') {
      ++end;  // trim_blocks
    }
    lineStarting_ = src_[end - 1] == '\n';
    pos_ = end;
  }

  // {% raw %}...{% endraw %}: the body is data, untouched except for the end tag's controls.
  void lexRaw(size_t tag) {
    const size_t bodyStart = matchRawBegin(tag);
    size_t search = bodyStart;
    for (;;) {
      const size_t open = src_.find("{%", search);
      if (open == std::string::npos) fail(tag, "missing end of raw directive");
      size_t p = open + 2;
      const char sign = p < src_.size() ? src_[p] : '\0';
      if (sign == '-' || sign == '+') ++p;
      p = skipWhitespace(p);
      if (!startsWith(p, "endraw")) {
        search = open + 2;
        continue;
      }
      p = skipWhitespace(p + 6);
      size_t end;
      if (startsWith(p, "+%}")) {
        end = p + 3;
      } else if (startsWith(p, "-%}")) {
        end = skipPythonWhitespace(p + 3);
      } else if (startsWith(p, "%}")) {
        end = p + 2;
        if (end < src_.size() && src_[end] == '\n') ++end;
      } else {
        search = open + 2;
        continue;
      }
      lineStarting_ = src_[bodyStart - 1] == '\n';
      emitData(controlledText(src_.substr(bodyStart, open - bodyStart), TagKind::Block, sign),
               bodyStart);
      lineStarting_ = src_[end - 1] == '\n';
      pos_ = end;
      return;
    }
  }

  size_t skipPythonWhitespace(size_t at) const {
    while (at < src_.size()) {
      const auto c = static_cast<unsigned char>(src_[at]);
      if (c < 0x80) {
        if (!isAsciiSpace(static_cast<char>(c)) && !(c >= 0x1C && c <= 0x1F)) break;
        ++at;
        continue;
      }
      size_t len = (c & 0xE0) == 0xC0 ? 2 : (c & 0xF0) == 0xE0 ? 3 : 4;
      const std::u32string cp = text::decode(std::string_view(src_).substr(at, len));
      if (!text::isSpace(cp[0])) break;
      at += len;
    }
    return at;
  }

  // Returns the end offset of an end delimiter at `at` (with its whitespace control), or npos.
  size_t matchTagEnd(size_t at, TagKind kind) const {
    if (kind == TagKind::Block) {
      if (startsWith(at, "+%}")) return at + 3;
      if (startsWith(at, "-%}")) return skipPythonWhitespace(at + 3);
      if (startsWith(at, "%}")) {
        const size_t end = at + 2;
        return (end < src_.size() && src_[end] == '\n') ? end + 1 : end;  // trim_blocks
      }
      return std::string::npos;
    }
    if (startsWith(at, "-}}")) return skipPythonWhitespace(at + 3);
    if (startsWith(at, "}}")) return at + 2;
    return std::string::npos;
  }

  void lexTag(size_t tag, TagKind kind, char sign) {
    emit(kind == TagKind::Block ? TokenType::BlockBegin : TokenType::VariableBegin, tag);
    size_t p = tag + 2 + ((sign == '-' || sign == '+') ? 1 : 0);
    std::vector<char> balance;
    for (;;) {
      if (p >= src_.size()) fail(tag, "unexpected end of template: the tag opened here is not closed");
      if (balance.empty()) {
        const size_t end = matchTagEnd(p, kind);
        if (end != std::string::npos) {
          emit(kind == TagKind::Block ? TokenType::BlockEnd : TokenType::VariableEnd, p);
          lineStarting_ = src_[end - 1] == '\n';
          pos_ = end;
          return;
        }
      }
      if (isAsciiSpace(src_[p])) {
        p = skipPythonWhitespace(p);
      } else if (size_t q = matchNumber(p); q != p) {
        p = q;
      } else if (isNameStart(src_[p])) {
        size_t q2 = p;
        while (q2 < src_.size() && isNameChar(src_[q2])) ++q2;
        emit(TokenType::Name, p, src_.substr(p, q2 - p));
        p = q2;
      } else if (src_[p] == '\'' || src_[p] == '"') {
        p = lexString(p);
      } else {
        p = lexOperator(p, balance);
      }
    }
  }

  size_t lexOperator(size_t p, std::vector<char>& balance) {
    static const char* const kOperators[] = {"//", "**", "==", "!=", ">=", "<=", "+", "-", "/",
                                             "*",  "%",  "~",  "[",  "]",  "(",  ")", "{", "}",
                                             ">",  "<",  "=",  ".",  ":",  "|",  ",", ";"};
    for (const char* op : kOperators) {
      const std::string_view s(op);
      if (!startsWith(p, s)) continue;
      if (s == "(" || s == "[" || s == "{") {
        balance.push_back(s == "(" ? ')' : s == "[" ? ']' : '}');
      } else if (s == ")" || s == "]" || s == "}") {
        if (balance.empty()) fail(p, "unexpected '" + std::string(s) + "'");
        if (balance.back() != s[0])
          fail(p, "unexpected '" + std::string(s) + "', expected '" + balance.back() + "'");
        balance.pop_back();
      }
      emit(TokenType::Operator, p, std::string(s));
      return p + s.size();
    }
    const auto lead = static_cast<unsigned char>(src_[p]);
    const size_t len = lead < 0x80 ? 1 : (lead & 0xE0) == 0xC0 ? 2 : (lead & 0xF0) == 0xE0 ? 3 : 4;
    fail(p, "unexpected character '" + src_.substr(p, len) + "'");
  }

  size_t matchNumber(size_t p);
  size_t lexString(size_t p);

  std::string src_;
  size_t pos_ = 0;
  bool lineStarting_ = true;
  std::vector<size_t> lineStarts_;
  std::vector<Token> tokens_;
};

size_t Lexer::matchNumber(size_t p) {
  const NumberLiteral number = scanNumberLiteral(src_, p);
  if (number.end == p) return p;
  if (!number.error.empty()) fail(p, number.error);
  Token t;
  t.type = number.isFloat ? TokenType::Float : TokenType::Integer;
  t.intValue = number.intValue;
  t.floatValue = number.floatValue;
  place(t, p);
  tokens_.push_back(std::move(t));
  return number.end;
}

// A quoted literal; the body may span lines and uses backslash escapes.
size_t Lexer::lexString(size_t p) {
  const char quote = src_[p];
  size_t q = p + 1;
  while (q < src_.size() && src_[q] != quote) q += src_[q] == '\\' ? 2 : 1;
  if (q >= src_.size()) fail(p, "unterminated string literal");
  std::string error;
  auto value = decodeStringLiteral(std::string_view(src_).substr(p + 1, q - p - 1), error);
  if (!value) fail(p, error);
  emit(TokenType::String, p, std::move(*value));
  return q + 1;
}

}  // namespace

std::vector<Token> tokenize(std::string_view source) {
  return Lexer(normalizeNewlines(source)).run();
}

}  // namespace ember::chat
