#pragma once
// GPT-2's reversible byte <-> Unicode mapping used by byte-level BPE vocabularies: every byte
// becomes one printable code point (printable Latin-1 bytes stand for themselves, the others are
// shifted to U+0100 and up, so a space is stored as "Ġ" U+0120 and a newline as "Ċ" U+010A).
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace ember::byte_unicode {

// The UTF-8 text of the code point that stands for `byte`.
const std::string& encodeByte(uint8_t byte);

// Maps raw bytes to their byte-level text (each byte becomes one code point).
std::string encode(std::string_view bytes);

// The byte a code point stands for, or nullopt when it is not part of the mapping.
std::optional<uint8_t> decodeCodePoint(uint32_t codePoint);

// Maps byte-level text back to raw bytes; code points outside the mapping are copied as their
// UTF-8 text (so added tokens written in plain text survive).
std::string decode(std::string_view text);

}  // namespace ember::byte_unicode
