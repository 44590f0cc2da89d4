#include "model/metadata_keys.h"

#include "gguf/gguf_file.h"
#include "model/model_config.h"

namespace ember::model {

MetadataKeys::MetadataKeys(const gguf::GgufFile& file, std::string architecture)
    : file_(file), architecture_(std::move(architecture)) {}

void MetadataKeys::fail(const std::string& message) const {
  throw ModelConfigError(file_.path() + ": " + message);
}

std::optional<int64_t> MetadataKeys::optionalInt(const std::string& suffix) const {
  const std::string name = key(suffix);
  const gguf::Value* value = file_.find(name);
  if (!value) return std::nullopt;
  if (value->type != gguf::ValueType::Array) return file_.findInt(name);  // checks the type
  const gguf::Array& array = value->asArray();
  if (array.empty()) fail("metadata key '" + name + "' is an empty array");
  int64_t first = 0;
  for (size_t i = 0; i < array.size(); ++i) {
    const gguf::Value item = array.at(i);
    if (!item.isInteger()) fail("metadata key '" + name + "' is not an array of integers");
    const int64_t v = item.asInt();
    if (i == 0) first = v;
    if (v != first)
      fail("metadata key '" + name + "' differs between layers (" + std::to_string(first) + " vs " +
           std::to_string(v) + "); models with per-layer shapes are not supported");
  }
  return first;
}

int64_t MetadataKeys::requiredInt(const std::string& suffix) const {
  if (auto v = optionalInt(suffix)) return *v;
  fail("missing metadata key '" + key(suffix) + "' (required for architecture " + architecture_ +
       ")");
}

std::optional<float> MetadataKeys::optionalFloat(const std::string& suffix) const {
  if (auto v = file_.findFloat(key(suffix))) return static_cast<float>(*v);
  return std::nullopt;
}

float MetadataKeys::requiredFloat(const std::string& suffix) const {
  if (auto v = optionalFloat(suffix)) return *v;
  fail("missing metadata key '" + key(suffix) + "' (required for architecture " + architecture_ +
       ")");
}

std::optional<std::string> MetadataKeys::optionalString(const std::string& suffix) const {
  return file_.findString(key(suffix));
}

}  // namespace ember::model
