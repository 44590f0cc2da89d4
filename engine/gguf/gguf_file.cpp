#include "gguf/gguf_file.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>

#include "common/checked_math.h"
#include "common/mapped_file.h"
#include "gguf/byte_cursor.h"
#include "gguf/metadata_parser.h"
#include "gguf/tensor_table_parser.h"

namespace ember::gguf {

namespace {

constexpr uint64_t kHeaderBytes = 4 + 4 + 8 + 8;  // magic, version, tensor count, metadata count

// Drops the resident pages of a read-only file mapping that lie wholly before `offset`.
void releasePagesBefore(const uint8_t* base, uint64_t offset) {
  const auto page = uint64_t(sysconf(_SC_PAGESIZE));
  const uint64_t end = offset / page * page;
  if (end > 0) madvise(const_cast<uint8_t*>(base), size_t(end), MADV_DONTNEED);
}

uint32_t byteSwapped(uint32_t v) {
  return __builtin_bswap32(v);
}

std::string describeMagic(std::string_view magic) {
  static const char* const kHex = "0123456789abcdef";
  std::string hex;
  std::string printable;
  for (char c : magic) {
    const auto byte = static_cast<unsigned char>(c);
    hex += kHex[byte >> 4];
    hex += kHex[byte & 15];
    printable += (byte >= 0x20 && byte < 0x7f) ? c : '.';
  }
  return "0x" + hex + " (\"" + printable + "\")";
}

void checkVersion(const ByteCursor& cursor, uint32_t version) {
  if (version == 2 || version == 3) return;
  const uint64_t at = 4;
  if (version == 1)
    cursor.fail(at,
                "GGUF version 1 is not supported (expected version 2 or 3; version 1 used "
                "32-bit counts, convert the model again with a current tool)");
  if (byteSwapped(version) == 2 || byteSwapped(version) == 3)
    cursor.fail(at, "this looks like a big-endian GGUF file (version " +
                        std::to_string(byteSwapped(version)) +
                        " byte-swapped); expected a little-endian file");
  cursor.fail(at, "GGUF version " + std::to_string(version) +
                      " is not supported (expected version 2 or 3)");
}

void checkCount(const ByteCursor& cursor, uint64_t at, uint64_t count, uint64_t minEntryBytes,
                const char* what) {
  const uint64_t fits = (cursor.size() - kHeaderBytes) / minEntryBytes;
  if (count > fits)
    cursor.fail(at, std::string(what) + " count " + std::to_string(count) +
                        " is larger than the file could hold (expected at most " +
                        std::to_string(fits) + ")");
}

}  // namespace

GgufError::GgufError(const std::string& file, uint64_t offset, const std::string& what)
    : ember::Error(file + ": at byte " + std::to_string(offset) + ": " + what),
      file_(file),
      offset_(offset),
      detail_(what) {}

GgufFile::~GgufFile() = default;

std::unique_ptr<GgufFile> GgufFile::open(const std::filesystem::path& path) {
  std::unique_ptr<GgufFile> file(new GgufFile());
  file->path_ = path.string();
  file->mapping_ = std::make_unique<MappedFile>(path);
  file->base_ = file->mapping_->data();
  file->size_ = file->mapping_->size();
  file->parse();
  // Everything parse() keeps (keys, values, packed arrays, tensor names) is a copy, so the
  // header, metadata and tensor table are never read from the mapping again: their pages (6.5 MB
  // for a 262k vocabulary) leave the resident set.
  releasePagesBefore(file->base_, std::min(file->dataOffset_, file->size_));
  return file;
}

std::unique_ptr<GgufFile> GgufFile::fromBuffer(std::vector<uint8_t> bytes, std::string name) {
  std::unique_ptr<GgufFile> file(new GgufFile());
  file->path_ = std::move(name);
  file->buffer_ = std::move(bytes);
  file->base_ = file->buffer_.data();
  file->size_ = file->buffer_.size();
  file->parse();
  return file;
}

void GgufFile::parse() {
  const std::span<const uint8_t> image(base_, size_);
  ByteCursor cursor(image, path_);
  if (size_ == 0)
    cursor.fail(0, "the file is empty (expected a GGUF header starting with \"GGUF\")");

  const std::string_view magic = cursor.bytes(4, "the magic \"GGUF\"");
  if (magic != "GGUF")
    cursor.fail(0, "wrong magic " + describeMagic(magic) + " (expected \"GGUF\"): not a GGUF file");
  version_ = cursor.u32("the GGUF version");
  checkVersion(cursor, version_);
  const uint64_t tensorCountAt = cursor.position();
  const uint64_t tensorCount = cursor.u64("the tensor count");
  const uint64_t metadataCountAt = cursor.position();
  const uint64_t metadataCount = cursor.u64("the metadata count");
  checkCount(cursor, tensorCountAt, tensorCount, kMinTensorInfoBytes, "tensor");
  checkCount(cursor, metadataCountAt, metadataCount, kMinMetadataEntryBytes, "metadata");

  metadataOffset_ = cursor.position();
  ParsedMetadata parsed = parseMetadata(cursor, metadataCount);
  metadata_ = std::move(parsed.entries);
  metadataValueOffsets_ = std::move(parsed.valueOffsets);
  alignment_ = parsed.alignment;
  for (size_t i = 0; i < metadata_.size(); ++i) metadataIndex_.emplace(metadata_[i].first, i);

  std::vector<ParsedTensor> table = parseTensorTable(cursor, tensorCount);
  const uint64_t tableEnd = cursor.position();
  // tableEnd <= size_ < 2^64 - alignment, so the padding cannot overflow.
  dataOffset_ = *alignUp(tableEnd, alignment_);
  if (!table.empty() && dataOffset_ > size_)
    cursor.fail(tableEnd, "file truncated: the tensor data section should start at byte " +
                              std::to_string(dataOffset_) + " (padded to alignment " +
                              std::to_string(alignment_) + ") but the file has " +
                              std::to_string(size_) + " bytes");
  // Files without tensors (vocabulary-only GGUFs) often end before the padding.
  if (table.empty()) dataOffset_ = std::min(dataOffset_, size_);
  placeTensors(table, cursor, image, dataOffset_, alignment_);

  tensors_.reserve(table.size());
  for (ParsedTensor& t : table) {
    tensorIndex_.emplace(t.info.name, tensors_.size());
    tensors_.push_back(std::move(t.info));
  }
}

const Value* GgufFile::find(const std::string& key) const {
  const auto it = metadataIndex_.find(key);
  return it == metadataIndex_.end() ? nullptr : &metadata_[it->second].second;
}

const Value& GgufFile::get(const std::string& key) const {
  if (const Value* value = find(key)) return *value;
  throw GgufError(path_, metadataOffset_, "missing metadata key '" + key + "'");
}

void GgufFile::failMistyped(const std::string& key, const std::string& expected) const {
  const size_t index = metadataIndex_.at(key);
  const Value& value = metadata_[index].second;
  std::string actual(valueTypeName(value.type));
  if (value.type == ValueType::Array)
    actual = "array of " + std::string(valueTypeName(std::get<Array>(value.data).elementType));
  throw GgufError(path_, metadataValueOffsets_[index],
                  "metadata key '" + key + "' holds " + actual + " (expected " + expected + ")");
}

std::string GgufFile::getString(const std::string& key) const {
  const Value& value = get(key);
  if (value.type != ValueType::String) failMistyped(key, "a string");
  return value.asString();
}

std::optional<std::string> GgufFile::findString(const std::string& key) const {
  if (!find(key)) return std::nullopt;
  return getString(key);
}

std::optional<int64_t> GgufFile::findInt(const std::string& key) const {
  const Value* value = find(key);
  if (!value) return std::nullopt;
  if (!value->isInteger()) failMistyped(key, "an integer");
  if (value->type == ValueType::UInt64 && std::get<uint64_t>(value->data) > INT64_MAX)
    failMistyped(key, "an integer below 2^63");
  return value->asInt();
}

std::optional<double> GgufFile::findFloat(const std::string& key) const {
  const Value* value = find(key);
  if (!value) return std::nullopt;
  if (!value->isFloat() && !value->isInteger()) failMistyped(key, "a number");
  return value->asFloat();
}

std::optional<bool> GgufFile::findBool(const std::string& key) const {
  const Value* value = find(key);
  if (!value) return std::nullopt;
  if (value->type != ValueType::Bool) failMistyped(key, "a bool");
  return value->asBool();
}

const Array& GgufFile::getArrayOf(const std::string& key, const std::string& expected,
                                  bool (*elementOk)(ValueType)) const {
  const Value& value = get(key);
  if (value.type != ValueType::Array || !elementOk(value.asArray().elementType))
    failMistyped(key, expected);
  return value.asArray();
}

std::vector<std::string> GgufFile::getStringArray(const std::string& key) const {
  const Array& array =
      getArrayOf(key, "an array of strings", [](ValueType t) { return t == ValueType::String; });
  std::vector<std::string> out;
  out.reserve(array.size());
  for (size_t i = 0; i < array.size(); ++i) out.emplace_back(array.stringAt(i));
  return out;
}

std::vector<float> GgufFile::getFloatArray(const std::string& key) const {
  const Array& array = getArrayOf(key, "an array of numbers", [](ValueType t) {
    return t != ValueType::String && t != ValueType::Array && t != ValueType::Bool;
  });
  std::vector<float> out;
  out.reserve(array.size());
  for (size_t i = 0; i < array.size(); ++i) out.push_back(static_cast<float>(array.at(i).asFloat()));
  return out;
}

std::vector<int64_t> GgufFile::getIntArray(const std::string& key) const {
  const Array& array = getArrayOf(key, "an array of integers", [](ValueType t) {
    return t != ValueType::String && t != ValueType::Array && t != ValueType::Bool &&
           t != ValueType::Float32 && t != ValueType::Float64;
  });
  std::vector<int64_t> out;
  out.reserve(array.size());
  for (size_t i = 0; i < array.size(); ++i) {
    const Value item = array.at(i);
    if (item.type == ValueType::UInt64 && std::get<uint64_t>(item.data) > INT64_MAX)
      failMistyped(key, "integers below 2^63 (item " + std::to_string(i) + " is larger)");
    out.push_back(item.asInt());
  }
  return out;
}

std::string GgufFile::architecture() const {
  return findString("general.architecture").value_or("");
}

const TensorInfo* GgufFile::findTensor(const std::string& name) const {
  const auto it = tensorIndex_.find(name);
  return it == tensorIndex_.end() ? nullptr : &tensors_[it->second];
}

bool GgufFile::dataLost() const { return mapping_ && mapping_->lostPages(); }

bool GgufFile::changedOnDisk() const { return mapping_ && mapping_->changedOnDisk(); }

}  // namespace ember::gguf
