#include "chat/string_format.h"

#include <cmath>
#include <cstdio>

#include "chat/interpreter.h"
#include "chat/template_error.h"
#include "chat/unicode_text.h"
#include "chat/value_format.h"

namespace ember::chat {
namespace {

struct FormatSpec {
  char32_t fill = ' ';
  char align = 0;  // '<', '>', '^', '=' or 0 for the type's default
  char sign = '-';
  bool alternate = false;
  bool zeroPad = false;
  size_t width = 0;
  char grouping = 0;  // ',' or '_'
  int precision = -1;
  char type = 0;
};

size_t readNumber(std::string_view s, size_t& i) {
  size_t n = 0;
  while (i < s.size() && s[i] >= '0' && s[i] <= '9') n = n * 10 + static_cast<size_t>(s[i++] - '0');
  return std::min<size_t>(n, 100000);  // a width beyond this is surely hostile
}

FormatSpec parseSpec(std::string_view spec) {
  FormatSpec f;
  const std::u32string cps = text::decode(spec);
  auto isAlign = [](char32_t c) { return c == '<' || c == '>' || c == '^' || c == '='; };
  size_t start = 0;
  if (cps.size() >= 2 && isAlign(cps[1])) {
    f.fill = cps[0];
    f.align = static_cast<char>(cps[1]);
    start = text::encode(cps.substr(0, 2)).size();
  } else if (!cps.empty() && isAlign(cps[0])) {
    f.align = static_cast<char>(cps[0]);
    start = 1;
  }
  size_t i = start;
  if (i < spec.size() && (spec[i] == '+' || spec[i] == '-' || spec[i] == ' ')) f.sign = spec[i++];
  if (i < spec.size() && spec[i] == '#') f.alternate = (++i, true);
  if (i < spec.size() && spec[i] == '0') f.zeroPad = (++i, true);
  f.width = readNumber(spec, i);
  if (i < spec.size() && (spec[i] == ',' || spec[i] == '_')) f.grouping = spec[i++];
  if (i < spec.size() && spec[i] == '.') {
    ++i;
    f.precision = static_cast<int>(std::min<size_t>(readNumber(spec, i), 300));
  }
  if (i < spec.size()) f.type = spec[i++];
  if (i != spec.size()) throwRuntime("Invalid format specifier '" + std::string(spec) + "'");
  return f;
}

std::string group(const std::string& digits, char separator) {
  if (!separator) return digits;
  std::string out;
  const size_t n = digits.size();
  for (size_t i = 0; i < n; ++i) {
    if (i && (n - i) % 3 == 0) out += separator;
    out += digits[i];
  }
  return out;
}

// Applies fill, alignment and sign-aware zero padding to an already formatted body.
std::string pad(const std::string& signPart, const std::string& body, const FormatSpec& f,
                char defaultAlign) {
  char align = f.align ? f.align : (f.zeroPad ? '=' : defaultAlign);
  char32_t fill = f.align ? f.fill : (f.zeroPad ? U'0' : f.fill);
  const size_t length = text::codePointCount(signPart) + text::codePointCount(body);
  if (length >= f.width) return signPart + body;
  const size_t total = f.width - length;
  std::string fillText;
  text::appendUtf8(fillText, fill);
  auto repeat = [&](size_t n) {
    std::string s;
    for (size_t k = 0; k < n; ++k) s += fillText;
    return s;
  };
  switch (align) {
    case '<': return signPart + body + repeat(total);
    case '^': return repeat(total / 2) + signPart + body + repeat(total - total / 2);
    case '=': return signPart + repeat(total) + body;
    default: return repeat(total) + signPart + body;
  }
}

std::string formatInteger(int64_t v, const FormatSpec& f) {
  const uint64_t magnitude = v < 0 ? 0 - static_cast<uint64_t>(v) : static_cast<uint64_t>(v);
  std::string digits, prefix;
  char buf[80];
  switch (f.type) {
    case 0: case 'd': case 'n':
      std::snprintf(buf, sizeof buf, "%llu", static_cast<unsigned long long>(magnitude));
      digits = group(buf, f.grouping);
      break;
    case 'x': case 'X': case 'o':
      std::snprintf(buf, sizeof buf, f.type == 'o' ? "%llo" : f.type == 'x' ? "%llx" : "%llX",
                    static_cast<unsigned long long>(magnitude));
      digits = buf;
      if (f.alternate) prefix = f.type == 'o' ? "0o" : f.type == 'x' ? "0x" : "0X";
      break;
    case 'b':
      for (uint64_t m = magnitude; m || digits.empty(); m >>= 1) digits.insert(digits.begin(), char('0' + (m & 1)));
      if (f.alternate) prefix = "0b";
      break;
    case 'c': {
      std::string ch;
      text::appendUtf8(ch, static_cast<char32_t>(v));
      return pad("", ch, f, '<');
    }
    default: throwRuntime(std::string("Unknown format code '") + f.type + "' for object of type 'int'");
  }
  const std::string signPart = (v < 0 ? "-" : f.sign == '+' ? "+" : f.sign == ' ' ? " " : "") + prefix;
  return pad(signPart, digits, f, '>');
}

std::string formatFloatSpec(double v, const FormatSpec& f) {
  if (f.type == 0 && f.precision < 0) {
    std::string repr = formatFloat(std::fabs(v));
    const std::string signPart = std::signbit(v) ? "-" : f.sign == '+' ? "+" : f.sign == ' ' ? " " : "";
    return pad(signPart, repr, f, '>');
  }
  const int precision = f.precision < 0 ? 6 : f.precision;
  char type = f.type;
  if (type == 0) throwUnsupported("float format without a type but with a precision is not supported");
  double shown = std::fabs(v);
  if (type == '%') shown *= 100;
  char conversion = type == '%' ? 'f' : type == 'F' ? 'F' : type;
  if (conversion != 'f' && conversion != 'F' && conversion != 'e' && conversion != 'E' &&
      conversion != 'g' && conversion != 'G')
    throwRuntime(std::string("Unknown format code '") + type + "' for object of type 'float'");
  char fmt[16], buf[512];
  std::snprintf(fmt, sizeof fmt, "%%%s.%d%c", f.alternate ? "#" : "", precision, conversion);
  std::snprintf(buf, sizeof buf, fmt, shown);
  std::string body = buf;
  if (f.grouping) {
    const size_t dot = body.find_first_not_of("0123456789");
    body = group(body.substr(0, dot), f.grouping) + (dot == std::string::npos ? "" : body.substr(dot));
  }
  if (type == '%') body += '%';
  const std::string signPart = std::signbit(v) ? "-" : f.sign == '+' ? "+" : f.sign == ' ' ? " " : "";
  return pad(signPart, body, f, '>');
}

}  // namespace

std::string pyFormatValue(const Value& value, std::string_view specText) {
  if (specText.empty()) return toPyStr(value);
  const FormatSpec f = parseSpec(specText);
  if (value.isString()) {
    if (f.type && f.type != 's')
      throwRuntime(std::string("Unknown format code '") + f.type + "' for object of type 'str'");
    std::string s = value.asString();
    if (f.precision >= 0) s = text::encode(text::decode(s).substr(0, static_cast<size_t>(f.precision)));
    return pad("", s, f, '<');
  }
  if (value.isIntegral()) {
    if (f.type == 'f' || f.type == 'F' || f.type == 'e' || f.type == 'E' || f.type == 'g' ||
        f.type == 'G' || f.type == '%')
      return formatFloatSpec(value.asFloat(), f);
    return formatInteger(value.asInt(), f);
  }
  if (value.isFloat()) return formatFloatSpec(value.asFloat(), f);
  throwRuntime("unsupported format string passed to " + value.typeName() + ".__format__");
}

}  // namespace ember::chat

