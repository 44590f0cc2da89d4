#include "tokenizer/byte_unicode.h"

#include <array>

#include "tokenizer/utf8.h"

namespace ember::byte_unicode {
namespace {

// Bytes that GPT-2 keeps as their own Latin-1 code point: '!'..'~', U+00A1..U+00AC and
// U+00AE..U+00FF. The remaining 68 bytes, in increasing order, take U+0100, U+0101, ...
bool standsForItself(int byte) {
  return (byte >= 0x21 && byte <= 0x7E) || (byte >= 0xA1 && byte <= 0xAC) ||
         (byte >= 0xAE && byte <= 0xFF);
}

struct Tables {
  std::array<uint32_t, 256> codePointOfByte{};
  std::array<std::string, 256> textOfByte;
  std::array<int16_t, 512> byteOfCodePoint{};  // every mapped code point is below U+0144

  Tables() {
    byteOfCodePoint.fill(-1);
    uint32_t nextShifted = 0x100;
    for (int b = 0; b < 256; ++b) {
      const uint32_t cp = standsForItself(b) ? static_cast<uint32_t>(b) : nextShifted++;
      codePointOfByte[b] = cp;
      utf8::appendCodePoint(textOfByte[b], cp);
      byteOfCodePoint[cp] = static_cast<int16_t>(b);
    }
  }
};

const Tables& tables() {
  static const Tables instance;
  return instance;
}

}  // namespace

const std::string& encodeByte(uint8_t byte) { return tables().textOfByte[byte]; }

std::string encode(std::string_view bytes) {
  std::string out;
  out.reserve(bytes.size() * 2);
  for (char c : bytes) out += encodeByte(static_cast<uint8_t>(c));
  return out;
}

std::optional<uint8_t> decodeCodePoint(uint32_t codePoint) {
  if (codePoint >= tables().byteOfCodePoint.size()) return std::nullopt;
  const int16_t b = tables().byteOfCodePoint[codePoint];
  if (b < 0) return std::nullopt;
  return static_cast<uint8_t>(b);
}

std::string decode(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  size_t pos = 0;
  while (pos < text.size()) {
    const size_t start = pos;
    const uint32_t cp = utf8::nextCodePoint(text, pos);
    if (auto b = decodeCodePoint(cp)) {
      out += static_cast<char>(*b);
    } else {
      out.append(text.substr(start, pos - start));
    }
  }
  return out;
}

}  // namespace ember::byte_unicode
