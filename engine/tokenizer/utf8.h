#pragma once
// UTF-8 helpers shared by the tokenizers and the detokenizer. Validation follows the Unicode
// standard's well-formed byte sequences (Table 3-7): no overlongs, no surrogates, nothing past
// U+10FFFF. Ill-formed input is replaced with U+FFFD one "maximal subpart" at a time, which is
// what Python's bytes.decode("utf-8", "replace") and the WHATWG decoder do.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace ember::utf8 {

inline constexpr std::string_view kReplacementCharacter = "\xEF\xBF\xBD";  // U+FFFD

// Length of the sequence announced by a lead byte (1-4), or 0 for a byte that can never start a
// well-formed sequence (continuation bytes, C0, C1, F5..FF).
size_t sequenceLength(uint8_t leadByte);

bool isValid(std::string_view bytes);

// Appends the UTF-8 encoding of a code point (U+FFFD for surrogates and values past U+10FFFF).
void appendCodePoint(std::string& out, uint32_t codePoint);

// Decodes the code point at `pos` of well-formed UTF-8 and advances `pos` past it. On an
// ill-formed sequence it returns U+FFFD and advances past the maximal subpart.
uint32_t nextCodePoint(std::string_view text, size_t& pos);

struct SanitizeResult {
  std::string text;     // well-formed UTF-8
  size_t consumed = 0;  // bytes of the input that `text` accounts for
};

// Copies well-formed sequences and replaces each maximal ill-formed subpart with U+FFFD. When
// `endOfInput` is false, a sequence that is cut off by the end of `bytes` but could still be
// completed by more bytes is left unconsumed instead of being replaced.
SanitizeResult sanitize(std::string_view bytes, bool endOfInput);

// sanitize(bytes, true).text
std::string toValid(std::string_view bytes);

}  // namespace ember::utf8
