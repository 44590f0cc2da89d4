#include "tokenizer/utf8.h"

namespace ember::utf8 {
namespace {

enum class Scan { Complete, IllFormed, Truncated };

struct ScanResult {
  Scan kind;
  size_t length;  // Complete: the sequence; IllFormed: the maximal subpart; Truncated: bytes seen
};

// The allowed range of the second byte depends on the lead byte (Unicode Table 3-7); later
// continuation bytes are always 80..BF.
void secondByteRange(uint8_t lead, uint8_t& low, uint8_t& high) {
  low = 0x80;
  high = 0xBF;
  if (lead == 0xE0) low = 0xA0;         // no overlong 3-byte forms
  else if (lead == 0xED) high = 0x9F;   // no surrogates
  else if (lead == 0xF0) low = 0x90;    // no overlong 4-byte forms
  else if (lead == 0xF4) high = 0x8F;   // nothing past U+10FFFF
}

ScanResult scan(std::string_view bytes, size_t pos) {
  const auto lead = static_cast<uint8_t>(bytes[pos]);
  const size_t need = sequenceLength(lead);
  if (need == 0) return {Scan::IllFormed, 1};
  if (need == 1) return {Scan::Complete, 1};
  size_t have = 1;
  while (have < need) {
    if (pos + have >= bytes.size()) return {Scan::Truncated, have};
    const auto byte = static_cast<uint8_t>(bytes[pos + have]);
    uint8_t low = 0x80, high = 0xBF;
    if (have == 1) secondByteRange(lead, low, high);
    if (byte < low || byte > high) return {Scan::IllFormed, have};
    ++have;
  }
  return {Scan::Complete, need};
}

}  // namespace

size_t sequenceLength(uint8_t leadByte) {
  if (leadByte < 0x80) return 1;
  if (leadByte < 0xC2) return 0;  // continuation bytes and the overlong leads C0, C1
  if (leadByte < 0xE0) return 2;
  if (leadByte < 0xF0) return 3;
  if (leadByte < 0xF5) return 4;
  return 0;
}

bool isValid(std::string_view bytes) {
  size_t pos = 0;
  while (pos < bytes.size()) {
    const ScanResult r = scan(bytes, pos);
    if (r.kind != Scan::Complete) return false;
    pos += r.length;
  }
  return true;
}

void appendCodePoint(std::string& out, uint32_t cp) {
  if ((cp >= 0xD800 && cp <= 0xDFFF) || cp > 0x10FFFF) {
    out += kReplacementCharacter;
  } else if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

uint32_t nextCodePoint(std::string_view text, size_t& pos) {
  const ScanResult r = scan(text, pos);
  if (r.kind != Scan::Complete) {
    pos += r.length;
    return 0xFFFD;
  }
  const auto byteAt = [&](size_t i) { return static_cast<uint32_t>(static_cast<uint8_t>(text[pos + i])); };
  uint32_t cp = 0;
  switch (r.length) {
    case 1: cp = byteAt(0); break;
    case 2: cp = ((byteAt(0) & 0x1F) << 6) | (byteAt(1) & 0x3F); break;
    case 3: cp = ((byteAt(0) & 0x0F) << 12) | ((byteAt(1) & 0x3F) << 6) | (byteAt(2) & 0x3F); break;
    default:
      cp = ((byteAt(0) & 0x07) << 18) | ((byteAt(1) & 0x3F) << 12) | ((byteAt(2) & 0x3F) << 6) |
           (byteAt(3) & 0x3F);
  }
  pos += r.length;
  return cp;
}

SanitizeResult sanitize(std::string_view bytes, bool endOfInput) {
  SanitizeResult result;
  result.text.reserve(bytes.size());
  size_t pos = 0;
  while (pos < bytes.size()) {
    const ScanResult r = scan(bytes, pos);
    if (r.kind == Scan::Complete) {
      result.text.append(bytes.substr(pos, r.length));
    } else if (r.kind == Scan::IllFormed || endOfInput) {
      result.text += kReplacementCharacter;
    } else {
      break;  // truncated: more bytes may still complete it
    }
    pos += r.length;
  }
  result.consumed = pos;
  return result;
}

std::string toValid(std::string_view bytes) { return sanitize(bytes, true).text; }

}  // namespace ember::utf8
