#pragma once
// A read-only memory mapping of a whole file (POSIX mmap). Model weights are used straight from
// the mapping, so opening a multi-gigabyte file costs no copy.
//
// A mapped file can change under the process: a download tool that rewrites the model in place
// truncates it, and reading a mapped page past the new end raises SIGBUS, which kills the
// process. MappedFile survives that: a process-wide SIGBUS handler recognises a fault inside a
// live mapping, maps zero-filled anonymous memory over the rest of that mapping (so the read
// that faulted, and every later one, sees zeros instead of faulting) and marks the mapping as
// lost. Users of the data check lostPages() (the engine fails the request that read garbage and
// asks for a reload) and changedOnDisk() (the file at the path is no longer the one mapped:
// replaced, truncated or rewritten) before relying on it. A file replaced by rename keeps its
// old contents mapped (the old inode lives on), so nothing is lost; changedOnDisk() reports it.
// A SIGBUS outside every mapping goes to the handler that was installed before.
#include <sys/types.h>

#include <cstdint>
#include <ctime>
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

  // True once a read faulted because the file shrank: some bytes read since were zeros, not
  // the file's.
  bool lostPages() const;
  // True when the file at the path differs from the one mapped (another inode, size or
  // modification time), or is gone.
  bool changedOnDisk() const;
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
  const uint8_t* data_ = nullptr;
  uint64_t size_ = 0;
  int slot_ = -1;  // index in the SIGBUS handler's table of mappings; -1: none
  dev_t device_ = 0;
  ino_t inode_ = 0;
  timespec modified_{};
};

}  // namespace ember
