#pragma once
// Code-point level text helpers with Python's str semantics: templates index, slice, measure,
// strip and case-map strings by code point, and non-ASCII text (Korean, accents, emoji) must
// come out exactly as Python would produce it. Strings are stored as UTF-8 everywhere else.
#include <string>
#include <string_view>

namespace ember::chat::text {

// Decodes UTF-8; throws TemplateError (Runtime) on malformed input.
std::u32string decode(std::string_view utf8);
std::string encode(std::u32string_view codePoints);
void appendUtf8(std::string& out, char32_t c);
bool isValidUtf8(std::string_view utf8);
size_t codePointCount(std::string_view utf8);

// Python's str.isspace() for one code point.
bool isSpace(char32_t c);
// Python's str.isprintable() for one code point (used by repr()).
bool isPrintable(char32_t c);
bool isCased(char32_t c);
bool isUpperCase(char32_t c);
bool isLowerCase(char32_t c);
bool isAlpha(char32_t c);
bool isDigit(char32_t c);

// Case conversion of whole strings (Python str.upper/lower/title/capitalize/swapcase).
std::string upper(std::string_view s);
std::string lower(std::string_view s);
std::string title(std::string_view s);
std::string capitalize(std::string_view s);
std::string swapcase(std::string_view s);

}  // namespace ember::chat::text
