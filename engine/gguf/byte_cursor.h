#pragma once
// A bounded little-endian reader over a GGUF image. Every read checks the remaining length first
// (without overflowing) and failures throw GgufError naming the file, the byte offset and what
// the reader expected there. Internal to the GGUF reader.
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <utility>

namespace ember::gguf {

class ByteCursor {
 public:
  ByteCursor(std::span<const uint8_t> bytes, std::string file)
      : bytes_(bytes), file_(std::move(file)) {}

  uint64_t position() const { return position_; }
  uint64_t size() const { return bytes_.size(); }
  uint64_t remaining() const { return bytes_.size() - position_; }
  const std::string& file() const { return file_; }
  // Moves to an absolute offset (at most size(), so that remaining() stays meaningful).
  void seek(uint64_t offset);

  // `what` names the field for the error message, e.g. "the tensor count".
  uint8_t u8(std::string_view what);
  uint16_t u16(std::string_view what);
  uint32_t u32(std::string_view what);
  uint64_t u64(std::string_view what);
  // A view of the next `length` bytes.
  std::string_view bytes(uint64_t length, std::string_view what);
  // A GGUF string: u64 byte length, then the bytes (not NUL-terminated).
  std::string_view string(std::string_view what);

  [[noreturn]] void fail(uint64_t offset, const std::string& message) const;

 private:
  // Throws a truncation error unless `length` more bytes are available.
  void require(uint64_t length, std::string_view what) const;
  uint64_t readLittleEndian(unsigned width, std::string_view what);

  std::span<const uint8_t> bytes_;
  std::string file_;
  uint64_t position_ = 0;
};

}  // namespace ember::gguf
