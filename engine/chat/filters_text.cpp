// Filters on single values: strings, numbers, JSON.
#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>

#include "chat/builtins.h"
#include "chat/filters.h"
#include "chat/interpreter.h"
#include "chat/json_value.h"
#include "chat/string_format.h"
#include "chat/template_error.h"
#include "chat/unicode_text.h"
#include "chat/value_format.h"

namespace ember::chat {
namespace {

using Args = std::vector<std::optional<Value>>;

std::string str(const Value& v) { return toPyStr(v); }  // Jinja's soft_str

Value trimFilter(Interpreter&, const Value& in, CallArgs& args) {
  Args a = bindArguments("trim", args, {"chars"});
  std::optional<std::string> chars;
  if (a[0] && !a[0]->isNone()) chars = str(*a[0]);
  const std::string text = str(in);
  std::string stripped = pyStrip(text, chars, StripSide::Both);
  const size_t at = stripped.empty() ? 0 : text.find(stripped);  // the first kept byte
  return in.isString() ? Value::substringOf(in, std::move(stripped), at) : Value(std::move(stripped));
}

Value upperFilter(Interpreter&, const Value& in, CallArgs& args) {
  bindArguments("upper", args, {});
  return Value(text::upper(str(in)));
}

Value lowerFilter(Interpreter&, const Value& in, CallArgs& args) {
  bindArguments("lower", args, {});
  return Value(text::lower(str(in)));
}

Value capitalizeFilter(Interpreter&, const Value& in, CallArgs& args) {
  bindArguments("capitalize", args, {});
  return Value(text::capitalize(str(in)));
}

// Jinja's title: split on runs of [-\s({[<] and capitalise each piece.
Value titleFilter(Interpreter&, const Value& in, CallArgs& args) {
  bindArguments("title", args, {});
  const std::u32string s = text::decode(str(in));
  auto isBoundary = [](char32_t c) {
    return c == '-' || c == '(' || c == '{' || c == '[' || c == '<' || text::isSpace(c);
  };
  std::string out;
  size_t i = 0;
  while (i < s.size()) {
    const bool boundary = isBoundary(s[i]);
    size_t j = i;
    while (j < s.size() && isBoundary(s[j]) == boundary) ++j;
    const std::string piece = text::encode(std::u32string_view(s).substr(i, j - i));
    const std::string head = text::encode(std::u32string_view(s).substr(i, 1));
    out += text::upper(head) + text::lower(piece.substr(head.size()));
    i = j;
  }
  return Value(std::move(out));
}

Value replaceFilter(Interpreter& interp, const Value& in, CallArgs& args) {
  Args a = bindArguments("replace", args, {"old", "new", "count"});
  if (!a[0] || !a[1]) throwRuntime("replace() missing required arguments 'old' and 'new'");
  CallArgs methodArgs;
  methodArgs.positional = {Value(str(*a[0])), Value(str(*a[1]))};
  if (a[2] && !a[2]->isNone()) methodArgs.positional.push_back(*a[2]);
  return interp.call(*stringMethod(Value(str(in)), "replace"), std::move(methodArgs));
}

Value stringFilter(Interpreter&, const Value& in, CallArgs& args) {
  bindArguments("string", args, {});
  return Value(str(in));
}

Value safeFilter(Interpreter&, const Value& in, CallArgs& args) {
  bindArguments("safe", args, {});
  return in;
}

Value escapeFilter(Interpreter&, const Value& in, CallArgs& args) {
  bindArguments("escape", args, {});
  std::string out;
  for (char c : str(in)) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&#34;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return Value(std::move(out));
}

Value defaultFilter(Interpreter&, const Value& in, CallArgs& args) {
  Args a = bindArguments("default", args, {"default_value", "boolean"});
  const bool boolean = a[1] && a[1]->truthy();
  if (in.isUndefined() || (boolean && !in.truthy())) return a[0] ? *a[0] : Value("");
  return in;
}

// Python's int(str, base): surrounding whitespace, a sign, `_` between digits.
std::optional<int64_t> parseInteger(std::string s, int base) {
  s = pyStrip(s, std::nullopt, StripSide::Both);
  bool negative = false;
  if (!s.empty() && (s[0] == '+' || s[0] == '-')) {
    negative = s[0] == '-';
    s.erase(0, 1);
  }
  if (base == 16 && s.size() > 2 && s[0] == '0' && (s[1] | 0x20) == 'x') s.erase(0, 2);
  if (base == 8 && s.size() > 2 && s[0] == '0' && (s[1] | 0x20) == 'o') s.erase(0, 2);
  if (base == 2 && s.size() > 2 && s[0] == '0' && (s[1] | 0x20) == 'b') s.erase(0, 2);
  std::string digits;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '_' && i > 0 && i + 1 < s.size() && s[i - 1] != '_') continue;
    digits += s[i];
  }
  int64_t value = 0;
  const auto r = std::from_chars(digits.data(), digits.data() + digits.size(), value, base);
  if (digits.empty() || r.ec != std::errc() || r.ptr != digits.data() + digits.size())
    return std::nullopt;
  return negative ? -value : value;
}

