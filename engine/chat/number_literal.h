#pragma once
// Jinja2 number literals: its float_re (1.5, 1e3, 1_000.5) and integer_re (42, 1_000, 0x1F,
// 0o17, 0b101).
#include <cstdint>
#include <string>
#include <string_view>

namespace ember::chat {

struct NumberLiteral {
  size_t end = 0;  // one past the literal; equal to the start when there is none
  bool isFloat = false;
  int64_t intValue = 0;
  double floatValue = 0;
  std::string error;  // set for an integer that does not fit in 64 bits
};

NumberLiteral scanNumberLiteral(std::string_view source, size_t start);

}  // namespace ember::chat
