#include "gguf/byte_cursor.h"

#include "gguf/gguf_file.h"

namespace ember::gguf {

void ByteCursor::seek(uint64_t offset) {
  if (offset > bytes_.size())
    fail(position_, "cannot move to byte " + std::to_string(offset) +
                        " past the end of the file (" + std::to_string(bytes_.size()) + " bytes)");
  position_ = offset;
}

void ByteCursor::fail(uint64_t offset, const std::string& message) const {
  throw GgufError(file_, offset, message);
}

void ByteCursor::require(uint64_t length, std::string_view what) const {
  if (length <= remaining()) return;
  fail(position_, "file truncated: expected " + std::string(what) + " (" + std::to_string(length) +
                      " bytes) but only " + std::to_string(remaining()) + " bytes remain");
}

uint64_t ByteCursor::readLittleEndian(unsigned width, std::string_view what) {
  require(width, what);
  uint64_t value = 0;
  for (unsigned i = 0; i < width; ++i)
    value |= static_cast<uint64_t>(bytes_[position_ + i]) << (8 * i);
  position_ += width;
  return value;
}

uint8_t ByteCursor::u8(std::string_view what) {
  return static_cast<uint8_t>(readLittleEndian(1, what));
}
uint16_t ByteCursor::u16(std::string_view what) {
  return static_cast<uint16_t>(readLittleEndian(2, what));
}
uint32_t ByteCursor::u32(std::string_view what) {
  return static_cast<uint32_t>(readLittleEndian(4, what));
}
uint64_t ByteCursor::u64(std::string_view what) {
  return readLittleEndian(8, what);
}

std::string_view ByteCursor::bytes(uint64_t length, std::string_view what) {
  require(length, what);
  const auto* start = reinterpret_cast<const char*>(bytes_.data() + position_);
  position_ += length;
  return {start, static_cast<size_t>(length)};
}

std::string_view ByteCursor::string(std::string_view what) {
  const uint64_t lengthOffset = position_;
  // Build the longer field name only on failure: this runs once per vocabulary token.
  if (remaining() < 8) require(8, std::string(what) + " length");
  const uint64_t length = readLittleEndian(8, what);
  if (length > remaining())
    fail(lengthOffset, std::string(what) + " length " + std::to_string(length) +
                           " is larger than the rest of the file (expected at most " +
                           std::to_string(remaining()) + " bytes)");
  return bytes(length, what);
}

}  // namespace ember::gguf
