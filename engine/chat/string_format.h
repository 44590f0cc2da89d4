#pragma once
// Python's two string-formatting mini-languages, as templates reach them: str.format (through
// Jinja2's sandboxed formatter, so field lookups obey the sandbox) and printf-style `%`
// formatting (the `%` operator on a string and the `format` filter).
#include <string>
#include <string_view>

#include "chat/value.h"

namespace ember::chat {

// '{} and {name:>8}'.format(...)
std::string pyStrFormat(Interpreter& interp, std::string_view format, const CallArgs& args);
// '%s: %5.2f' % values; values is a tuple (several arguments), a dict (%(name)s) or one value.
std::string pyPercentFormat(Interpreter& interp, std::string_view format, const Value& values);
// format(value, spec): the format-spec mini-language ([[fill]align][sign][0][width][,][.prec][type]).
std::string pyFormatValue(const Value& value, std::string_view spec);

}  // namespace ember::chat