// Python's float(str): whitespace, a sign, inf/nan spellings, `_` between digits.
std::optional<double> parseFloat(const std::string& text) {
  std::string s = pyStrip(text, std::nullopt, StripSide::Both);
  bool negative = false;
  if (!s.empty() && (s[0] == '+' || s[0] == '-')) {
    negative = s[0] == '-';
    s.erase(0, 1);
  }
  std::string clean;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '_' && i > 0 && i + 1 < s.size() && std::isdigit(static_cast<unsigned char>(s[i - 1])) &&
        std::isdigit(static_cast<unsigned char>(s[i + 1])))
      continue;
    clean += s[i];
  }
  double value = 0;
  const auto r = std::from_chars(clean.data(), clean.data() + clean.size(), value);
  if (clean.empty() || r.ec != std::errc() || r.ptr != clean.data() + clean.size())
    return std::nullopt;
  return negative ? -value : value;
}

Value intFilter(Interpreter&, const Value& in, CallArgs& args) {
  Args a = bindArguments("int", args, {"default", "base"});
  const Value fallback = a[0] ? *a[0] : Value(0);
  const int base = a[1] && a[1]->isIntegral() ? static_cast<int>(a[1]->asInt()) : 10;
  if (in.isIntegral()) return Value(in.asInt());
  if (in.isFloat()) {
    const double d = in.asFloat();
    if (!std::isfinite(d)) throwRuntime("cannot convert float infinity or NaN to integer");
    if (std::fabs(d) >= 9.2e18) throwRuntime("integer result does not fit in 64 bits");
    return Value(static_cast<int64_t>(d));
  }
  if (in.isString()) {
    if (auto i = parseInteger(in.asString(), base)) return Value(*i);
    if (auto d = parseFloat(in.asString()); d && std::isfinite(*d) && std::fabs(*d) < 9.2e18)
      return Value(static_cast<int64_t>(*d));
  }
  return fallback;
}

Value floatFilter(Interpreter&, const Value& in, CallArgs& args) {
  Args a = bindArguments("float", args, {"default"});
  if (in.isNumber()) return Value(in.asFloat());
  if (in.isString())
    if (auto d = parseFloat(in.asString())) return Value(*d);
  return a[0] ? *a[0] : Value(0.0);
}

Value absFilter(Interpreter&, const Value& in, CallArgs& args) {
  bindArguments("abs", args, {});
  if (in.isIntegral()) {
    if (in.asInt() == INT64_MIN) throwRuntime("integer result does not fit in 64 bits");
    return Value(in.asInt() < 0 ? -in.asInt() : in.asInt());
  }
  if (in.isFloat()) return Value(std::fabs(in.asFloat()));
  if (in.isUndefined()) throwUndefined(in);
  throwRuntime("bad operand type for abs(): '" + in.typeName() + "'");
}

// Python's round(x, n): the exact decimal value rounded half to even, which glibc's printf
// also implements.
double roundHalfEven(double x, int64_t digits) {
  if (!std::isfinite(x) || digits > 300) return x;
  if (digits >= 0) {
    char buf[512];
    std::snprintf(buf, sizeof buf, "%.*f", static_cast<int>(digits), x);
    return std::strtod(buf, nullptr);
  }
  const double scale = std::pow(10.0, static_cast<double>(-digits));
  return std::nearbyint(x / scale) * scale;
}

Value roundFilter(Interpreter&, const Value& in, CallArgs& args) {
  Args a = bindArguments("round", args, {"precision", "method"});
  const int64_t precision = a[0] && a[0]->isIntegral() ? a[0]->asInt() : 0;
  const std::string method = a[1] ? str(*a[1]) : "common";
  if (!in.isNumber()) {
    if (in.isUndefined()) throwUndefined(in);
    throwRuntime("type " + in.typeName() + " doesn't define __round__ method");
  }
  if (method == "common") {
    if (in.isIntegral() && precision >= 0) return Value(in.asInt());
    return Value(roundHalfEven(in.asFloat(), precision));
  }
  if (method != "ceil" && method != "floor")
    throwRuntime("method must be common, ceil or floor");
  const double scale = std::pow(10.0, static_cast<double>(precision));
  const double scaled = in.asFloat() * scale;
  return Value((method == "ceil" ? std::ceil(scaled) : std::floor(scaled)) / scale);
}

