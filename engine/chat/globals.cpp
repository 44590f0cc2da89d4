// Globals every template sees: Jinja2's range (capped like its sandbox), dict, namespace,
// cycler and joiner, and HF's raise_exception and strftime_now.
#include <ctime>

#include "chat/builtins.h"
#include "chat/interpreter.h"
#include "chat/template_error.h"
#include "chat/value_format.h"

namespace ember::chat {
namespace {

// Jinja2's sandbox refuses ranges longer than this (sandbox.MAX_RANGE).
constexpr int64_t kMaxRange = 100000;

int64_t integerArgument(const Value& v, std::string_view function) {
  if (v.isIntegral()) return v.asInt();
  if (v.isUndefined()) throwUndefined(v);
  throwRuntime("'" + v.typeName() + "' object cannot be interpreted as an integer (in " +
               std::string(function) + ")");
}

Value rangeFunction(Interpreter& interp, CallArgs& args) {
  if (!args.keywords.empty()) throwRuntime("range() takes no keyword arguments");
  const auto& p = args.positional;
  if (p.empty() || p.size() > 3)
    throwRuntime("range expected at most 3 arguments, got " + std::to_string(p.size()));
  int64_t start = 0, stop, step = 1;
  if (p.size() == 1) {
    stop = integerArgument(p[0], "range");
  } else {
    start = integerArgument(p[0], "range");
    stop = integerArgument(p[1], "range");
    if (p.size() == 3) step = integerArgument(p[2], "range");
  }
  if (step == 0) throwRuntime("range() arg 3 must not be zero");
  // Length computed in long double: start/stop can be anywhere in int64.
  long double span = step > 0 ? static_cast<long double>(stop) - start
                              : static_cast<long double>(start) - stop;
  const long double absStep = step > 0 ? step : -static_cast<long double>(step);
  const long double length = span <= 0 ? 0 : (span + absStep - 1) / absStep;
  if (length > kMaxRange)
    throwLimit("Range too big. The sandbox blocks ranges larger than MAX_RANGE (100000).");
  const auto n = static_cast<int64_t>(length);
  interp.checkListSize(static_cast<size_t>(n));
  std::vector<Value> items;
  items.reserve(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) items.emplace_back(start + i * step);
  return Value::makeList(std::move(items));
}

// dict(mapping or pairs, **kwargs), also the basis of namespace(...).
Dict buildDict(const CallArgs& args, std::string_view function) {
  Dict dict;
  if (args.positional.size() > 1)
    throwRuntime(std::string(function) + " expected at most 1 argument, got " +
                 std::to_string(args.positional.size()));
  if (!args.positional.empty()) {
    const Value& source = args.positional[0];
    if (source.isDict()) {
      dict = source.asDict();
    } else {
      for (const Value& pair : iterateValue(source)) {
        const auto items = iterateValue(pair);
        if (items.size() != 2)
          throwRuntime("dictionary update sequence element has length " +
                       std::to_string(items.size()) + "; 2 is required");
        dict.set(items[0], items[1]);
      }
    }
  }
  for (const auto& [name, value] : args.keywords) dict.set(Value(name), value);
  return dict;
}

Value namespaceFunction(Interpreter& interp, CallArgs& args) {
  auto ns = std::make_shared<Namespace>();
  interp.trackNamespace(ns);
  for (const auto& [key, value] : buildDict(args, "namespace").entries) {
    if (!key.isString()) throwRuntime("namespace() keywords must be strings");
    ns->setAttribute(key.asString(), value);
  }
  return Value(std::shared_ptr<Object>(std::move(ns)));
}

Value raiseException(Interpreter&, CallArgs& args) {
  auto bound = bindArguments("raise_exception", args, {"message"});
  if (!bound[0]) throwRuntime("raise_exception() missing 1 required positional argument: 'message'");
  throw TemplateError(TemplateErrorKind::Raised, toPyStr(*bound[0]));
}

Value strftimeNow(Interpreter& interp, CallArgs& args) {
  auto bound = bindArguments("strftime_now", args, {"format"});
  if (!bound[0] || !bound[0]->isString()) throwRuntime("strftime_now() needs a format string");
  // A naive Python datetime prints %z and %Z as empty and %f as microseconds.
  std::string format;
  const std::string& in = bound[0]->asString();
  for (size_t i = 0; i < in.size(); ++i) {
    if (in[i] == '%' && i + 1 < in.size()) {
      const char c = in[i + 1];
      if (c == 'z' || c == 'Z') {
        ++i;
        continue;
      }
      if (c == 'f') {
        format += "000000";
        ++i;
        continue;
      }
      format += in.substr(i, 2);
      ++i;
      continue;
    }
    format += in[i];
  }
  const std::tm tm = interp.now();
  std::string out(64 + format.size() * 4, '\0');
  const size_t n = format.empty() ? 0 : std::strftime(out.data(), out.size(), format.c_str(), &tm);
  if (n == 0 && !format.empty()) throwRuntime("strftime_now(): the formatted date is too long");
  out.resize(n);
  return Value(std::move(out));
}

// cycler(a, b, ...): .next() walks the items round-robin, .current peeks, .reset() restarts.
class Cycler : public Object {
 public:
  explicit Cycler(std::vector<Value> items) : state_(std::make_shared<State>()) {
    state_->items = std::move(items);
  }
  std::string typeName() const override { return "Cycler"; }
  std::optional<Value> attribute(std::string_view name) const override {
    auto state = state_;  // the functions below keep the state alive on their own
    if (name == "current") return state->items[state->position];
    if (name == "next")
      return makeFunction("next", [state](Interpreter&, CallArgs&) {
        Value v = state->items[state->position];
        state->position = (state->position + 1) % state->items.size();
        return v;
      });
    if (name == "reset")
      return makeFunction("reset", [state](Interpreter&, CallArgs&) {
        state->position = 0;
        return Value(nullptr);
      });
    return std::nullopt;
  }

 private:
  struct State {
    std::vector<Value> items;
    size_t position = 0;
  };
  std::shared_ptr<State> state_;
};

Value cyclerFunction(Interpreter&, CallArgs& args) {
  if (args.positional.empty()) throwRuntime("at least one item has to be provided");
  return Value(std::shared_ptr<Object>(std::make_shared<Cycler>(args.positional)));
}

Value joinerFunction(Interpreter&, CallArgs& args) {
  auto bound = bindArguments("joiner", args, {"sep"});
  const std::string separator = bound[0] ? toPyStr(*bound[0]) : ", ";
  auto used = std::make_shared<bool>(false);
  return makeFunction("joiner", [separator, used](Interpreter&, CallArgs&) {
    if (!*used) {
      *used = true;
      return Value("");
    }
    return Value(separator);
  });
}

}  // namespace

std::vector<std::pair<std::string, Value>> makeGlobals() {
  return {
      {"range", makeFunction("range", rangeFunction)},
      {"dict", makeFunction("dict", [](Interpreter&, CallArgs& a) {
         return Value(buildDict(a, "dict"));
       })},
      {"namespace", makeFunction("namespace", namespaceFunction)},
      {"cycler", makeFunction("cycler", cyclerFunction)},
      {"joiner", makeFunction("joiner", joinerFunction)},
      {"raise_exception", makeFunction("raise_exception", raiseException)},
      {"strftime_now", makeFunction("strftime_now", strftimeNow)},
  };
}

}  // namespace ember::chat
