// printf-style formatting: 'text %s %05.2f' % values and the `format` filter.
#include <cstdio>

#include "chat/interpreter.h"
#include "chat/string_format.h"
#include "chat/template_error.h"
#include "chat/unicode_text.h"
#include "chat/value_format.h"

namespace ember::chat {
namespace {

struct Conversion {
  std::string flags;
  int width = -1;
  int precision = -1;
  char type = 0;
};

std::string padText(const std::string& s, const Conversion& c) {
  const size_t length = text::codePointCount(s);
  if (c.width < 0 || length >= static_cast<size_t>(c.width)) return s;
  const std::string fill(static_cast<size_t>(c.width) - length, ' ');
  return c.flags.find('-') != std::string::npos ? s + fill : fill + s;
}

std::string numeric(const Value& v, const Conversion& c) {
  std::string fmt = "%" + c.flags;
  if (c.width >= 0) fmt += std::to_string(c.width);
  if (c.precision >= 0) fmt += "." + std::to_string(c.precision);
  char buf[512];
  const char t = c.type;
  if (t == 'd' || t == 'i' || t == 'u' || t == 'x' || t == 'X' || t == 'o' || t == 'c') {
    int64_t n;
    if (t == 'c' && v.isString() && text::codePointCount(v.asString()) == 1) return padText(v.asString(), c);
    if (v.isIntegral()) {
      n = v.asInt();
    } else if (v.isFloat() && (t == 'd' || t == 'i' || t == 'u')) {
      n = static_cast<int64_t>(v.asFloat());
    } else {
      throwRuntime(std::string("%") + t + " format: " + (t == 'x' || t == 'X' || t == 'o' ? "an integer" : "a real number") +
                   " is required, not " + v.typeName());
    }
    if (t == 'c') {
      std::string ch;
      text::appendUtf8(ch, static_cast<char32_t>(n));
      return padText(ch, c);
    }
    fmt += std::string("ll") + (t == 'i' || t == 'u' ? 'd' : t);
    std::snprintf(buf, sizeof buf, fmt.c_str(), static_cast<long long>(n));
    return buf;
  }
  if (!v.isNumber()) throwRuntime("must be real number, not " + v.typeName());
  fmt += t;
  std::snprintf(buf, sizeof buf, fmt.c_str(), v.asFloat());
  return buf;
}

}  // namespace

std::string pyPercentFormat(Interpreter& interp, std::string_view format, const Value& values) {
  const bool mapping = values.isDict();
  std::vector<Value> args;
  if (values.isTuple()) args = values.items();
  else if (!mapping) args.push_back(values);
  size_t next = 0;
  std::string out;
  for (size_t i = 0; i < format.size(); ++i) {
    if (format[i] != '%') {
      out += format[i];
      continue;
    }
    if (++i >= format.size()) throwRuntime("incomplete format");
    const Value* keyed = nullptr;
    if (format[i] == '(') {
      const size_t close = format.find(')', i);
      if (close == std::string_view::npos) throwRuntime("incomplete format key");
      if (!mapping) throwRuntime("format requires a mapping");
      const std::string key(format.substr(i + 1, close - i - 1));
      keyed = values.asDict().find(key);
      if (!keyed) throwRuntime("'" + key + "'");
      i = close + 1;
    }
    Conversion c;
    while (i < format.size() && std::string_view("-+ #0").find(format[i]) != std::string_view::npos) c.flags += format[i++];
    if (i < format.size() && format[i] == '*') throwUnsupported("'*' widths in % formatting are not supported");
    auto number = [&] {
      int n = 0;
      while (i < format.size() && format[i] >= '0' && format[i] <= '9') n = std::min(n * 10 + (format[i++] - '0'), 100000);
      return n;
    };
    if (i < format.size() && format[i] >= '0' && format[i] <= '9') c.width = number();
    if (i < format.size() && format[i] == '.') {
      ++i;
      c.precision = std::min(number(), 300);
    }
    while (i < format.size() && (format[i] == 'h' || format[i] == 'l' || format[i] == 'L')) ++i;
    if (i >= format.size()) throwRuntime("incomplete format");
    c.type = format[i];
    if (c.type == '%') {
      out += '%';
      continue;
    }
    const Value* arg = keyed;
    if (!arg) {
      if (mapping) throwRuntime("format requires a mapping");
      if (next >= args.size()) throwRuntime("not enough arguments for format string");
      arg = &args[next++];
    }
    switch (c.type) {
      case 's': case 'r': {
        std::string s = c.type == 's' ? toPyStr(*arg) : toPyRepr(*arg);
        if (c.precision >= 0) s = text::encode(text::decode(s).substr(0, static_cast<size_t>(c.precision)));
        out += padText(s, c);
        break;
      }
      case 'd': case 'i': case 'u': case 'x': case 'X': case 'o': case 'c':
      case 'e': case 'E': case 'f': case 'F': case 'g': case 'G':
        out += numeric(*arg, c);
        break;
      default:
        throwRuntime(std::string("unsupported format character '") + c.type + "'");
    }
    interp.checkStringSize(out.size());
  }
  if (!mapping && next < args.size()) throwRuntime("not all arguments converted during string formatting");
  return out;
}

}  // namespace ember::chat
