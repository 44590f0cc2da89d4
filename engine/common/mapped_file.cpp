#include "common/mapped_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "ember/error.h"

namespace ember {

namespace {

[[noreturn]] void throwSystemError(const std::filesystem::path& path, const char* action) {
  throw Error(path.string() + ": cannot " + action + ": " + std::strerror(errno));
}

// Closes the descriptor on every path out of the constructor; the mapping outlives it.
struct FileDescriptor {
  int fd = -1;
  ~FileDescriptor() {
    if (fd >= 0) ::close(fd);
  }
};

}  // namespace

MappedFile::MappedFile(const std::filesystem::path& path) {
  FileDescriptor file;
  file.fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (file.fd < 0) throwSystemError(path, "open the file");
  struct stat info {};
  if (::fstat(file.fd, &info) != 0) throwSystemError(path, "read the file size");
  if (!S_ISREG(info.st_mode)) throw Error(path.string() + ": not a regular file");
  size_ = static_cast<uint64_t>(info.st_size);
  if (size_ == 0) return;
  void* mapped = ::mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, file.fd, 0);
  if (mapped == MAP_FAILED) throwSystemError(path, "map the file into memory");
  data_ = static_cast<const uint8_t*>(mapped);
}

MappedFile::~MappedFile() {
  if (data_ != nullptr) ::munmap(const_cast<uint8_t*>(data_), size_);
}

}  // namespace ember
