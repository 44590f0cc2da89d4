#include "chat/number_literal.h"

#include <charconv>

namespace ember::chat {
namespace {

bool isDigit(char c) { return c >= '0' && c <= '9'; }

// (\d+_)*\d+
size_t matchDigits(std::string_view s, size_t p) {
  while (p < s.size() && isDigit(s[p])) {
    ++p;
    if (p + 1 < s.size() && s[p] == '_' && isDigit(s[p + 1])) ++p;
  }
  return p;
}

std::string withoutUnderscores(std::string_view s) {
  std::string out;
  for (char c : s)
    if (c != '_') out += c;
  return out;
}

}  // namespace

NumberLiteral scanNumberLiteral(std::string_view s, size_t p) {
  NumberLiteral n;
  n.end = p;
  if (p >= s.size() || !isDigit(s[p])) return n;
  const size_t intEnd = matchDigits(s, p);
  size_t q = intEnd;
  // Jinja's float_re has a (?<!\.) lookbehind: `x.0.1` is attribute access, not a float.
  if (p == 0 || s[p - 1] != '.') {
    if (q + 1 < s.size() && s[q] == '.' && isDigit(s[q + 1])) {
      q = matchDigits(s, q + 1);
      n.isFloat = true;
    }
    if (q < s.size() && (s[q] == 'e' || s[q] == 'E')) {
      size_t e = q + 1;
      if (e < s.size() && (s[e] == '+' || s[e] == '-')) ++e;
      if (e < s.size() && isDigit(s[e])) {
        q = matchDigits(s, e);
        n.isFloat = true;
      }
    }
  }
  if (n.isFloat) {
    const std::string digits = withoutUnderscores(s.substr(p, q - p));
    std::from_chars(digits.data(), digits.data() + digits.size(), n.floatValue);
    n.end = q;
    return n;
  }
  int base = 10;
  size_t start = p;
  q = intEnd;
  if (s[p] == '0' && p + 1 < s.size()) {
    const char x = static_cast<char>(s[p + 1] | 0x20);
    base = x == 'b' ? 2 : x == 'o' ? 8 : x == 'x' ? 16 : 10;
    if (base != 10) {
      start = q = p + 2;
      for (; q < s.size(); ++q) {
        const char c = static_cast<char>(s[q] | 0x20);
        const bool digit = (isDigit(c) && c - '0' < base) || (base == 16 && c >= 'a' && c <= 'f');
        if (!digit && !(s[q] == '_' && q + 1 < s.size())) break;
      }
    }
  }
  const std::string digits = withoutUnderscores(s.substr(start, q - start));
  const auto r = std::from_chars(digits.data(), digits.data() + digits.size(), n.intValue, base);
  if (r.ec != std::errc() || digits.empty()) n.error = "integer literal is too large or malformed";
  n.end = q;
  return n;
}

}  // namespace ember::chat
