#include "chat/value_tests.h"

#include <cmath>

#include "chat/builtins.h"
#include "chat/filters.h"
#include "chat/interpreter.h"
#include "chat/operators.h"
#include "chat/template_error.h"
#include "chat/unicode_text.h"
#include "chat/value_format.h"

namespace ember::chat {
namespace {

using TestFunction = bool (*)(Interpreter&, const Value&, CallArgs&);

const Value& argument(CallArgs& args, std::string_view test, std::string_view name) {
  auto a = bindArguments(test, args, {name});
  if (!a[0]) throwRuntime(std::string(test) + "() missing required argument '" + std::string(name) + "'");
  args.positional = {*a[0]};
  args.keywords.clear();
  return args.positional[0];
}

bool noArguments(CallArgs& args, std::string_view test) {
  bindArguments(test, args, {});
  return true;
}

Value modulo(Interpreter& interp, const Value& v, const Value& by) {
  return binaryOperation(interp, BinaryOp::Modulo, v, by);
}

bool compareTest(Interpreter&, const Value& v, CallArgs& args, CompareOp op, std::string_view name) {
  const Value& other = argument(args, name, "other");
  switch (op) {
    case CompareOp::Equal: return pyEquals(v, other);
    case CompareOp::NotEqual: return !pyEquals(v, other);
    case CompareOp::Less: return pyCompare(v, other, "<") < 0;
    case CompareOp::LessEqual: return pyCompare(v, other, "<=") <= 0;
    case CompareOp::Greater: return pyCompare(v, other, ">") > 0;
    case CompareOp::GreaterEqual: return pyCompare(v, other, ">=") >= 0;
    default: return false;
  }
}

#define EMBER_TEST(body) [](Interpreter & interp, const Value& v, CallArgs& args) -> bool { \
  (void)interp; (void)v; (void)args; body }

struct TestEntry {
  std::string_view name;
  TestFunction function;
};

const TestEntry kTests[] = {
    {"defined", EMBER_TEST(noArguments(args, "defined"); return !v.isUndefined();)},
    {"undefined", EMBER_TEST(noArguments(args, "undefined"); return v.isUndefined();)},
    {"none", EMBER_TEST(noArguments(args, "none"); return v.isNone();)},
    {"boolean", EMBER_TEST(noArguments(args, "boolean"); return v.isBool();)},
    {"true", EMBER_TEST(noArguments(args, "true"); return v.isBool() && v.asBool();)},
    {"false", EMBER_TEST(noArguments(args, "false"); return v.isBool() && !v.asBool();)},
    {"integer", EMBER_TEST(noArguments(args, "integer"); return v.isInt();)},
    {"float", EMBER_TEST(noArguments(args, "float"); return v.isFloat();)},
    {"number", EMBER_TEST(noArguments(args, "number"); return v.isNumber();)},
    {"string", EMBER_TEST(noArguments(args, "string"); return v.isString();)},
    {"mapping", EMBER_TEST(noArguments(args, "mapping"); return v.isDict();)},
    // Python: len() and __getitem__ exist. Undefined has both; so does a dict.
    {"sequence", EMBER_TEST(noArguments(args, "sequence");
                            return v.isString() || v.isList() || v.isDict() || v.isUndefined();)},
    {"iterable", EMBER_TEST(noArguments(args, "iterable");
                            return v.isString() || v.isList() || v.isDict() || v.isUndefined() ||
                                   v.typeName() == "LoopContext";)},
    {"callable", EMBER_TEST(noArguments(args, "callable"); return v.isCallable();)},
    {"escaped", EMBER_TEST(noArguments(args, "escaped"); return false;)},
    {"lower", EMBER_TEST(noArguments(args, "lower"); const std::string s = toPyStr(v);
                         return text::lower(s) == s && text::upper(s) != s;)},
    {"upper", EMBER_TEST(noArguments(args, "upper"); const std::string s = toPyStr(v);
                         return text::upper(s) == s && text::lower(s) != s;)},
    {"odd", EMBER_TEST(noArguments(args, "odd"); return pyEquals(modulo(interp, v, Value(2)), Value(1));)},
    {"even", EMBER_TEST(noArguments(args, "even"); return pyEquals(modulo(interp, v, Value(2)), Value(0));)},
    {"divisibleby", EMBER_TEST(const Value& n = argument(args, "divisibleby", "num");
                               return pyEquals(modulo(interp, v, n), Value(0));)},
    {"sameas", EMBER_TEST(return v.sameAs(argument(args, "sameas", "other"));)},
    {"in", EMBER_TEST(return containsValue(argument(args, "in", "seq"), v);)},
    {"filter", EMBER_TEST(noArguments(args, "filter"); return v.isString() && isKnownFilter(v.asString());)},
    {"test", EMBER_TEST(noArguments(args, "test"); return v.isString() && isKnownTest(v.asString());)},
    {"eq", EMBER_TEST(return compareTest(interp, v, args, CompareOp::Equal, "eq");)},
    {"equalto", EMBER_TEST(return compareTest(interp, v, args, CompareOp::Equal, "equalto");)},
    {"==", EMBER_TEST(return compareTest(interp, v, args, CompareOp::Equal, "==");)},
    {"ne", EMBER_TEST(return compareTest(interp, v, args, CompareOp::NotEqual, "ne");)},
    {"!=", EMBER_TEST(return compareTest(interp, v, args, CompareOp::NotEqual, "!=");)},
    {"lt", EMBER_TEST(return compareTest(interp, v, args, CompareOp::Less, "lt");)},
    {"lessthan", EMBER_TEST(return compareTest(interp, v, args, CompareOp::Less, "lessthan");)},
    {"<", EMBER_TEST(return compareTest(interp, v, args, CompareOp::Less, "<");)},
    {"le", EMBER_TEST(return compareTest(interp, v, args, CompareOp::LessEqual, "le");)},
    {"<=", EMBER_TEST(return compareTest(interp, v, args, CompareOp::LessEqual, "<=");)},
    {"gt", EMBER_TEST(return compareTest(interp, v, args, CompareOp::Greater, "gt");)},
    {"greaterthan", EMBER_TEST(return compareTest(interp, v, args, CompareOp::Greater, "greaterthan");)},
    {">", EMBER_TEST(return compareTest(interp, v, args, CompareOp::Greater, ">");)},
    {"ge", EMBER_TEST(return compareTest(interp, v, args, CompareOp::GreaterEqual, "ge");)},
    {">=", EMBER_TEST(return compareTest(interp, v, args, CompareOp::GreaterEqual, ">=");)},
};

#undef EMBER_TEST

TestFunction findTest(std::string_view name) {
  for (const auto& entry : kTests)
    if (entry.name == name) return entry.function;
  return nullptr;
}

}  // namespace

bool isKnownTest(std::string_view name) { return findTest(name) != nullptr; }

bool callTest(Interpreter& interp, std::string_view name, const Value& input, CallArgs& args) {
  const TestFunction f = findTest(name);
  if (!f) throwUnsupported("No test named '" + std::string(name) + "' found.");
  return f(interp, input, args);
}

}  // namespace ember::chat
