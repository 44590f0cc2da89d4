#pragma once
// Little-endian encoder for the pieces of a GGUF file. GgufWriter builds whole, valid files on
// it; tests use it directly to craft malformed files one field at a time, so it checks nothing
// beyond what it needs to encode (a Value's items must match its array element type).
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "gguf/gguf_value.h"

namespace ember::gguf {

class GgufEncoder {
 public:
  GgufEncoder& u8(uint8_t v) { return little(v, 1); }
  GgufEncoder& u16(uint16_t v) { return little(v, 2); }
  GgufEncoder& u32(uint32_t v) { return little(v, 4); }
  GgufEncoder& u64(uint64_t v) { return little(v, 8); }
  GgufEncoder& f32(float v);
  GgufEncoder& f64(double v);
  GgufEncoder& raw(std::span<const uint8_t> bytes);
  GgufEncoder& raw(std::string_view bytes);
  GgufEncoder& string(std::string_view s);  // u64 length, then the bytes

  // "GGUF", version, tensor count, metadata count (the 64-bit counts of versions 2 and 3).
  GgufEncoder& header(uint32_t version, uint64_t tensorCount, uint64_t metadataCount);
  // The encoded value alone: scalars as themselves, strings as string(), arrays as element type,
  // count and items. No leading type id.
  GgufEncoder& value(const Value& v);
  // A metadata entry: key, u32 value type, value.
  GgufEncoder& keyValue(std::string_view key, const Value& v);
  // A tensor info: name, u32 dimension count, the dimensions, u32 type id, u64 data offset.
  GgufEncoder& tensorInfo(std::string_view name, std::span<const uint64_t> shape, uint32_t typeId,
                          uint64_t offset);
  // Appends `fill` bytes until size() is a multiple of `alignment` (which must be non-zero).
  GgufEncoder& padTo(uint64_t alignment, uint8_t fill = 0);

  uint64_t size() const { return bytes_.size(); }
  const std::vector<uint8_t>& bytes() const { return bytes_; }
  std::vector<uint8_t> take() { return std::move(bytes_); }

 private:
  GgufEncoder& little(uint64_t v, unsigned width);
  std::vector<uint8_t> bytes_;
};

}  // namespace ember::gguf
