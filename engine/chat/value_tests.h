#pragma once
// Jinja2's tests (`x is defined`, `x is string`, `x is divisibleby 3`, ...), with Python's
// type checks: a dict is a sequence, an undefined value is iterable, True is a number.
#include <string_view>

#include "chat/value.h"

namespace ember::chat {

bool isKnownTest(std::string_view name);
bool callTest(Interpreter& interp, std::string_view name, const Value& input, CallArgs& args);

}  // namespace ember::chat
