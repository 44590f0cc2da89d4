#pragma once
// A read-only memory mapping of a whole file (POSIX mmap). Model weights are used straight from
// the mapping, so opening a multi-gigabyte file costs no copy.
#include <cstdint>
#include <filesystem>
#include <span>

namespace ember {

class MappedFile {
 public:
  // Throws ember::Error naming the file when it cannot be opened, sized or mapped. An empty
  // file maps to an empty span (mmap refuses zero lengths).
  explicit MappedFile(const std::filesystem::path& path);
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  std::span<const uint8_t> bytes() const { return {data_, size_}; }
  const uint8_t* data() const { return data_; }
  uint64_t size() const { return size_; }

 private:
  const uint8_t* data_ = nullptr;
  uint64_t size_ = 0;
};

}  // namespace ember
