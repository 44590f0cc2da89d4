#pragma once
// Human-readable renderings of GGUF metadata values, type labels and shapes, for tools such as
// `ember-cli inspect` and for error messages.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "gguf/gguf_value.h"

namespace ember::gguf {

struct DescribeLimits {
  size_t maxItems = 8;          // arrays longer than this show their first items and the count
  size_t maxStringBytes = 120;  // longer strings are cut (on a UTF-8 boundary) and marked
};

// "uint32", "string", "array<string>", "array<array<int32>>" ...
std::string valueTypeLabel(const Value& value);
// `42`, `1.5`, `true`, `"text\n"` (quoted, escaped), `[1, 2, 3, ... (262144 items)]`.
std::string describeValue(const Value& value, const DescribeLimits& limits = {});
// Shortest decimal text that reads back to the same number: floats of Float32 values are
// printed as float (1e-05, not 9.99999974737875e-06).
std::string formatNumber(const Value& value);
// "[576, 49152]"
std::string formatShape(const std::vector<uint64_t>& shape);
// Cuts `text` to at most `maxBytes` bytes without splitting a UTF-8 sequence.
std::string truncateUtf8(const std::string& text, size_t maxBytes);

}  // namespace ember::gguf
