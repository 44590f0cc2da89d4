#include "model/model_cutter.h"

#include <charconv>
#include <fstream>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include "common/checked_math.h"
#include "ember/error.h"
#include "gguf/gguf_encoder.h"
#include "gguf/gguf_file.h"

namespace ember::model {
namespace {

using gguf::Value;
using gguf::ValueType;

// `value` (an integer of any GGUF width) with `n` in place of its number, keeping its type.
Value sameTypeInteger(const Value& value, int64_t n) {
  Value v = value;
  if (std::holds_alternative<uint64_t>(v.data))
    v.data = uint64_t(n);
  else
    v.data = n;
  return v;
}

// The source's metadata for a file of `layers` blocks.
std::vector<std::pair<std::string, Value>> cutMetadata(const gguf::GgufFile& source,
                                                       const std::string& blockCountKey,
                                                       int64_t sourceLayers, int32_t layers) {
  const std::string archPrefix = source.architecture() + ".";
  std::vector<std::pair<std::string, Value>> metadata;
  metadata.reserve(source.metadata().size());
  for (const auto& [key, value] : source.metadata()) {
    if (key == blockCountKey) {
      metadata.emplace_back(key, sameTypeInteger(value, layers));
    } else if (key.starts_with(archPrefix) && value.type == ValueType::Array &&
               value.asArray().size() == size_t(sourceLayers)) {
      // One entry per layer: keep those of the kept layers.
      std::vector<Value> kept;
      for (size_t il = 0; il < size_t(layers); ++il) kept.push_back(value.asArray().at(il));
      metadata.emplace_back(key, Value::makeArray(value.asArray().elementType, std::move(kept)));
    } else {
      metadata.emplace_back(key, value);
    }
  }
  return metadata;
}

void writeOrThrow(std::ofstream& file, const uint8_t* data, uint64_t size,
                  const std::filesystem::path& path) {
  file.write(reinterpret_cast<const char*>(data), std::streamsize(size));
  if (!file) throw Error(path.string() + ": write failed (disk full?)");
}

}  // namespace

std::optional<int32_t> tensorBlockIndex(std::string_view name) {
  constexpr std::string_view kPrefix = "blk.";
  if (!name.starts_with(kPrefix)) return std::nullopt;
  const char* begin = name.data() + kPrefix.size();
  const char* end = name.data() + name.size();
  int32_t index = -1;
  const auto [ptr, ec] = std::from_chars(begin, end, index);
  if (ec != std::errc() || ptr == begin || ptr == end || *ptr != '.' || index < 0)
    return std::nullopt;
  return index;
}

CutSummary cutModelLayers(const gguf::GgufFile& source, int32_t layers,
                          const std::filesystem::path& out) {
  const std::string arch = source.architecture();
  if (arch.empty()) throw Error(source.path() + ": no general.architecture, cannot cut layers");
  const std::string blockCountKey = arch + ".block_count";
  const std::optional<int64_t> sourceLayers = source.findInt(blockCountKey);
  if (!sourceLayers || *sourceLayers < 1)
    throw Error(source.path() + ": no positive " + blockCountKey + ", cannot cut layers");
  if (layers < 1 || layers > *sourceLayers)
    throw Error("cannot keep " + std::to_string(layers) + " layers of " + source.path() +
                ": it has " + std::to_string(*sourceLayers) + " (expected 1 to " +
                std::to_string(*sourceLayers) + ")");
  std::error_code ec;
  if (std::filesystem::equivalent(source.path(), out, ec))
    throw Error("the output " + out.string() + " is the source file " + source.path());

  CutSummary summary;
  summary.sourceLayers = int32_t(*sourceLayers);
  summary.keptLayers = layers;
  std::vector<const gguf::TensorInfo*> kept;
  for (const gguf::TensorInfo& t : source.tensors()) {
    const std::optional<int32_t> block = tensorBlockIndex(t.name);
    if (block && *block >= *sourceLayers)
      throw Error(source.path() + ": tensor " + t.name + " is past the " +
                  std::to_string(*sourceLayers) + " blocks of " + blockCountKey);
    if (block && *block >= layers)
      ++summary.droppedTensors;
    else
      kept.push_back(&t);
  }
  summary.keptTensors = kept.size();

  // Same layout as the source: its alignment (general.alignment, when present, is copied with
  // the rest of the metadata) and its tensor order, each tensor at the next aligned offset.
  const uint64_t alignment = source.alignment();
  const auto metadata = cutMetadata(source, blockCountKey, *sourceLayers, layers);
  gguf::GgufEncoder header;
  header.header(source.version(), kept.size(), metadata.size());
  for (const auto& [key, value] : metadata) header.keyValue(key, value);
  uint64_t offset = 0;
  for (const gguf::TensorInfo* t : kept) {
    header.tensorInfo(t->name, t->shape, static_cast<uint32_t>(t->type), offset);
    offset = *alignUp(offset + t->byteSize, alignment);
  }
  header.padTo(alignment);

  std::ofstream file(out, std::ios::binary | std::ios::trunc);
  if (!file) throw Error(out.string() + ": cannot open for writing");
  writeOrThrow(file, header.bytes().data(), header.size(), out);
  const std::vector<uint8_t> zeros(alignment, 0);
  for (const gguf::TensorInfo* t : kept) {
    writeOrThrow(file, t->data.data(), t->data.size(), out);
    writeOrThrow(file, zeros.data(), *alignUp(t->data.size(), alignment) - t->data.size(), out);
  }
  file.close();
  if (!file) throw Error(out.string() + ": write failed");
  summary.fileBytes = header.size() + offset;
  return summary;
}

}  // namespace ember::model
