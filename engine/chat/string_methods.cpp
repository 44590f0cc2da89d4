// Python str methods reachable from templates ('x'.startswith(...), s.split('</think>')).
// Indices and lengths are in code points, as in Python.
#include <algorithm>
#include <array>

#include "chat/builtins.h"
#include "chat/interpreter.h"
#include "chat/string_format.h"
#include "chat/template_error.h"
#include "chat/unicode_text.h"
#include "chat/value_format.h"

namespace ember::chat {
namespace {

const std::string& requireString(const std::optional<Value>& v, std::string_view method,
                                 std::string_view what = "argument") {
  if (!v || !v->isString()) {
    if (v && v->isUndefined()) throwUndefined(*v);
    throwRuntime(std::string(method) + "() " + std::string(what) + " must be str, not " +
                 (v ? v->typeName() : "nothing"));
  }
  return v->asString();
}

int64_t optionalInt(const std::optional<Value>& v, int64_t fallback) {
  if (!v || v->isNone()) return fallback;
  if (!v->isIntegral()) throwRuntime("an integer is required, not '" + v->typeName() + "'");
  return v->asInt();
}

// Python's slice clamping for the optional start/end arguments of find, count, startswith.
std::pair<size_t, size_t> clampRange(const std::optional<Value>& start,
                                     const std::optional<Value>& end, size_t length) {
  auto clamp = [length](int64_t i) -> size_t {
    if (i < 0) i += static_cast<int64_t>(length);
    return static_cast<size_t>(std::clamp<int64_t>(i, 0, static_cast<int64_t>(length)));
  };
  const size_t s = clamp(optionalInt(start, 0));
  const size_t e = clamp(optionalInt(end, static_cast<int64_t>(length)));
  return {s, std::max(s, e)};
}

std::optional<std::string> stripChars(const std::optional<Value>& v, std::string_view method) {
  if (!v || v->isNone()) return std::nullopt;
  return requireString(v, method);
}

Value stripMethod(const Value& self, CallArgs& args, std::string_view name, StripSide side) {
  auto a = bindArguments(name, args, {"chars"});
  std::string stripped = pyStrip(self.asString(), stripChars(a[0], name), side);
  // The kept bytes start at the first one not stripped, which find() meets first.
  const size_t at = stripped.empty() ? 0 : self.asString().find(stripped);
  return Value::substringOf(self, std::move(stripped), at);
}

bool isLineBreak(char32_t c) {
  return c == '\n' || c == '\r' || c == 0x0B || c == 0x0C || (c >= 0x1C && c <= 0x1E) ||
         c == 0x85 || c == 0x2028 || c == 0x2029;
}

// str.split / str.rsplit with no separator: runs of whitespace, ends ignored.
std::vector<Value> splitWhitespace(const std::u32string& s, int64_t maxSplit, bool fromRight) {
  std::vector<std::u32string> parts;
  if (!fromRight) {
    size_t i = 0;
    while (true) {
      while (i < s.size() && text::isSpace(s[i])) ++i;
      if (i >= s.size()) break;
      if (maxSplit >= 0 && static_cast<int64_t>(parts.size()) == maxSplit) {
        parts.push_back(s.substr(i));
        break;
      }
      size_t j = i;
      while (j < s.size() && !text::isSpace(s[j])) ++j;
      parts.push_back(s.substr(i, j - i));
      i = j;
    }
  } else {
    size_t i = s.size();
    while (true) {
      while (i > 0 && text::isSpace(s[i - 1])) --i;
      if (i == 0) break;
      if (maxSplit >= 0 && static_cast<int64_t>(parts.size()) == maxSplit) {
        parts.push_back(s.substr(0, i));
        break;
      }
      size_t j = i;
      while (j > 0 && !text::isSpace(s[j - 1])) --j;
      parts.push_back(s.substr(j, i - j));
      i = j;
    }
    std::reverse(parts.begin(), parts.end());
  }
  std::vector<Value> out;
  for (const auto& p : parts) out.emplace_back(text::encode(p));
  return out;
}

std::vector<Value> splitOn(const std::string& s, const std::string& sep, int64_t maxSplit,
                           bool fromRight) {
  if (sep.empty()) throwRuntime("empty separator");
  std::vector<Value> out;
  if (!fromRight) {
    size_t start = 0;
    for (int64_t n = 0; maxSplit < 0 || n < maxSplit; ++n) {
      const size_t hit = s.find(sep, start);
      if (hit == std::string::npos) break;
      out.emplace_back(s.substr(start, hit - start));
      start = hit + sep.size();
    }
    out.emplace_back(s.substr(start));
    return out;
  }
  size_t end = s.size();
  for (int64_t n = 0; maxSplit < 0 || n < maxSplit; ++n) {
    if (end < sep.size()) break;
    const size_t hit = s.rfind(sep, end - sep.size());
    if (hit == std::string::npos) break;
    out.emplace_back(s.substr(hit + sep.size(), end - hit - sep.size()));
    end = hit;
  }
  out.emplace_back(s.substr(0, end));
  std::reverse(out.begin(), out.end());
  return out;
}

Value splitMethod(Interpreter& interp, const Value& self, CallArgs& args, bool fromRight) {
  auto a = bindArguments(fromRight ? "rsplit" : "split", args, {"sep", "maxsplit"});
  const int64_t maxSplit = optionalInt(a[1], -1);
  std::vector<Value> parts;
  if (!a[0] || a[0]->isNone()) {
    parts = splitWhitespace(text::decode(self.asString()), maxSplit, fromRight);
  } else {
    parts = splitOn(self.asString(), requireString(a[0], "split"), maxSplit, fromRight);
  }
  interp.checkStringSize(self.asString().size() + parts.size() * 16);
  return Value::makeList(std::move(parts));
}

// startswith / endswith: prefix may be a tuple of candidates.
Value affixMethod(const Value& self, CallArgs& args, bool atStart) {
  const char* name = atStart ? "startswith" : "endswith";
  auto a = bindArguments(name, args, {"prefix", "start", "end"});
  if (!a[0]) throwRuntime(std::string(name) + "() takes at least 1 argument (0 given)");
  std::vector<std::string> candidates;
  if (a[0]->isTuple()) {
    for (const Value& v : a[0]->items()) candidates.push_back(requireString(v, name));
  } else {
    candidates.push_back(requireString(a[0], name, "first arg"));
  }
  std::string subject = self.asString();
  if (a[1] || a[2]) {
    const std::u32string cps = text::decode(subject);
    const auto [s, e] = clampRange(a[1], a[2], cps.size());
    subject = text::encode(std::u32string_view(cps).substr(s, e - s));
  }
  for (const auto& c : candidates) {
    if (c.size() > subject.size()) continue;
    if (atStart ? subject.compare(0, c.size(), c) == 0
                : subject.compare(subject.size() - c.size(), c.size(), c) == 0)
      return Value(true);
  }
  return Value(false);
}

Value replaceMethod(Interpreter& interp, const Value& self, CallArgs& args) {
  auto a = bindArguments("replace", args, {"old", "new", "count"});
  const std::string& from = requireString(a[0], "replace");
  const std::string& to = requireString(a[1], "replace");
  int64_t remaining = optionalInt(a[2], -1);
  const std::string& s = self.asString();
  std::string out;
  if (from.empty()) {  // inserts `to` around every code point
    const std::u32string cps = text::decode(s);
    for (size_t i = 0; i <= cps.size(); ++i) {
      if (remaining != 0) {
        out += to;
        --remaining;
      }
      if (i < cps.size()) text::appendUtf8(out, cps[i]);
      interp.checkStringSize(out.size());
    }
    return Value(std::move(out));
  }
  size_t start = 0;
  while (remaining != 0) {
    const size_t hit = s.find(from, start);
    if (hit == std::string::npos) break;
    out.append(s, start, hit - start);
    out += to;
    interp.checkStringSize(out.size());
    start = hit + from.size();
    --remaining;
  }
  out.append(s, start, std::string::npos);
  interp.checkStringSize(out.size());
  return Value(std::move(out));
}

Value findMethod(const Value& self, CallArgs& args, bool fromRight, bool countOnly) {
  const char* name = countOnly ? "count" : fromRight ? "rfind" : "find";
  auto a = bindArguments(name, args, {"sub", "start", "end"});
  const std::u32string needle = text::decode(requireString(a[0], name));
  const std::u32string hay = text::decode(self.asString());
  const auto [s, e] = clampRange(a[1], a[2], hay.size());
  const std::u32string_view window = std::u32string_view(hay).substr(s, e - s);
  if (countOnly) {
    if (needle.empty()) return Value(static_cast<int64_t>(window.size() + 1));
    int64_t n = 0;
    for (size_t p = window.find(needle); p != std::u32string_view::npos;
         p = window.find(needle, p + needle.size()))
      ++n;
    return Value(n);
  }
  const size_t hit = fromRight ? window.rfind(needle) : window.find(needle);
  return Value(hit == std::u32string_view::npos ? int64_t{-1} : static_cast<int64_t>(s + hit));
}

Value joinMethod(Interpreter& interp, const Value& self, CallArgs& args) {
  auto a = bindArguments("join", args, {"iterable"});
  if (!a[0]) throwRuntime("join() takes exactly one argument (0 given)");
  std::string out;
  size_t index = 0;
  for (const Value& item : iterateValue(*a[0])) {
    if (!item.isString())
      throwRuntime("sequence item " + std::to_string(index) + ": expected str instance, " +
                   item.typeName() + " found");
    if (index++) out += self.asString();
    out += item.asString();
    interp.checkStringSize(out.size());
  }
  return Value(std::move(out));
}

Value padMethod(Interpreter& interp, const Value& self, CallArgs& args, int align) {
  const char* name = align < 0 ? "ljust" : align > 0 ? "rjust" : "center";
  auto a = bindArguments(name, args, {"width", "fillchar"});
  const int64_t width = optionalInt(a[0], 0);
  std::u32string fill = U" ";
  if (a[1]) fill = text::decode(requireString(a[1], name));
  if (fill.size() != 1) throwRuntime("The fill character must be exactly one character long");
  const std::u32string s = text::decode(self.asString());
  if (width <= static_cast<int64_t>(s.size())) return self;
  interp.checkStringSize(static_cast<size_t>(width) * 4);
  const size_t total = static_cast<size_t>(width) - s.size();
  // CPython's center puts the odd extra fill on the left when the width is odd.
  size_t left = align < 0 ? 0 : align > 0 ? total : total / 2 + (total & static_cast<size_t>(width) & 1);
  return Value(text::encode(std::u32string(left, fill[0]) + s + std::u32string(total - left, fill[0])));
}

Value splitlinesMethod(const Value& self, CallArgs& args) {
  auto a = bindArguments("splitlines", args, {"keepends"});
  std::vector<Value> lines;
  for (auto& line : pySplitLines(self.asString(), a[0] && a[0]->truthy()))
    lines.emplace_back(std::move(line));
  return Value::makeList(std::move(lines));
}

template <bool (*Predicate)(char32_t)>
Value classifyMethod(Interpreter&, const Value& self, CallArgs&) {
  const std::u32string s = text::decode(self.asString());
  return Value(!s.empty() && std::all_of(s.begin(), s.end(), Predicate));
}
bool isAlnum(char32_t c) { return text::isAlpha(c) || text::isDigit(c); }

Value casedMethod(const Value& self, bool upperWanted) {
  bool anyCased = false;
  for (char32_t c : text::decode(self.asString())) {
    if (upperWanted ? text::isLowerCase(c) : text::isUpperCase(c)) return Value(false);
    anyCased = anyCased || text::isCased(c);
  }
  return Value(anyCased);
}

Value affixRemoval(const Value& self, CallArgs& args, bool prefix) {
  auto a = bindArguments(prefix ? "removeprefix" : "removesuffix", args, {"affix"});
  const std::string& affix = requireString(a[0], prefix ? "removeprefix" : "removesuffix");
  const std::string& s = self.asString();
  if (affix.size() > s.size()) return self;
  if (prefix && s.compare(0, affix.size(), affix) == 0) return Value(s.substr(affix.size()));
  if (!prefix && s.compare(s.size() - affix.size(), affix.size(), affix) == 0)
    return Value(s.substr(0, s.size() - affix.size()));
  return self;
}

struct MethodEntry {
  std::string_view name;
  NativeMethod method;
};

#define EMBER_STR_METHOD(body) [](Interpreter & interp, const Value& self, CallArgs& args) -> Value { \
  (void)interp; (void)args; body }

const std::array kStringMethods = {
    MethodEntry{"startswith", EMBER_STR_METHOD(return affixMethod(self, args, true);)},
    MethodEntry{"endswith", EMBER_STR_METHOD(return affixMethod(self, args, false);)},
    MethodEntry{"strip", EMBER_STR_METHOD(return stripMethod(self, args, "strip", StripSide::Both);)},
    MethodEntry{"lstrip", EMBER_STR_METHOD(return stripMethod(self, args, "lstrip", StripSide::Left);)},
    MethodEntry{"rstrip", EMBER_STR_METHOD(return stripMethod(self, args, "rstrip", StripSide::Right);)},
    MethodEntry{"split", EMBER_STR_METHOD(return splitMethod(interp, self, args, false);)},
    MethodEntry{"rsplit", EMBER_STR_METHOD(return splitMethod(interp, self, args, true);)},
    MethodEntry{"splitlines", EMBER_STR_METHOD(return splitlinesMethod(self, args);)},
    MethodEntry{"replace", EMBER_STR_METHOD(return replaceMethod(interp, self, args);)},
    MethodEntry{"find", EMBER_STR_METHOD(return findMethod(self, args, false, false);)},
    MethodEntry{"rfind", EMBER_STR_METHOD(return findMethod(self, args, true, false);)},
    MethodEntry{"count", EMBER_STR_METHOD(return findMethod(self, args, false, true);)},
    MethodEntry{"join", EMBER_STR_METHOD(return joinMethod(interp, self, args);)},
    MethodEntry{"upper", EMBER_STR_METHOD(bindArguments("upper", args, {}); return Value(text::upper(self.asString()));)},
    MethodEntry{"lower", EMBER_STR_METHOD(bindArguments("lower", args, {}); return Value(text::lower(self.asString()));)},
    MethodEntry{"casefold", EMBER_STR_METHOD(bindArguments("casefold", args, {}); return Value(text::lower(self.asString()));)},
    MethodEntry{"title", EMBER_STR_METHOD(bindArguments("title", args, {}); return Value(text::title(self.asString()));)},
    MethodEntry{"capitalize", EMBER_STR_METHOD(bindArguments("capitalize", args, {}); return Value(text::capitalize(self.asString()));)},
    MethodEntry{"swapcase", EMBER_STR_METHOD(bindArguments("swapcase", args, {}); return Value(text::swapcase(self.asString()));)},
    MethodEntry{"ljust", EMBER_STR_METHOD(return padMethod(interp, self, args, -1);)},
    MethodEntry{"rjust", EMBER_STR_METHOD(return padMethod(interp, self, args, 1);)},
    MethodEntry{"center", EMBER_STR_METHOD(return padMethod(interp, self, args, 0);)},
    MethodEntry{"removeprefix", EMBER_STR_METHOD(return affixRemoval(self, args, true);)},
    MethodEntry{"removesuffix", EMBER_STR_METHOD(return affixRemoval(self, args, false);)},
    MethodEntry{"format", EMBER_STR_METHOD(return Value(pyStrFormat(interp, self.asString(), args));)},
    MethodEntry{"isalpha", classifyMethod<text::isAlpha>},
    MethodEntry{"isdigit", classifyMethod<text::isDigit>},
    MethodEntry{"isdecimal", classifyMethod<text::isDigit>},
    MethodEntry{"isnumeric", classifyMethod<text::isDigit>},
    MethodEntry{"isalnum", classifyMethod<isAlnum>},
    MethodEntry{"isspace", classifyMethod<text::isSpace>},
    MethodEntry{"isupper", EMBER_STR_METHOD(return casedMethod(self, true);)},
    MethodEntry{"islower", EMBER_STR_METHOD(return casedMethod(self, false);)},
};

#undef EMBER_STR_METHOD

// Python str attributes not implemented here: they exist (so they are not undefined) but
// calling them is reported as unsupported.
constexpr std::string_view kUnimplementedStringMethods[] = {
    "encode",     "expandtabs", "format_map", "index",      "isascii",
    "isidentifier", "isprintable", "istitle", "maketrans", "partition", "rindex",
    "rpartition", "translate",  "zfill"};

}  // namespace

