#pragma once
// Parses the GGUF metadata section (key/value pairs) from a ByteCursor. Internal to the reader.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "gguf/byte_cursor.h"
#include "gguf/gguf_value.h"

namespace ember::gguf {

struct ParsedMetadata {
  std::vector<std::pair<std::string, Value>> entries;
  std::vector<uint64_t> valueOffsets;  // absolute offset of each entry's value, for errors
  uint64_t alignment = 32;             // general.alignment, validated
};

// Deepest array nesting accepted (an array of arrays is depth 2); hostile files cannot recurse
// the parser off the stack.
inline constexpr unsigned kMaxArrayNesting = 8;
// Smallest possible key/value entry: u64 key length, a 1-byte key, u32 type, a 1-byte value.
inline constexpr uint64_t kMinMetadataEntryBytes = 8 + 1 + 4 + 1;
// Longest key the GGUF specification allows.
inline constexpr uint64_t kMaxKeyBytes = 65535;

// Arrays of numbers or strings with at least this many items are kept packed (Array::packed).
inline constexpr uint64_t kPackedArrayItems = 1024;

// Reads `count` entries starting at the cursor; the count must already be bounded by the caller.
ParsedMetadata parseMetadata(ByteCursor& cursor, uint64_t count);

}  // namespace ember::gguf
