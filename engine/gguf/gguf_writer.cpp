#include "gguf/gguf_writer.h"

#include <algorithm>
#include <fstream>

#include "common/checked_math.h"
#include "ember/error.h"
#include "gguf/gguf_encoder.h"

namespace ember::gguf {

GgufWriter::GgufWriter(uint32_t version) : version_(version) {
  if (version != 2 && version != 3)
    throw Error("GgufWriter: version " + std::to_string(version) + " (expected 2 or 3)");
}

GgufWriter& GgufWriter::add(std::string key, Value value) {
  if (key.empty()) throw Error("GgufWriter: empty metadata key");
  const bool present = std::any_of(metadata_.begin(), metadata_.end(),
                                   [&](const auto& entry) { return entry.first == key; });
  if (present) throw Error("GgufWriter: duplicate metadata key '" + key + "'");
  if (key == "general.alignment") {
    if (value.type != ValueType::UInt32 || !isPowerOfTwo(value.asUInt()))
      throw Error("GgufWriter: general.alignment must be a uint32 power of two");
    alignment_ = value.asUInt();
  }
  metadata_.emplace_back(std::move(key), std::move(value));
  return *this;
}

GgufWriter& GgufWriter::addFloat32Array(std::string key, const std::vector<float>& items) {
  std::vector<Value> values;
  values.reserve(items.size());
  for (float item : items) values.push_back(Value::makeFloat32(item));
  return addArray(std::move(key), ValueType::Float32, std::move(values));
}

GgufWriter& GgufWriter::addInt32Array(std::string key, const std::vector<int32_t>& items) {
  std::vector<Value> values;
  values.reserve(items.size());
  for (int32_t item : items) values.push_back(Value::makeInt32(item));
  return addArray(std::move(key), ValueType::Int32, std::move(values));
}

GgufWriter& GgufWriter::setAlignment(uint32_t alignment) {
  return add("general.alignment", Value::makeUInt32(alignment));
}

GgufWriter& GgufWriter::addTensor(std::string name, GgmlType type, std::vector<uint64_t> shape,
                                  std::span<const uint8_t> data) {
  const std::string label = "GgufWriter: tensor '" + name + "'";
  if (name.empty()) throw Error("GgufWriter: empty tensor name");
  if (std::any_of(tensors_.begin(), tensors_.end(), [&](const auto& t) { return t.name == name; }))
    throw Error("GgufWriter: duplicate tensor name '" + name + "'");
  const auto traits = ggmlTypeTraits(static_cast<uint32_t>(type));
  if (!traits) throw Error(label + " has an unknown type");
  if (shape.empty() || shape.size() > 4) throw Error(label + " needs 1 to 4 dimensions");
  uint64_t elements = 1;
  for (uint64_t dim : shape) {
    const auto product = checkedMul(elements, dim);
    if (dim == 0 || !product) throw Error(label + " has a zero or overflowing dimension");
    elements = *product;
  }
  if (shape[0] % traits->blockSize != 0)
    throw Error(label + ": first dimension is not a multiple of the block size " +
                std::to_string(traits->blockSize));
  const uint64_t expected = elements / traits->blockSize * traits->typeSize;
  if (data.size() != expected)
    throw Error(label + " has " + std::to_string(data.size()) + " bytes of data (expected " +
                std::to_string(expected) + ")");
  tensors_.push_back({std::move(name), type, std::move(shape), {data.begin(), data.end()}});
  return *this;
}

std::vector<uint8_t> GgufWriter::bytes() const {
  GgufEncoder out;
  out.header(version_, tensors_.size(), metadata_.size());
  for (const auto& [key, value] : metadata_) out.keyValue(key, value);
  // Offsets are relative to the data section; each tensor starts at an aligned offset.
  uint64_t offset = 0;
  std::vector<uint64_t> offsets;
  for (const PendingTensor& t : tensors_) {
    offsets.push_back(offset);
    out.tensorInfo(t.name, t.shape, static_cast<uint32_t>(t.type), offset);
    offset = *alignUp(offset + t.data.size(), alignment_);
  }
  if (!tensors_.empty()) out.padTo(alignment_);
  const uint64_t dataStart = out.size();
  for (size_t i = 0; i < tensors_.size(); ++i) {
    while (out.size() < dataStart + offsets[i]) out.u8(0);
    out.raw(tensors_[i].data);
  }
  // Like other GGUF writers, pad the last tensor too, so the file ends on an aligned size.
  if (!tensors_.empty()) out.padTo(alignment_);
  return out.take();
}

void GgufWriter::writeFile(const std::filesystem::path& path) const {
  const std::vector<uint8_t> image = bytes();
  std::ofstream file(path, std::ios::binary | std::ios::trunc);
  if (!file) throw Error(path.string() + ": cannot open for writing");
  file.write(reinterpret_cast<const char*>(image.data()),
             static_cast<std::streamsize>(image.size()));
  file.close();
  if (!file) throw Error(path.string() + ": write failed");
}

}  // namespace ember::gguf
