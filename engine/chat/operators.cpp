#include "chat/operators.h"

#include <cmath>

#include "chat/interpreter.h"
#include "chat/string_format.h"
#include "chat/template_error.h"

namespace ember::chat {
namespace {

const char* symbol(BinaryOp op) {
  switch (op) {
    case BinaryOp::Add: return "+";
    case BinaryOp::Subtract: return "-";
    case BinaryOp::Multiply: return "*";
    case BinaryOp::Divide: return "/";
    case BinaryOp::FloorDivide: return "//";
    case BinaryOp::Modulo: return "%";
    case BinaryOp::Power: return "** or pow()";
    default: return "?";
  }
}

[[noreturn]] void unsupportedOperands(BinaryOp op, const Value& a, const Value& b) {
  throwRuntime(std::string("unsupported operand type(s) for ") + symbol(op) + ": '" +
               a.typeName() + "' and '" + b.typeName() + "'");
}

[[noreturn]] void overflow() { throwRuntime("integer result does not fit in 64 bits"); }

// CPython's float divmod: the quotient floors, the remainder takes the divisor's sign.
std::pair<double, double> floatDivmod(double x, double y) {
  double mod = std::fmod(x, y);
  double div = (x - mod) / y;
  if (mod != 0.0) {
    if ((y < 0) != (mod < 0)) {
      mod += y;
      div -= 1.0;
    }
  } else {
    mod = std::copysign(0.0, y);
  }
  double floorDiv;
  if (div != 0.0) {
    floorDiv = std::floor(div);
    if (div - floorDiv > 0.5) floorDiv += 1.0;
  } else {
    floorDiv = std::copysign(0.0, x / y);
  }
  return {floorDiv, mod};
}

Value integerPower(int64_t base, int64_t exponent) {
  int64_t result = 1;
  while (exponent > 0) {
    if (exponent & 1)
      if (__builtin_mul_overflow(result, base, &result)) overflow();
    exponent >>= 1;
    if (exponent > 0 && __builtin_mul_overflow(base, base, &base)) overflow();
  }
  return Value(result);
}

Value arithmetic(BinaryOp op, const Value& a, const Value& b) {
  if (a.isIntegral() && b.isIntegral()) {
    const int64_t x = a.asInt(), y = b.asInt();
    int64_t r;
    switch (op) {
      case BinaryOp::Add: if (__builtin_add_overflow(x, y, &r)) overflow(); return Value(r);
      case BinaryOp::Subtract: if (__builtin_sub_overflow(x, y, &r)) overflow(); return Value(r);
      case BinaryOp::Multiply: if (__builtin_mul_overflow(x, y, &r)) overflow(); return Value(r);
      case BinaryOp::Divide:
        if (y == 0) throwRuntime("division by zero");
        return Value(static_cast<double>(x) / static_cast<double>(y));
      case BinaryOp::FloorDivide:
      case BinaryOp::Modulo: {
        if (y == 0) throwRuntime("integer division or modulo by zero");
        if (x == INT64_MIN && y == -1) overflow();
        int64_t q = x / y, m = x % y;
        if (m != 0 && ((m < 0) != (y < 0))) {
          m += y;
          q -= 1;
        }
        return Value(op == BinaryOp::FloorDivide ? q : m);
      }
      case BinaryOp::Power:
        if (y >= 0) return integerPower(x, y);
        if (x == 0) throwRuntime("0.0 cannot be raised to a negative power");
        return Value(std::pow(static_cast<double>(x), static_cast<double>(y)));
      default: break;
    }
  }
  const double x = a.asFloat(), y = b.asFloat();
  switch (op) {
    case BinaryOp::Add: return Value(x + y);
    case BinaryOp::Subtract: return Value(x - y);
    case BinaryOp::Multiply: return Value(x * y);
    case BinaryOp::Divide:
      if (y == 0.0) throwRuntime("float division by zero");
      return Value(x / y);
    case BinaryOp::FloorDivide:
      if (y == 0.0) throwRuntime("float floor division by zero");
      return Value(floatDivmod(x, y).first);
    case BinaryOp::Modulo:
      if (y == 0.0) throwRuntime("float modulo");
      return Value(floatDivmod(x, y).second);
    case BinaryOp::Power:
      if (x == 0.0 && y < 0) throwRuntime("0.0 cannot be raised to a negative power");
      if (x < 0 && y != std::floor(y))
        throwUnsupported("raising a negative number to a fractional power gives a complex number");
      return Value(std::pow(x, y));
    default: unsupportedOperands(op, a, b);
  }
}

Value repeat(Interpreter& interp, const Value& sequence, int64_t times) {
  if (times <= 0) return sequence.isString() ? Value("") : (sequence.isTuple() ? Value::makeTuple({}) : Value::makeList({}));
  if (sequence.isString()) {
    const std::string& s = sequence.asString();
    interp.checkStringSize(s.size() * static_cast<size_t>(times));
    std::string out;
    out.reserve(s.size() * static_cast<size_t>(times));
    for (int64_t i = 0; i < times; ++i) out += s;
    return Value(std::move(out));
  }
  const auto& items = sequence.items();
  interp.checkListSize(items.size() * static_cast<size_t>(times));
  std::vector<Value> out;
  for (int64_t i = 0; i < times; ++i) out.insert(out.end(), items.begin(), items.end());
  return sequence.isTuple() ? Value::makeTuple(std::move(out)) : Value::makeList(std::move(out));
}

}  // namespace

Value binaryOperation(Interpreter& interp, BinaryOp op, const Value& a, const Value& b) {
  if (a.isUndefined()) throwUndefined(a);
  if (b.isUndefined()) throwUndefined(b);
  if (a.isNumber() && b.isNumber()) return arithmetic(op, a, b);
  if (op == BinaryOp::Add) {
    if (a.isString() && b.isString()) {
      interp.checkStringSize(a.asString().size() + b.asString().size());
      ContentSpans spans = a.contentSpans();
      appendSpans(spans, b.contentSpans(), a.asString().size());
      return Value::markedString(a.asString() + b.asString(), std::move(spans));
    }
    if (a.isList() && b.isList() && a.isTuple() == b.isTuple()) {
      interp.checkListSize(a.items().size() + b.items().size());
      std::vector<Value> items = a.items();
      items.insert(items.end(), b.items().begin(), b.items().end());
      return a.isTuple() ? Value::makeTuple(std::move(items)) : Value::makeList(std::move(items));
    }
    if (a.isString() || a.isList())
      throwRuntime("can only concatenate " + a.typeName() + " (not \"" + b.typeName() + "\") to " +
                   a.typeName());
  }
  if (op == BinaryOp::Multiply) {
    if ((a.isString() || a.isList()) && b.isIntegral()) return repeat(interp, a, b.asInt());
    if (a.isIntegral() && (b.isString() || b.isList())) return repeat(interp, b, a.asInt());
    if (a.isString() || b.isString() || a.isList() || b.isList())
      throwRuntime("can't multiply sequence by non-int of type '" +
                   (a.isString() || a.isList() ? b : a).typeName() + "'");
  }
  if (op == BinaryOp::Modulo && a.isString()) return Value(pyPercentFormat(interp, a.asString(), b));
  unsupportedOperands(op, a, b);
}

Value unaryOperation(UnaryOp op, const Value& v) {
  if (op == UnaryOp::Not) return Value(!v.truthy());
  if (v.isUndefined()) throwUndefined(v);
  if (v.isIntegral()) {
    const int64_t x = v.asInt();
    if (op == UnaryOp::Plus) return Value(x);
    if (x == INT64_MIN) overflow();
    return Value(-x);
  }
  if (v.isFloat()) return Value(op == UnaryOp::Plus ? v.asFloat() : -v.asFloat());
  throwRuntime(std::string("bad operand type for unary ") + (op == UnaryOp::Plus ? "+" : "-") +
               ": '" + v.typeName() + "'");
}

bool containsValue(const Value& container, const Value& item) {
  switch (container.kind()) {
    case Value::Kind::Undefined: return false;  // iterates as empty
    case Value::Kind::String:
      if (!item.isString())
        throwRuntime("'in <string>' requires string as left operand, not " + item.typeName());
      return container.asString().find(item.asString()) != std::string::npos;
    case Value::Kind::List:
      for (const Value& v : container.items())
        if (pyEquals(v, item)) return true;
      return false;
    case Value::Kind::Dict: return container.asDict().find(item) != nullptr;
    default:
      throwRuntime("argument of type '" + container.typeName() + "' is not iterable");
  }
}

}  // namespace ember::chat