std::string pyStrip(std::string_view s, const std::optional<std::string>& chars, StripSide side) {
  const std::u32string cps = text::decode(s);
  const std::u32string set = chars ? text::decode(*chars) : std::u32string();
  auto strippable = [&](char32_t c) {
    return chars ? set.find(c) != std::u32string::npos : text::isSpace(c);
  };
  size_t begin = 0, end = cps.size();
  if (side != StripSide::Right)
    while (begin < end && strippable(cps[begin])) ++begin;
  if (side != StripSide::Left)
    while (end > begin && strippable(cps[end - 1])) --end;
  return text::encode(std::u32string_view(cps).substr(begin, end - begin));
}

std::vector<std::string> pySplitLines(std::string_view text, bool keepEnds) {
  const std::u32string s = text::decode(text);
  std::vector<std::string> lines;
  size_t start = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    if (!isLineBreak(s[i])) continue;
    size_t end = i + 1;
    if (s[i] == '\r' && i + 1 < s.size() && s[i + 1] == '\n') ++end;
    lines.push_back(text::encode(std::u32string_view(s).substr(start, (keepEnds ? end : i) - start)));
    start = end;
    i = end - 1;
  }
  if (start < s.size()) lines.push_back(text::encode(std::u32string_view(s).substr(start)));
  return lines;
}

std::optional<Value> stringMethod(const Value& self, std::string_view name) {
  for (const auto& entry : kStringMethods)
    if (entry.name == name) return makeBoundMethod(self, std::string(name), entry.method);
  for (auto unimplemented : kUnimplementedStringMethods)
    if (unimplemented == name) return makeUnsupportedMethod(self, std::string(name));
  return std::nullopt;
}

}  // namespace ember::chat
