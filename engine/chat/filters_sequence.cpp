// Filters on sequences and mappings: join, map, select/reject(attr), sort, dictsort, ...
#include <algorithm>

#include "chat/builtins.h"
#include "chat/filters.h"
#include "chat/interpreter.h"
#include "chat/operators.h"
#include "chat/template_error.h"
#include "chat/unicode_text.h"
#include "chat/value_format.h"

namespace ember::chat {
namespace {

using Args = std::vector<std::optional<Value>>;

// Jinja's make_attrgetter: "a.b.0" walks items (integers for digit parts).
std::vector<Value> attributePath(const Value& attribute) {
  if (!attribute.isString()) return {attribute};
  std::vector<Value> parts;
  const std::string& s = attribute.asString();
  size_t start = 0;
  for (;;) {
    const size_t dot = s.find('.', start);
    const std::string part = s.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    const bool digits = !part.empty() && std::all_of(part.begin(), part.end(), ::isdigit);
    parts.push_back(digits ? Value(static_cast<int64_t>(std::stoll(part))) : Value(part));
    if (dot == std::string::npos) return parts;
    start = dot + 1;
  }
}

Value lookupPath(Interpreter& interp, Value item, const std::vector<Value>& path,
                 const std::optional<Value>& fallback = std::nullopt) {
  for (const Value& part : path) {
    item = interp.getItem(item, part);
    if (fallback && !fallback->isNone() && item.isUndefined()) item = *fallback;
  }
  return item;
}

Value ignoreCase(const Value& v) { return v.isString() ? Value(text::lower(v.asString())) : v; }

// Jinja runs these filters only `if value:`; an undefined or empty input gives nothing.
std::vector<Value> itemsIfTruthy(const Value& v) {
  return v.truthy() ? iterateValue(v) : std::vector<Value>{};
}

Value lengthFilter(Interpreter&, const Value& in, CallArgs& args) {
  bindArguments("length", args, {});
  switch (in.kind()) {
    case Value::Kind::Undefined: return Value(0);
    case Value::Kind::String: return Value(static_cast<int64_t>(text::codePointCount(in.asString())));
    case Value::Kind::List: return Value(static_cast<int64_t>(in.items().size()));
    case Value::Kind::Dict: return Value(static_cast<int64_t>(in.asDict().entries.size()));
    case Value::Kind::Object:
      if (auto length = in.asObject()->attribute("length"); length && in.typeName() == "LoopContext")
        return *length;
      [[fallthrough]];
    default: throwRuntime("object of type '" + in.typeName() + "' has no len()");
  }
}

Value joinFilter(Interpreter& interp, const Value& in, CallArgs& args) {
  Args a = bindArguments("join", args, {"d", "attribute"});
  const std::string separator = a[0] ? toPyStr(*a[0]) : "";
  std::string out;
  bool first = true;
  for (Value item : iterateValue(in)) {
    if (a[1] && !a[1]->isNone()) item = lookupPath(interp, item, attributePath(*a[1]));
    if (!first) out += separator;
    first = false;
    out += toPyStr(item);
    interp.checkStringSize(out.size());
  }
  return Value(std::move(out));
}

Value firstFilter(Interpreter&, const Value& in, CallArgs& args) {
  bindArguments("first", args, {});
  const auto items = iterateValue(in);
  if (items.empty()) return Value::undefined("No first item, sequence was empty.");
  return items.front();
}

Value lastFilter(Interpreter&, const Value& in, CallArgs& args) {
  bindArguments("last", args, {});
  const auto items = iterateValue(in);
  if (items.empty()) return Value::undefined("No last item, sequence was empty.");
  return items.back();
}

Value listFilter(Interpreter&, const Value& in, CallArgs& args) {
  bindArguments("list", args, {});
  return Value::makeList(iterateValue(in));
}

Value itemsFilter(Interpreter&, const Value& in, CallArgs& args) {
  bindArguments("items", args, {});
  if (in.isUndefined()) return Value::makeList({});
  if (!in.isDict()) throwRuntime("Can only get item pairs from a mapping.");
  std::vector<Value> pairs;
  for (const auto& [k, v] : in.asDict().entries) pairs.push_back(Value::makeTuple({k, v}));
  return Value::makeList(std::move(pairs));
}

// Python's sorted(items, key=key, reverse=reverse): stable in both directions.
void sortByKey(std::vector<Value>& items, std::vector<Value> keys, bool reverse) {
  std::vector<size_t> order(items.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t x, size_t y) {
    return reverse ? pyCompare(keys[y], keys[x]) < 0 : pyCompare(keys[x], keys[y]) < 0;
  });
  std::vector<Value> sorted;
  sorted.reserve(items.size());
  for (size_t i : order) sorted.push_back(std::move(items[i]));
  items = std::move(sorted);
}

Value dictsortFilter(Interpreter&, const Value& in, CallArgs& args) {
  Args a = bindArguments("dictsort", args, {"case_sensitive", "by", "reverse"});
  if (!in.isDict()) throwRuntime("dictsort expects a mapping, got " + in.typeName());
  const bool caseSensitive = a[0] && a[0]->truthy();
  const std::string by = a[1] ? toPyStr(*a[1]) : "key";
  if (by != "key" && by != "value") throwRuntime("You can only sort by either \"key\" or \"value\"");
  std::vector<Value> pairs, keys;
  for (const auto& [k, v] : in.asDict().entries) {
    pairs.push_back(Value::makeTuple({k, v}));
    const Value& key = by == "key" ? k : v;
    keys.push_back(caseSensitive ? key : ignoreCase(key));
  }
  sortByKey(pairs, std::move(keys), a[2] && a[2]->truthy());
  return Value::makeList(std::move(pairs));
}

// Jinja's make_multi_attrgetter: "a,b" sorts by a tuple of attributes.
Value sortKey(Interpreter& interp, const Value& item, const std::optional<Value>& attribute,
              bool caseSensitive) {
  if (!attribute || attribute->isNone()) return caseSensitive ? item : ignoreCase(item);
  std::vector<Value> fields;
  std::vector<std::string> names{toPyStr(*attribute)};
  if (attribute->isString()) {
    names.clear();
    const std::string& s = attribute->asString();
    for (size_t start = 0;;) {
      const size_t comma = s.find(',', start);
      names.push_back(s.substr(start, comma == std::string::npos ? comma : comma - start));
      if (comma == std::string::npos) break;
      start = comma + 1;
    }
  }
  for (const auto& name : names) {
    Value field = lookupPath(interp, item, attributePath(attribute->isString() ? Value(name) : *attribute));
    fields.push_back(caseSensitive ? field : ignoreCase(field));
  }
  return Value::makeList(std::move(fields));
}

Value sortFilter(Interpreter& interp, const Value& in, CallArgs& args) {
  Args a = bindArguments("sort", args, {"reverse", "case_sensitive", "attribute"});
  std::vector<Value> items = iterateValue(in), keys;
  for (const Value& item : items) keys.push_back(sortKey(interp, item, a[2], a[1] && a[1]->truthy()));
  sortByKey(items, std::move(keys), a[0] && a[0]->truthy());
  return Value::makeList(std::move(items));
}

Value uniqueFilter(Interpreter& interp, const Value& in, CallArgs& args) {
  Args a = bindArguments("unique", args, {"case_sensitive", "attribute"});
  std::vector<Value> out, seen;
  for (const Value& item : iterateValue(in)) {
    Value key = a[1] && !a[1]->isNone() ? lookupPath(interp, item, attributePath(*a[1])) : item;
    if (!(a[0] && a[0]->truthy())) key = ignoreCase(key);
    if (std::any_of(seen.begin(), seen.end(), [&](const Value& s) { return pyEquals(s, key); }))
      continue;
    seen.push_back(key);
    out.push_back(item);
  }
  return Value::makeList(std::move(out));
}

Value reverseFilter(Interpreter&, const Value& in, CallArgs& args) {
  bindArguments("reverse", args, {});
  if (in.isString()) {
    std::u32string s = text::decode(in.asString());
    std::reverse(s.begin(), s.end());
    return Value(text::encode(s));
  }
  std::vector<Value> items = iterateValue(in);
  std::reverse(items.begin(), items.end());
  return Value::makeList(std::move(items));
}

Value mapFilter(Interpreter& interp, const Value& in, CallArgs& args) {
  std::vector<Value> out;
  if (args.positional.empty()) {
    std::optional<Value> attribute, fallback;
    for (const auto& [name, value] : args.keywords) {
      if (name == "attribute") attribute = value;
      else if (name == "default") fallback = value;
      else throwRuntime("Unexpected keyword argument '" + name + "'");
    }
    if (!attribute) throwRuntime("map() requires a filter name or attribute=");
    const auto path = attributePath(*attribute);
    for (const Value& item : itemsIfTruthy(in)) out.push_back(lookupPath(interp, item, path, fallback));
    return Value::makeList(std::move(out));
  }
  const std::string filter = toPyStr(args.positional[0]);
  CallArgs rest{{args.positional.begin() + 1, args.positional.end()}, args.keywords};
  for (const Value& item : itemsIfTruthy(in)) out.push_back(interp.applyFilter(filter, item, rest));
  return Value::makeList(std::move(out));
}

// select / reject / selectattr / rejectattr.
Value selectOrReject(Interpreter& interp, const Value& in, CallArgs& args, bool keep, bool byAttribute) {
  size_t offset = 0;
  std::vector<Value> path;
  if (byAttribute) {
    if (args.positional.empty()) throwRuntime("Missing parameter for attribute name");
    path = attributePath(args.positional[0]);
    offset = 1;
  }
  std::optional<std::string> test;
  CallArgs testArgs{{}, args.keywords};
  if (args.positional.size() > offset) {
    test = toPyStr(args.positional[offset]);
    testArgs.positional.assign(args.positional.begin() + static_cast<long>(offset) + 1, args.positional.end());
  }
  std::vector<Value> out;
  for (const Value& item : itemsIfTruthy(in)) {
    const Value subject = byAttribute ? lookupPath(interp, item, path) : item;
    const bool passed = test ? interp.applyTest(*test, subject, testArgs) : subject.truthy();
    if (passed == keep) out.push_back(item);
  }
  return Value::makeList(std::move(out));
}

Value selectFilter(Interpreter& i, const Value& in, CallArgs& a) { return selectOrReject(i, in, a, true, false); }
Value rejectFilter(Interpreter& i, const Value& in, CallArgs& a) { return selectOrReject(i, in, a, false, false); }
Value selectattrFilter(Interpreter& i, const Value& in, CallArgs& a) { return selectOrReject(i, in, a, true, true); }
Value rejectattrFilter(Interpreter& i, const Value& in, CallArgs& a) { return selectOrReject(i, in, a, false, true); }

Value sumFilter(Interpreter& interp, const Value& in, CallArgs& args) {
  Args a = bindArguments("sum", args, {"attribute", "start"});
  Value total = a[1] ? *a[1] : Value(0);
  for (const Value& item : iterateValue(in)) {
    const Value v = a[0] && !a[0]->isNone() ? lookupPath(interp, item, attributePath(*a[0])) : item;
    total = binaryOperation(interp, BinaryOp::Add, total, v);
  }
  return total;
}

Value minOrMax(Interpreter& interp, const Value& in, CallArgs& args, bool wantMax) {
  Args a = bindArguments(wantMax ? "max" : "min", args, {"case_sensitive", "attribute"});
  const std::vector<Value> items = iterateValue(in);
  if (items.empty()) return Value::undefined("No aggregated item, sequence was empty.");
  auto key = [&](const Value& item) {
    Value k = a[1] && !a[1]->isNone() ? lookupPath(interp, item, attributePath(*a[1])) : item;
    return a[0] && a[0]->truthy() ? k : ignoreCase(k);
  };
  size_t best = 0;
  Value bestKey = key(items[0]);
  for (size_t i = 1; i < items.size(); ++i) {
    Value k = key(items[i]);
    const int c = pyCompare(k, bestKey);
    if (wantMax ? c > 0 : c < 0) {
      best = i;
      bestKey = std::move(k);
    }
  }
  return items[best];
}

Value minFilter(Interpreter& i, const Value& in, CallArgs& a) { return minOrMax(i, in, a, false); }
Value maxFilter(Interpreter& i, const Value& in, CallArgs& a) { return minOrMax(i, in, a, true); }

const FilterEntry kSequenceFilters[] = {
    {"length", lengthFilter},   {"count", lengthFilter},       {"join", joinFilter},
    {"first", firstFilter},     {"last", lastFilter},          {"list", listFilter},
    {"items", itemsFilter},     {"dictsort", dictsortFilter},  {"sort", sortFilter},
    {"unique", uniqueFilter},   {"reverse", reverseFilter},    {"map", mapFilter},
    {"select", selectFilter},   {"reject", rejectFilter},      {"selectattr", selectattrFilter},
    {"rejectattr", rejectattrFilter}, {"sum", sumFilter},      {"min", minFilter},
    {"max", maxFilter},
};

}  // namespace

std::span<const FilterEntry> sequenceFilters() { return kSequenceFilters; }

}  // namespace ember::chat
