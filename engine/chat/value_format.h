#pragma once
// Python's str() and repr() of values, which is what `{{ x }}` prints in Jinja2: 1.0 stays
// "1.0", True prints "True", a list prints "['a', 1]" and a dict "{'k': None}".
#include <string>
#include <string_view>

#include "chat/value.h"

namespace ember::chat {

std::string toPyStr(const Value& v);   // str(v); undefined prints as ""
std::string toPyRepr(const Value& v);  // repr(v)
std::string formatFloat(double d);     // repr(float): shortest round-trip, Python's layout
std::string reprString(std::string_view utf8);  // repr(str), quotes chosen like Python

// Marks a list, dict or object as being printed by repr() on this thread. A namespace can hold
// itself (`{% set ns.me = ns %}`); where the value being printed is already on the stack,
// recursive() says so and the caller prints Python's "[...]", "{...}" or "<Namespace {...}>".
// Namespaces can also chain without bound, so printing deeper than the values' nesting limit
// is a Limit error.
class ReprGuard {
 public:
  explicit ReprGuard(const void* identity);
  ~ReprGuard();
  ReprGuard(const ReprGuard&) = delete;
  ReprGuard& operator=(const ReprGuard&) = delete;
  bool recursive() const { return recursive_; }

 private:
  bool recursive_ = false;
};

}  // namespace ember::chat
