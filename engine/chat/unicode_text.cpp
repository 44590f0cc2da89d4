#include "chat/unicode_text.h"

#include <locale.h>
#include <wctype.h>

#include "chat/template_error.h"

namespace ember::chat::text {
namespace {

// glibc's C.UTF-8 locale carries the Unicode case and class tables. A private locale object
// (never the process locale) keeps this thread-safe and free of global state.
locale_t unicodeLocale() {
  static const locale_t locale = newlocale(LC_CTYPE_MASK, "C.UTF-8", static_cast<locale_t>(0));
  return locale;
}

char32_t simpleUpper(char32_t c) {
  if (c < 0x80) return (c >= 'a' && c <= 'z') ? c - 32 : c;
  locale_t l = unicodeLocale();
  return l ? static_cast<char32_t>(towupper_l(static_cast<wint_t>(c), l)) : c;
}

char32_t simpleLower(char32_t c) {
  if (c < 0x80) return (c >= 'A' && c <= 'Z') ? c + 32 : c;
  locale_t l = unicodeLocale();
  return l ? static_cast<char32_t>(towlower_l(static_cast<wint_t>(c), l)) : c;
}

// Title case differs from upper case only for the Latin digraph letters.
char32_t simpleTitle(char32_t c) {
  if (c >= 0x1C4 && c <= 0x1C6) return 0x1C5;
  if (c >= 0x1C7 && c <= 0x1C9) return 0x1C8;
  if (c >= 0x1CA && c <= 0x1CC) return 0x1CB;
  if (c >= 0x1F1 && c <= 0x1F3) return 0x1F2;
  return simpleUpper(c);
}

// Full upper-case mappings that expand to several code points (Unicode SpecialCasing), for
// the letters a chat text is likely to contain.
void appendUpper(std::u32string& out, char32_t c) {
  if (c == 0xDF) {
    out += U"SS";
  } else if (c == 0xFB00) {
    out += U"FF";
  } else if (c == 0xFB01) {
    out += U"FI";
  } else if (c == 0xFB02) {
    out += U"FL";
  } else {
    out += simpleUpper(c);
  }
}

void appendTitle(std::u32string& out, char32_t c) {
  if (c == 0xDF) {
    out += U"Ss";
  } else {
    out += simpleTitle(c);
  }
}

void appendLower(std::u32string& out, char32_t c) {
  if (c == 0x130) {
    out += U"i\u0307";
  } else {
    out += simpleLower(c);
  }
}

}  // namespace

std::u32string decode(std::string_view s) {
  std::u32string out;
  out.reserve(s.size());
  size_t i = 0;
  while (i < s.size()) {
    const auto b0 = static_cast<unsigned char>(s[i]);
    int extra = 0;
    char32_t cp = 0;
    if (b0 < 0x80) {
      cp = b0;
    } else if ((b0 & 0xE0) == 0xC0) {
      cp = b0 & 0x1F, extra = 1;
    } else if ((b0 & 0xF0) == 0xE0) {
      cp = b0 & 0x0F, extra = 2;
    } else if ((b0 & 0xF8) == 0xF0) {
      cp = b0 & 0x07, extra = 3;
    } else {
      throwRuntime("invalid UTF-8 in string at byte " + std::to_string(i));
    }
    if (i + static_cast<size_t>(extra) >= s.size() && extra > 0)
      throwRuntime("truncated UTF-8 sequence in string at byte " + std::to_string(i));
    for (int k = 1; k <= extra; ++k) {
      const auto b = static_cast<unsigned char>(s[i + k]);
      if ((b & 0xC0) != 0x80) throwRuntime("invalid UTF-8 in string at byte " + std::to_string(i));
      cp = (cp << 6) | (b & 0x3F);
    }
    static const char32_t kMin[] = {0, 0x80, 0x800, 0x10000};
    if (cp < kMin[extra] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
      throwRuntime("invalid UTF-8 in string at byte " + std::to_string(i));
    out.push_back(cp);
    i += 1 + extra;
  }
  return out;
}

void appendUtf8(std::string& out, char32_t c) {
  if (c < 0x80) {
    out.push_back(static_cast<char>(c));
  } else if (c < 0x800) {
    out.push_back(static_cast<char>(0xC0 | (c >> 6)));
    out.push_back(static_cast<char>(0x80 | (c & 0x3F)));
  } else if (c < 0x10000) {
    out.push_back(static_cast<char>(0xE0 | (c >> 12)));
    out.push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (c & 0x3F)));
  } else {
    out.push_back(static_cast<char>(0xF0 | (c >> 18)));
    out.push_back(static_cast<char>(0x80 | ((c >> 12) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (c & 0x3F)));
  }
}

std::string encode(std::u32string_view cps) {
  std::string out;
  out.reserve(cps.size());
  for (char32_t c : cps) appendUtf8(out, c);
  return out;
}

bool isValidUtf8(std::string_view s) {
  try {
    decode(s);
    return true;
  } catch (const TemplateError&) {
    return false;
  }
}

size_t codePointCount(std::string_view s) {
  size_t n = 0;
  for (char c : s)
    if ((static_cast<unsigned char>(c) & 0xC0) != 0x80) ++n;
  return n;
}

bool isSpace(char32_t c) {
  if (c == ' ' || (c >= 0x09 && c <= 0x0D) || (c >= 0x1C && c <= 0x1F)) return true;
  if (c < 0x85) return false;
  return c == 0x85 || c == 0xA0 || c == 0x1680 || (c >= 0x2000 && c <= 0x200A) || c == 0x2028 ||
         c == 0x2029 || c == 0x202F || c == 0x205F || c == 0x3000;
}

bool isPrintable(char32_t c) {
  if (c == ' ') return true;
  if (c < 0x20 || (c >= 0x7F && c <= 0xA0)) return false;
  if (c < 0x7F) return true;
  if (isSpace(c)) return false;  // Zs, Zl, Zp other than the ASCII space
  // Format characters (Cf) and private use (Co), which glibc counts as printable.
  if (c == 0xAD || (c >= 0x600 && c <= 0x605) || c == 0x61C || c == 0x6DD || c == 0x70F ||
      c == 0x8E2 || c == 0x180E || (c >= 0x200B && c <= 0x200F) || (c >= 0x202A && c <= 0x202E) ||
      (c >= 0x2060 && c <= 0x206F) || c == 0xFEFF || (c >= 0xFFF9 && c <= 0xFFFB) ||
      (c >= 0xE000 && c <= 0xF8FF) || c >= 0xF0000 || (c >= 0xE0000 && c <= 0xE007F))
    return false;
  locale_t l = unicodeLocale();
  return l ? iswprint_l(static_cast<wint_t>(c), l) != 0 : true;
}

bool isUpperCase(char32_t c) { return simpleLower(c) != c; }
bool isLowerCase(char32_t c) { return simpleUpper(c) != c || c == 0xDF; }
bool isCased(char32_t c) { return isUpperCase(c) || isLowerCase(c) || simpleTitle(c) != c; }

bool isAlpha(char32_t c) {
  if (c < 0x80) return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
  locale_t l = unicodeLocale();
  return l ? iswalpha_l(static_cast<wint_t>(c), l) != 0 : false;
}

bool isDigit(char32_t c) { return c >= '0' && c <= '9'; }

std::string upper(std::string_view s) {
  std::u32string out;
  for (char32_t c : decode(s)) appendUpper(out, c);
  return encode(out);
}

std::string lower(std::string_view s) {
  std::u32string out;
  for (char32_t c : decode(s)) appendLower(out, c);
  return encode(out);
}

std::string title(std::string_view s) {
  std::u32string out;
  bool previousCased = false;
  for (char32_t c : decode(s)) {
    if (previousCased) {
      appendLower(out, c);
    } else {
      appendTitle(out, c);
    }
    previousCased = isCased(c);
  }
  return encode(out);
}

std::string capitalize(std::string_view s) {
  std::u32string out;
  bool first = true;
  for (char32_t c : decode(s)) {
    if (first) {
      appendTitle(out, c);
    } else {
      appendLower(out, c);
    }
    first = false;
  }
  return encode(out);
}

std::string swapcase(std::string_view s) {
  std::u32string out;
  for (char32_t c : decode(s)) {
    if (isUpperCase(c)) {
      appendLower(out, c);
    } else if (isLowerCase(c)) {
      appendUpper(out, c);
    } else {
      out += c;
    }
  }
  return encode(out);
}

}  // namespace ember::chat::text
