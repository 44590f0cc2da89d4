#include "chat/string_literal.h"

#include "chat/unicode_text.h"

namespace ember::chat {
namespace {

int hexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

std::optional<std::string> decodeStringLiteral(std::string_view body, std::string& error) {
  std::string out;
  out.reserve(body.size());
  for (size_t i = 0; i < body.size(); ++i) {
    const char c = body[i];
    if (c != '\\') {
      out += c;
      continue;
    }
    if (i + 1 >= body.size()) {
      error = "\\ at end of string";
      return std::nullopt;
    }
    const char e = body[++i];
    switch (e) {
      case '\n': break;  // line continuation
      case '\\': out += '\\'; break;
      case '\'': out += '\''; break;
      case '"': out += '"'; break;
      case 'a': out += '\a'; break;
      case 'b': out += '\b'; break;
      case 'f': out += '\f'; break;
      case 'n': out += '\n'; break;
      case 'r': out += '\r'; break;
      case 't': out += '\t'; break;
      case 'v': out += '\v'; break;
      case 'x':
      case 'u':
      case 'U': {
        const size_t digits = e == 'x' ? 2 : e == 'u' ? 4 : 8;
        char32_t value = 0;
        for (size_t k = 0; k < digits; ++k) {
          const int h = i + 1 + k < body.size() ? hexValue(body[i + 1 + k]) : -1;
          if (h < 0) {
            error = std::string("truncated \\") + e + " escape";
            return std::nullopt;
          }
          value = value * 16 + static_cast<char32_t>(h);
        }
        if (value > 0x10FFFF || (value >= 0xD800 && value <= 0xDFFF)) {
          error = "illegal Unicode character";
          return std::nullopt;
        }
        i += digits;
        text::appendUtf8(out, value);
        break;
      }
      case 'N':
        error = "\\N{...} escapes are not supported";
        return std::nullopt;
      default:
        if (e >= '0' && e <= '7') {
          char32_t value = static_cast<char32_t>(e - '0');
          for (int k = 0; k < 2 && i + 1 < body.size() && body[i + 1] >= '0' && body[i + 1] <= '7';
               ++k)
            value = value * 8 + static_cast<char32_t>(body[++i] - '0');
          text::appendUtf8(out, value);
        } else {
          out += '\\';
          out += e;
        }
    }
  }
  return out;
}

}  // namespace ember::chat
