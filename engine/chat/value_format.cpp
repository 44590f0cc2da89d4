#include "chat/value_format.h"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <vector>

#include "chat/template_error.h"
#include "chat/unicode_text.h"

namespace ember::chat {
namespace {

// The values repr() is printing on this thread, outermost first.
thread_local std::vector<const void*> reprStack;
constexpr size_t kMaxReprDepth = 1000;  // the nesting limit of lists and dicts (value.cpp)

void appendHexEscape(std::string& out, char prefix, char32_t c, int digits) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "\\%c%0*x", prefix, digits, static_cast<unsigned>(c));
  out += buf;
}

void appendRepr(std::string& out, const Value& v);

void appendSequence(std::string& out, const Value& v) {
  const bool tuple = v.isTuple();
  const auto& items = v.items();
  const ReprGuard guard(&items);
  if (guard.recursive()) {
    out += tuple ? "(...)" : "[...]";
    return;
  }
  out += tuple ? '(' : '[';
  for (size_t i = 0; i < items.size(); ++i) {
    if (i) out += ", ";
    appendRepr(out, items[i]);
  }
  if (tuple && items.size() == 1) out += ',';
  out += tuple ? ')' : ']';
}

void appendDict(std::string& out, const Dict& d) {
  const ReprGuard guard(&d);
  if (guard.recursive()) {
    out += "{...}";
    return;
  }
  out += '{';
  bool first = true;
  for (const auto& [k, v] : d.entries) {
    if (!first) out += ", ";
    first = false;
    appendRepr(out, k);
    out += ": ";
    appendRepr(out, v);
  }
  out += '}';
}

void appendRepr(std::string& out, const Value& v) {
  switch (v.kind()) {
    case Value::Kind::Undefined: out += "Undefined"; break;
    case Value::Kind::String: out += reprString(v.asString()); break;
    case Value::Kind::List: appendSequence(out, v); break;
    case Value::Kind::Dict: appendDict(out, v.asDict()); break;
    case Value::Kind::Object: out += v.asObject()->repr(); break;
    default: out += toPyStr(v); break;
  }
}

}  // namespace

ReprGuard::ReprGuard(const void* identity) {
  for (const void* active : reprStack)
    if (active == identity) {
      recursive_ = true;
      return;
    }
  if (reprStack.size() >= kMaxReprDepth)
    throwLimit("a value nests deeper than " + std::to_string(kMaxReprDepth) + " levels to print");
  reprStack.push_back(identity);
}

ReprGuard::~ReprGuard() {
  if (!recursive_) reprStack.pop_back();
}

std::string formatFloat(double d) {
  if (std::isnan(d)) return "nan";
  if (std::isinf(d)) return d > 0 ? "inf" : "-inf";
  // Shortest round-trip digits, then Python's float_repr_style layout: fixed notation for
  // exponents in [-4, 16), scientific otherwise, and always a fractional part or an exponent.
  char buf[64];
  const auto result = std::to_chars(buf, buf + sizeof buf, d, std::chars_format::scientific);
  const std::string sci(buf, result.ptr);
  const size_t e = sci.find('e');
  std::string mantissa = sci.substr(0, e);
  const int exponent = std::stoi(sci.substr(e + 1));
  std::string sign;
  if (mantissa[0] == '-') {
    sign = "-";
    mantissa.erase(0, 1);
  }
  std::string digits;
  for (char c : mantissa)
    if (c != '.') digits += c;
  if (exponent >= -4 && exponent < 16) {
    std::string out;
    if (exponent >= 0) {
      const size_t intLen = static_cast<size_t>(exponent) + 1;
      if (digits.size() <= intLen) {
        out = digits + std::string(intLen - digits.size(), '0') + ".0";
      } else {
        out = digits.substr(0, intLen) + "." + digits.substr(intLen);
      }
    } else {
      out = "0." + std::string(static_cast<size_t>(-exponent - 1), '0') + digits;
    }
    return sign + out;
  }
  std::string out = digits.substr(0, 1);
  if (digits.size() > 1) out += "." + digits.substr(1);
  char expBuf[16];
  std::snprintf(expBuf, sizeof expBuf, "e%c%02d", exponent < 0 ? '-' : '+', std::abs(exponent));
  return sign + out + expBuf;
}

std::string reprString(std::string_view s) {
  const bool hasSingle = s.find('\'') != std::string_view::npos;
  const bool hasDouble = s.find('"') != std::string_view::npos;
  const char quote = (hasSingle && !hasDouble) ? '"' : '\'';
  std::string out(1, quote);
  for (char32_t c : text::decode(s)) {
    if (c == static_cast<char32_t>(quote) || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c == '\t') {
      out += "\\t";
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c < 0x20 || c == 0x7F) {
      appendHexEscape(out, 'x', c, 2);
    } else if (c < 0x7F || text::isPrintable(c)) {
      text::appendUtf8(out, c);
    } else if (c <= 0xFF) {
      appendHexEscape(out, 'x', c, 2);
    } else if (c <= 0xFFFF) {
      appendHexEscape(out, 'u', c, 4);
    } else {
      appendHexEscape(out, 'U', c, 8);
    }
  }
  out += quote;
  return out;
}

std::string toPyStr(const Value& v) {
  switch (v.kind()) {
    case Value::Kind::Undefined: return "";
    case Value::Kind::None: return "None";
    case Value::Kind::Bool: return v.asBool() ? "True" : "False";
    case Value::Kind::Int: return std::to_string(v.asInt());
    case Value::Kind::Float: return formatFloat(v.asFloat());
    case Value::Kind::String: return v.asString();
    default: {
      std::string out;
      appendRepr(out, v);
      return out;
    }
  }
}

std::string toPyRepr(const Value& v) {
  std::string out;
  appendRepr(out, v);
  return out;
}

}  // namespace ember::chat