namespace ember::chat {
namespace {

// The value a replacement field names: an index or keyword, then .attribute / [key] steps
// (looked up through the sandbox, like Jinja2's SandboxedFormatter).
Value resolveField(Interpreter& interp, std::string_view field, const CallArgs& args,
                   size_t& autoIndex, int& numbering) {
  size_t end = 0;
  while (end < field.size() && field[end] != '.' && field[end] != '[') ++end;
  const std::string_view head = field.substr(0, end);
  Value value;
  const bool isIndex = head.empty() || head.find_first_not_of("0123456789") == std::string_view::npos;
  if (isIndex) {
    const int mode = head.empty() ? 1 : 2;
    // Python's string.Formatter (which Jinja2's sandbox uses) words both directions alike.
    if (numbering && numbering != mode)
      throwRuntime("cannot switch from manual field specification to automatic field numbering");
    numbering = mode;
    const size_t index = head.empty() ? autoIndex++ : std::stoul(std::string(head));
    if (index >= args.positional.size()) throwRuntime("tuple index out of range");
    value = args.positional[index];
  } else {
    bool found = false;
    for (const auto& [name, v] : args.keywords)
      if (name == head) value = v, found = true;
    if (!found) throwRuntime("'" + std::string(head) + "'");
  }
  size_t i = end;
  while (i < field.size()) {
    if (field[i] == '.') {
      size_t j = i + 1;
      while (j < field.size() && field[j] != '.' && field[j] != '[') ++j;
      value = interp.getAttribute(value, field.substr(i + 1, j - i - 1));
      i = j;
    } else {
      const size_t close = field.find(']', i);
      if (close == std::string_view::npos) throwRuntime("Missing ']' in format string");
      const std::string key(field.substr(i + 1, close - i - 1));
      const bool digits = !key.empty() && key.find_first_not_of("0123456789") == std::string::npos;
      value = interp.getItem(value, digits ? Value(static_cast<int64_t>(std::stoll(key))) : Value(key));
      i = close + 1;
    }
  }
  return value;
}

}  // namespace

std::string pyStrFormat(Interpreter& interp, std::string_view format, const CallArgs& args) {
  std::string out;
  size_t autoIndex = 0;
  int numbering = 0;  // 0 unknown, 1 automatic, 2 manual
  for (size_t i = 0; i < format.size(); ++i) {
    const char c = format[i];
    if (c == '}') {
      if (i + 1 < format.size() && format[i + 1] == '}') {
        out += '}';
        ++i;
        continue;
      }
      throwRuntime("Single '}' encountered in format string");
    }
    if (c != '{') {
      out += c;
      continue;
    }
    if (i + 1 < format.size() && format[i + 1] == '{') {
      out += '{';
      ++i;
      continue;
    }
    size_t close = i + 1, depthInBrackets = 0;
    while (close < format.size() && (format[close] != '}' || depthInBrackets)) {
      if (format[close] == '[') ++depthInBrackets;
      if (format[close] == ']' && depthInBrackets) --depthInBrackets;
      if (format[close] == '{' && !depthInBrackets)
        throwUnsupported("nested replacement fields in str.format are not supported");
      ++close;
    }
    if (close >= format.size())
      throwRuntime(i + 1 == format.size() ? "Single '{' encountered in format string"
                                          : "expected '}' before end of string");
    std::string_view field = format.substr(i + 1, close - i - 1);
    std::string_view spec, conversion;
    if (const size_t colon = field.find(':'); colon != std::string_view::npos) {
      spec = field.substr(colon + 1);
      field = field.substr(0, colon);
    }
    if (const size_t bang = field.find('!'); bang != std::string_view::npos) {
      conversion = field.substr(bang + 1);
      field = field.substr(0, bang);
    }
    Value value = resolveField(interp, field, args, autoIndex, numbering);
    if (conversion == "r") value = Value(toPyRepr(value));
    else if (conversion == "s") value = Value(toPyStr(value));
    else if (!conversion.empty()) throwUnsupported("the !" + std::string(conversion) + " conversion is not supported");
    out += pyFormatValue(value, spec);
    interp.checkStringSize(out.size());
    i = close;
  }
  return out;
}

}  // namespace ember::chat
