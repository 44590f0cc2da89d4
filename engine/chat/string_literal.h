#pragma once
// Jinja2 string literals: the text between the quotes is decoded with Python's
// "unicode-escape" codec (\n, \t, \\, \', \", \xhh, \uhhhh, \Uhhhhhhhh, octal, line
// continuation); an unknown escape such as \d keeps its backslash.
#include <optional>
#include <string>
#include <string_view>

namespace ember::chat {

// Returns the decoded UTF-8 text, or nullopt with `error` set for a malformed escape.
std::optional<std::string> decodeStringLiteral(std::string_view body, std::string& error);

}  // namespace ember::chat
