#pragma once
// A bounds-checked, read-only view of a GGUF (v2/v3) file over mmap. Metadata is parsed into
// memory at open; tensor data stays in the mapping and is exposed as views (never copied).
// Every malformed input throws GgufError naming the file, the byte offset and what was expected.
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "ember/error.h"
#include "gguf/ggml_types.h"
#include "gguf/gguf_value.h"

namespace ember {
class MappedFile;
}

namespace ember::gguf {

class GgufError : public ember::Error {
 public:
  GgufError(const std::string& file, uint64_t offset, const std::string& what);
  const std::string& file() const { return file_; }
  uint64_t offset() const { return offset_; }
  const std::string& detail() const { return detail_; }  // what() without file and offset

 private:
  std::string file_;
  uint64_t offset_;
  std::string detail_;
};

struct TensorInfo {
  std::string name;
  GgmlType type;
  std::vector<uint64_t> shape;  // ggml order: shape[0] is the contiguous (innermost) dimension
  uint64_t offset = 0;          // relative to the start of the tensor data section
  uint64_t elementCount = 0;
  uint64_t byteSize = 0;
  std::span<const uint8_t> data;  // view into the mapping
};

class GgufFile {
 public:
  // Maps and parses the file; throws GgufError on any malformed content.
  static std::unique_ptr<GgufFile> open(const std::filesystem::path& path);
  // Parses an in-memory image (tests, fuzzing); `name` is used in error messages.
  static std::unique_ptr<GgufFile> fromBuffer(std::vector<uint8_t> bytes, std::string name);
  ~GgufFile();
  GgufFile(const GgufFile&) = delete;
  GgufFile& operator=(const GgufFile&) = delete;

  const std::string& path() const { return path_; }
  // The mapped file shrank under the process and some tensor bytes read since were zeros (see
  // MappedFile); the model must be loaded again. Always false for in-memory buffers.
  bool dataLost() const;
  // The file at path() is no longer the one that was opened (replaced, rewritten or gone).
  bool changedOnDisk() const;
  // True for open() (a read-only file mapping, whose pages the kernel can drop and read again),
  // false for fromBuffer().
  bool isFileMapped() const { return mapping_ != nullptr; }
  uint32_t version() const { return version_; }
  uint64_t alignment() const { return alignment_; }
  // Absolute offset of the tensor data section (at most fileSize(): a file without tensors may
  // end before the padding that would precede it).
  uint64_t dataOffset() const { return dataOffset_; }
  uint64_t fileSize() const { return size_; }

  // Metadata in file order (keys are unique; duplicates are rejected at open).
  const std::vector<std::pair<std::string, Value>>& metadata() const { return metadata_; }
  const Value* find(const std::string& key) const;
  const Value& get(const std::string& key) const;  // throws GgufError naming the missing key
  // Typed helpers; `get*` throw when missing or mistyped, `find*` return nullopt when missing.
  std::string getString(const std::string& key) const;
  std::optional<std::string> findString(const std::string& key) const;
  std::optional<int64_t> findInt(const std::string& key) const;
  std::optional<double> findFloat(const std::string& key) const;
  std::optional<bool> findBool(const std::string& key) const;
  std::vector<std::string> getStringArray(const std::string& key) const;
  std::vector<float> getFloatArray(const std::string& key) const;
  std::vector<int64_t> getIntArray(const std::string& key) const;
  std::string architecture() const;  // general.architecture, or "" when absent

  const std::vector<TensorInfo>& tensors() const { return tensors_; }
  const TensorInfo* findTensor(const std::string& name) const;

 private:
  GgufFile() = default;
  void parse();
  // Throws GgufError at the value of `key` saying it is not `expected`.
  [[noreturn]] void failMistyped(const std::string& key, const std::string& expected) const;
  const Array& getArrayOf(const std::string& key, const std::string& expected,
                          bool (*elementOk)(ValueType)) const;

  std::string path_;
  const uint8_t* base_ = nullptr;
  uint64_t size_ = 0;
  std::unique_ptr<MappedFile> mapping_;  // null for in-memory buffers
  std::vector<uint8_t> buffer_;          // owned bytes for fromBuffer
  uint32_t version_ = 0;
  uint64_t alignment_ = 32;
  uint64_t dataOffset_ = 0;
  uint64_t metadataOffset_ = 0;  // where the key/value section starts
  std::vector<std::pair<std::string, Value>> metadata_;
  std::vector<uint64_t> metadataValueOffsets_;  // absolute offset of each value, for errors
  std::map<std::string, size_t, std::less<>> metadataIndex_;
  std::vector<TensorInfo> tensors_;
  std::map<std::string, size_t, std::less<>> tensorIndex_;
};

}  // namespace ember::gguf
