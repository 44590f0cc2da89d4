// ember-cli inspect FILE.gguf [--json]: the header, all metadata (long arrays abbreviated), the
// tensor table and the parameter count of a GGUF file.
#include <cinttypes>
#include <cstdio>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>

#include "cli_args.h"
#include "ember/error.h"
#include "gguf/gguf_describe.h"
#include "gguf/gguf_file.h"

namespace ember::cli {

namespace {

using gguf::GgufFile;
using gguf::TensorInfo;
using gguf::Value;
using gguf::ValueType;
using OrderedJson = nlohmann::ordered_json;

constexpr size_t kJsonArrayItems = 8;  // items of a metadata array shown in --json output

struct TensorTotals {
  uint64_t parameters = 0;
  uint64_t bytes = 0;
  std::map<std::string, uint64_t> countByType;  // sorted by type name
};

TensorTotals totalsOf(const GgufFile& file) {
  TensorTotals totals;
  for (const TensorInfo& t : file.tensors()) {
    totals.parameters += t.elementCount;
    totals.bytes += t.byteSize;
    ++totals.countByType[std::string(gguf::ggmlTypeName(t.type))];
  }
  return totals;
}

// "134.5M" style summary next to exact counts.
std::string abbreviated(uint64_t count) {
  char buffer[32];
  if (count >= 1000000000)
    std::snprintf(buffer, sizeof(buffer), "%.2fB", count / 1e9);
  else if (count >= 1000000)
    std::snprintf(buffer, sizeof(buffer), "%.1fM", count / 1e6);
  else if (count >= 1000)
    std::snprintf(buffer, sizeof(buffer), "%.1fK", count / 1e3);
  else
    std::snprintf(buffer, sizeof(buffer), "%" PRIu64, count);
  return buffer;
}

OrderedJson jsonScalar(const Value& value) {
  if (const auto* u = std::get_if<uint64_t>(&value.data)) return *u;
  if (const auto* i = std::get_if<int64_t>(&value.data)) return *i;
  if (const auto* d = std::get_if<double>(&value.data)) return *d;
  if (const auto* b = std::get_if<bool>(&value.data)) return *b;
  if (const auto* s = std::get_if<std::string>(&value.data)) return *s;
  OrderedJson items = OrderedJson::array();  // nested array: its first items, as plain values
  const gguf::Array& nested = value.asArray();
  for (size_t i = 0; i < std::min(nested.size(), kJsonArrayItems); ++i)
    items.push_back(jsonScalar(nested.at(i)));
  return items;
}

OrderedJson jsonMetadataValue(const Value& value) {
  OrderedJson out;
  out["type"] = std::string(gguf::valueTypeName(value.type));
  if (value.type != ValueType::Array) {
    out["value"] = jsonScalar(value);
    return out;
  }
  const gguf::Array& array = value.asArray();
  out["element_type"] = std::string(gguf::valueTypeName(array.elementType));
  out["count"] = array.size();
  out["items"] = jsonScalar(value);
  out["truncated"] = array.size() > kJsonArrayItems;
  return out;
}

void printJson(const GgufFile& file) {
  const TensorTotals totals = totalsOf(file);
  OrderedJson out;
  out["file"] = file.path();
  out["version"] = file.version();
  out["architecture"] = file.architecture();
  out["alignment"] = file.alignment();
  out["file_size"] = file.fileSize();
  out["data_offset"] = file.dataOffset();
  out["metadata_count"] = file.metadata().size();
  OrderedJson metadata = OrderedJson::object();
  for (const auto& [key, value] : file.metadata()) metadata[key] = jsonMetadataValue(value);
  out["metadata"] = std::move(metadata);
  OrderedJson tensors = OrderedJson::array();
  for (const TensorInfo& t : file.tensors()) {
    tensors.push_back({{"name", t.name},
                       {"type", std::string(gguf::ggmlTypeName(t.type))},
                       {"shape", t.shape},
                       {"elements", t.elementCount},
                       {"bytes", t.byteSize},
                       {"offset", t.offset}});
  }
  out["tensors"] = std::move(tensors);
  out["tensor_count"] = file.tensors().size();
  out["parameter_count"] = totals.parameters;
  out["tensor_bytes"] = totals.bytes;
  out["tensor_types"] = totals.countByType;
  // Token strings may hold byte sequences that are not UTF-8; replace those, never fail.
  std::cout << out.dump(2, ' ', false, OrderedJson::error_handler_t::replace) << '\n';
}

void printHuman(const GgufFile& file) {
  const TensorTotals totals = totalsOf(file);
  const std::string architecture = file.architecture();
  std::printf("file:          %s\n", file.path().c_str());
  std::printf("GGUF version:  %u\n", file.version());
  std::printf("architecture:  %s\n", architecture.empty() ? "(none)" : architecture.c_str());
  std::printf("alignment:     %" PRIu64 "\n", file.alignment());
  std::printf("file size:     %" PRIu64 " bytes (tensor data from byte %" PRIu64 ")\n",
              file.fileSize(), file.dataOffset());

  size_t keyWidth = 0;
  for (const auto& [key, value] : file.metadata()) keyWidth = std::max(keyWidth, key.size());
  std::printf("\nmetadata (%zu keys):\n", file.metadata().size());
  for (const auto& [key, value] : file.metadata()) {
    std::printf("  %-*s  %-15s %s\n", static_cast<int>(keyWidth), key.c_str(),
                gguf::valueTypeLabel(value).c_str(), gguf::describeValue(value).c_str());
  }

  size_t nameWidth = 4;
  for (const TensorInfo& t : file.tensors()) nameWidth = std::max(nameWidth, t.name.size());
  std::printf("\ntensors (%zu):\n", file.tensors().size());
  if (!file.tensors().empty())
    std::printf("  %-*s  %-7s %-22s %12s %12s\n", static_cast<int>(nameWidth), "name", "type",
                "shape", "bytes", "offset");
  for (const TensorInfo& t : file.tensors()) {
    std::printf("  %-*s  %-7s %-22s %12" PRIu64 " %12" PRIu64 "\n", static_cast<int>(nameWidth),
                t.name.c_str(), std::string(gguf::ggmlTypeName(t.type)).c_str(),
                gguf::formatShape(t.shape).c_str(), t.byteSize, t.offset);
  }

  std::string types;
  for (const auto& [name, count] : totals.countByType)
    types += (types.empty() ? "" : ", ") + name + " x" + std::to_string(count);
  std::printf("\ntensor count:  %zu\n", file.tensors().size());
  std::printf("tensor types:  %s\n", types.empty() ? "(none)" : types.c_str());
  std::printf("parameters:    %" PRIu64 " (%s)\n", totals.parameters,
              abbreviated(totals.parameters).c_str());
  std::printf("tensor bytes:  %" PRIu64 "\n", totals.bytes);
}

}  // namespace

int runInspect(const Args& args) {
  const ParsedArgs parsed(args, {}, {"--json"});
  if (parsed.positional().size() != 1) throw Error("usage: ember-cli inspect FILE.gguf [--json]");
  const auto file = GgufFile::open(parsed.positional().front());
  if (parsed.flag("--json"))
    printJson(*file);
  else
    printHuman(*file);
  std::fflush(stdout);
  return 0;
}

}  // namespace ember::cli
