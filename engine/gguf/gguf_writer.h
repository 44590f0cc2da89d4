#pragma once
// Builds a valid GGUF (v2 or v3) image: typed metadata in insertion order, then the tensor
// table, padding to the alignment, and the tensor data, each tensor at an aligned offset.
// Used by tests and by tools that write small models.
#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "gguf/ggml_types.h"
#include "gguf/gguf_value.h"

namespace ember::gguf {

class GgufWriter {
 public:
  // Throws ember::Error unless version is 2 or 3.
  explicit GgufWriter(uint32_t version = 3);

  // Adds a metadata entry; throws ember::Error when the key is empty or already present.
  GgufWriter& add(std::string key, Value value);
  GgufWriter& addUInt8(std::string key, uint8_t v) {
    return add(std::move(key), Value::makeUInt8(v));
  }
  GgufWriter& addInt8(std::string key, int8_t v) { return add(std::move(key), Value::makeInt8(v)); }
  GgufWriter& addUInt16(std::string key, uint16_t v) {
    return add(std::move(key), Value::makeUInt16(v));
  }
  GgufWriter& addInt16(std::string key, int16_t v) {
    return add(std::move(key), Value::makeInt16(v));
  }
  GgufWriter& addUInt32(std::string key, uint32_t v) {
    return add(std::move(key), Value::makeUInt32(v));
  }
  GgufWriter& addInt32(std::string key, int32_t v) {
    return add(std::move(key), Value::makeInt32(v));
  }
  GgufWriter& addUInt64(std::string key, uint64_t v) {
    return add(std::move(key), Value::makeUInt64(v));
  }
  GgufWriter& addInt64(std::string key, int64_t v) {
    return add(std::move(key), Value::makeInt64(v));
  }
  GgufWriter& addFloat32(std::string key, float v) {
    return add(std::move(key), Value::makeFloat32(v));
  }
  GgufWriter& addFloat64(std::string key, double v) {
    return add(std::move(key), Value::makeFloat64(v));
  }
  GgufWriter& addBool(std::string key, bool v) { return add(std::move(key), Value::makeBool(v)); }
  GgufWriter& addString(std::string key, std::string v) {
    return add(std::move(key), Value::makeString(std::move(v)));
  }
  GgufWriter& addArray(std::string key, ValueType elementType, std::vector<Value> items) {
    return add(std::move(key), Value::makeArray(elementType, std::move(items)));
  }
  GgufWriter& addStringArray(std::string key, const std::vector<std::string>& items) {
    return add(std::move(key), Value::makeStringArray(items));
  }
  GgufWriter& addFloat32Array(std::string key, const std::vector<float>& items);
  GgufWriter& addInt32Array(std::string key, const std::vector<int32_t>& items);

  // Sets the data alignment and records it as general.alignment (uint32). Throws unless it is
  // a non-zero power of two, or when general.alignment was already added.
  GgufWriter& setAlignment(uint32_t alignment);

  // Adds a tensor; `shape` in ggml order (shape[0] contiguous). Throws ember::Error on a
  // duplicate or empty name, 0 or more than 4 dimensions, a zero dimension, a first dimension
  // that is not a multiple of the type's block size, or data of the wrong size.
  GgufWriter& addTensor(std::string name, GgmlType type, std::vector<uint64_t> shape,
                        std::span<const uint8_t> data);

  uint64_t alignment() const { return alignment_; }
  // The complete file image.
  std::vector<uint8_t> bytes() const;
  // Writes bytes() to `path`; throws ember::Error naming the file on failure.
  void writeFile(const std::filesystem::path& path) const;

 private:
  struct PendingTensor {
    std::string name;
    GgmlType type;
    std::vector<uint64_t> shape;
    std::vector<uint8_t> data;
  };

  uint32_t version_;
  uint64_t alignment_ = 32;
  std::vector<std::pair<std::string, Value>> metadata_;
  std::vector<PendingTensor> tensors_;
};

}  // namespace ember::gguf
