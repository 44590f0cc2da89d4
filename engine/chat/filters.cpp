#include "chat/filters.h"

#include "chat/template_error.h"

namespace ember::chat {
namespace {

FilterFunction findFilter(std::string_view name) {
  for (auto table : {textFilters(), sequenceFilters()})
    for (const auto& entry : table)
      if (entry.name == name) return entry.function;
  return nullptr;
}

}  // namespace

bool isKnownFilter(std::string_view name) { return findFilter(name) != nullptr; }

Value callFilter(Interpreter& interp, std::string_view name, const Value& input, CallArgs& args) {
  const FilterFunction f = findFilter(name);
  if (!f) throwUnsupported("No filter named '" + std::string(name) + "'.");
  return f(interp, input, args);
}

}  // namespace ember::chat
