#pragma once
// Jinja2's built-in filters (the ones chat templates use, and the common rest), with HF's
// tojson (json.dumps with ensure_ascii=False). Filter names are checked when a template is
// parsed, so an unknown filter is reported with its position before anything renders.
#include <span>
#include <string_view>

#include "chat/value.h"

namespace ember::chat {

bool isKnownFilter(std::string_view name);
Value callFilter(Interpreter& interp, std::string_view name, const Value& input, CallArgs& args);

// The filter tables, split by theme across files.
using FilterFunction = Value (*)(Interpreter&, const Value& input, CallArgs& args);
struct FilterEntry {
  std::string_view name;
  FilterFunction function;
};
std::span<const FilterEntry> textFilters();      // filters_text.cpp
std::span<const FilterEntry> sequenceFilters();  // filters_sequence.cpp

}  // namespace ember::chat