// HF's tojson: json.dumps(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False).
Value tojsonFilter(Interpreter& interp, const Value& in, CallArgs& args) {
  Args a = bindArguments("tojson", args, {"ensure_ascii", "indent", "separators", "sort_keys"});
  JsonDumpOptions options;
  options.ensureAscii = a[0] && a[0]->truthy();
  if (a[1] && !a[1]->isNone()) {
    if (a[1]->isString()) options.indent = a[1]->asString();
    else if (a[1]->isIntegral()) options.indent = std::string(static_cast<size_t>(std::max<int64_t>(0, std::min<int64_t>(a[1]->asInt(), 256))), ' ');
    else throwRuntime("indent must be an integer or a string");
  }
  if (a[2] && !a[2]->isNone()) {
    if (!a[2]->isList() || a[2]->items().size() != 2 || !a[2]->items()[0].isString() ||
        !a[2]->items()[1].isString())
      throwRuntime("separators must be a pair of strings");
    options.itemSeparator = a[2]->items()[0].asString();
    options.keySeparator = a[2]->items()[1].asString();
  }
  options.sortKeys = a[3] && a[3]->truthy();
  std::string json = pyJsonDumps(in, options);
  interp.checkStringSize(json.size());
  return Value(std::move(json));
}

Value indentFilter(Interpreter& interp, const Value& in, CallArgs& args) {
  Args a = bindArguments("indent", args, {"width", "first", "blank"});
  std::string indention = "    ";
  if (a[0]) {
    if (a[0]->isString()) indention = a[0]->asString();
    else if (a[0]->isIntegral()) indention = std::string(static_cast<size_t>(std::clamp<int64_t>(a[0]->asInt(), 0, 1024)), ' ');
    else throwRuntime("indent width must be an integer or a string");
  }
  if (!in.isString()) throwRuntime("unsupported operand type(s) for +=: '" + in.typeName() + "' and 'str'");
  const bool first = a[1] && a[1]->truthy();
  const bool blank = a[2] && a[2]->truthy();
  const std::vector<std::string> lines = pySplitLines(in.asString() + "\n", false);
  std::string out;
  for (size_t i = 0; i < lines.size(); ++i) {
    if (i) out += '\n';
    if (i > 0 && (blank || !lines[i].empty())) out += indention;
    out += lines[i];
    interp.checkStringSize(out.size());
  }
  if (first) out = indention + out;
  return Value(std::move(out));
}

Value centerFilter(Interpreter& interp, const Value& in, CallArgs& args) {
  Args a = bindArguments("center", args, {"width"});
  CallArgs methodArgs;
  methodArgs.positional.push_back(a[0] ? *a[0] : Value(80));
  return interp.call(*stringMethod(Value(str(in)), "center"), std::move(methodArgs));
}

Value wordcountFilter(Interpreter&, const Value& in, CallArgs& args) {
  bindArguments("wordcount", args, {});
  int64_t words = 0;
  bool inWord = false;
  for (char32_t c : text::decode(str(in))) {
    const bool wordChar = c == '_' || text::isAlpha(c) || text::isDigit(c);
    if (wordChar && !inWord) ++words;
    inWord = wordChar;
  }
  return Value(words);
}

// Jinja's format filter: printf-style, with positional or keyword values (not both).
Value formatFilter(Interpreter& interp, const Value& in, CallArgs& args) {
  if (!args.positional.empty() && !args.keywords.empty())
    throwRuntime("can't handle positional and keyword arguments at the same time");
  Value values;
  if (!args.keywords.empty()) {
    Dict mapping;
    for (const auto& [name, value] : args.keywords) mapping.set(Value(name), value);
    values = Value(std::move(mapping));
  } else {
    values = Value::makeTuple(args.positional);
  }
  return Value(pyPercentFormat(interp, str(in), values));
}

const FilterEntry kTextFilters[] = {
    {"format", formatFilter},
    {"trim", trimFilter},         {"upper", upperFilter},   {"lower", lowerFilter},
    {"capitalize", capitalizeFilter}, {"title", titleFilter}, {"replace", replaceFilter},
    {"string", stringFilter},     {"safe", safeFilter},     {"escape", escapeFilter},
    {"e", escapeFilter},          {"forceescape", escapeFilter}, {"default", defaultFilter},
    {"d", defaultFilter},         {"int", intFilter},       {"float", floatFilter},
    {"abs", absFilter},           {"round", roundFilter},   {"tojson", tojsonFilter},
    {"indent", indentFilter},     {"center", centerFilter}, {"wordcount", wordcountFilter},
};

}  // namespace

std::span<const FilterEntry> textFilters() { return kTextFilters; }

}  // namespace ember::chat
