#include "gguf/gguf_encoder.h"

#include <cstring>

#include "ember/error.h"

namespace ember::gguf {

GgufEncoder& GgufEncoder::little(uint64_t v, unsigned width) {
  for (unsigned i = 0; i < width; ++i) bytes_.push_back(static_cast<uint8_t>(v >> (8 * i)));
  return *this;
}

GgufEncoder& GgufEncoder::f32(float v) {
  uint32_t bits = 0;
  std::memcpy(&bits, &v, sizeof(bits));
  return u32(bits);
}

GgufEncoder& GgufEncoder::f64(double v) {
  uint64_t bits = 0;
  std::memcpy(&bits, &v, sizeof(bits));
  return u64(bits);
}

GgufEncoder& GgufEncoder::raw(std::span<const uint8_t> bytes) {
  bytes_.insert(bytes_.end(), bytes.begin(), bytes.end());
  return *this;
}

GgufEncoder& GgufEncoder::raw(std::string_view bytes) {
  bytes_.insert(bytes_.end(), bytes.begin(), bytes.end());
  return *this;
}

GgufEncoder& GgufEncoder::string(std::string_view s) {
  return u64(s.size()).raw(s);
}

GgufEncoder& GgufEncoder::header(uint32_t version, uint64_t tensorCount, uint64_t metadataCount) {
  return raw(std::string_view("GGUF")).u32(version).u64(tensorCount).u64(metadataCount);
}

GgufEncoder& GgufEncoder::value(const Value& v) {
  switch (v.type) {
    case ValueType::UInt8: return u8(static_cast<uint8_t>(v.asUInt()));
    case ValueType::Int8: return u8(static_cast<uint8_t>(v.asInt()));
    case ValueType::UInt16: return u16(static_cast<uint16_t>(v.asUInt()));
    case ValueType::Int16: return u16(static_cast<uint16_t>(v.asInt()));
    case ValueType::UInt32: return u32(static_cast<uint32_t>(v.asUInt()));
    case ValueType::Int32: return u32(static_cast<uint32_t>(v.asInt()));
    case ValueType::UInt64: return u64(v.asUInt());
    case ValueType::Int64: return u64(static_cast<uint64_t>(v.asInt()));
    case ValueType::Float32: return f32(static_cast<float>(v.asFloat()));
    case ValueType::Float64: return f64(v.asFloat());
    case ValueType::Bool: return u8(v.asBool() ? 1 : 0);
    case ValueType::String: return string(v.asString());
    case ValueType::Array: {
      const Array& array = v.asArray();
      u32(static_cast<uint32_t>(array.elementType)).u64(array.size());
      for (size_t i = 0; i < array.size(); ++i) {
        const Value item = array.at(i);
        if (item.type != array.elementType)
          throw Error("cannot encode an array of " + std::string(valueTypeName(array.elementType)) +
                      " holding a " + std::string(valueTypeName(item.type)));
        value(item);
      }
      return *this;
    }
  }
  throw Error("cannot encode a value of unknown type " +
              std::to_string(static_cast<uint32_t>(v.type)));
}

GgufEncoder& GgufEncoder::keyValue(std::string_view key, const Value& v) {
  return string(key).u32(static_cast<uint32_t>(v.type)).value(v);
}

GgufEncoder& GgufEncoder::tensorInfo(std::string_view name, std::span<const uint64_t> shape,
                                     uint32_t typeId, uint64_t offset) {
  string(name).u32(static_cast<uint32_t>(shape.size()));
  for (uint64_t dim : shape) u64(dim);
  return u32(typeId).u64(offset);
}

GgufEncoder& GgufEncoder::padTo(uint64_t alignment, uint8_t fill) {
  if (alignment == 0) throw Error("cannot pad to an alignment of 0");
  while (bytes_.size() % alignment != 0) bytes_.push_back(fill);
  return *this;
}

}  // namespace ember::gguf
