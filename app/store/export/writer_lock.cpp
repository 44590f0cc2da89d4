#include "store/export/writer_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <utility>

namespace ember::storelock {
namespace {

long readPid(int fd) {
  char buffer[32] = {};
  const ssize_t n = pread(fd, buffer, sizeof buffer - 1, 0);
  return n > 0 ? std::strtol(buffer, nullptr, 10) : 0;
}

}  // namespace

WriterLock::WriterLock(const std::string& databasePath) {
  const std::string path = lockPathFor(databasePath);
  fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd_ < 0) {
    problem_ = "cannot create " + path + ": " + std::strerror(errno);
    state_ = State::Unavailable;
    return;
  }
  // flock locks belong to the open file description: a second open() of the same file, in this
  // process too, conflicts with the first, which is what "one writer" needs.
  if (flock(fd_, LOCK_EX | LOCK_NB) != 0) {
    const int error = errno;
    if (error == EWOULDBLOCK) {
      state_ = State::HeldElsewhere;
      holderPid_ = readPid(fd_);
    } else {
      state_ = State::Unavailable;
      problem_ = "cannot lock " + path + ": " + std::strerror(error);
    }
    ::close(fd_);
    fd_ = -1;
    return;
  }
  state_ = State::Acquired;
  const std::string pid = std::to_string(static_cast<long>(getpid())) + "\n";
  if (ftruncate(fd_, 0) == 0) {
    // The id is only for messages; a failed write leaves it unknown (0), the lock still holds.
    [[maybe_unused]] const ssize_t written = pwrite(fd_, pid.data(), pid.size(), 0);
  }
}

WriterLock::~WriterLock() { release(); }

WriterLock::WriterLock(WriterLock&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)),
      state_(std::exchange(other.state_, State::Unavailable)),
      holderPid_(other.holderPid_),
      problem_(std::move(other.problem_)) {}

WriterLock& WriterLock::operator=(WriterLock&& other) noexcept {
  if (this != &other) {
    release();
    fd_ = std::exchange(other.fd_, -1);
    state_ = std::exchange(other.state_, State::Unavailable);
    holderPid_ = other.holderPid_;
    problem_ = std::move(other.problem_);
  }
  return *this;
}

void WriterLock::release() {
  // The file stays: removing a lock file that another process may be opening at that moment
  // would let two writers in. Closing drops the lock.
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  if (state_ == State::Acquired) state_ = State::Unavailable;
}

}  // namespace ember::storelock
