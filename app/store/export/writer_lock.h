#pragma once
// One writer per chat database, across processes. The writer holds an exclusive flock() on
// `<database>.lock` for as long as it has the database open; any other process (a second app
// window, ember-cli import, a second ChatStore in the same process) finds it taken and opens the
// database read-only. The kernel drops the lock when the holder exits or is killed, so a crash
// never leaves a stale lock behind. The lock file holds the writer's process id, for messages.
// Plain C++ (no Qt): ember-cli's importer and the app's store share it.
#include <string>

namespace ember::storelock {

class WriterLock {
 public:
  enum class State {
    Acquired,       // this object is the database's writer
    HeldElsewhere,  // another open file (this or another process) is the writer
    Unavailable,    // the lock file cannot be created (read-only folder): no writer rule
  };

  WriterLock() = default;
  // Tries to become the writer of `databasePath` without waiting.
  explicit WriterLock(const std::string& databasePath);
  ~WriterLock();
  WriterLock(WriterLock&& other) noexcept;
  WriterLock& operator=(WriterLock&& other) noexcept;
  WriterLock(const WriterLock&) = delete;
  WriterLock& operator=(const WriterLock&) = delete;

  State state() const { return state_; }
  bool acquired() const { return state_ == State::Acquired; }
  // For HeldElsewhere: the writer's process id as it wrote it (0 when unknown).
  long holderPid() const { return holderPid_; }
  // For Unavailable: why (strerror of the failed call).
  const std::string& problem() const { return problem_; }
  void release();

  static std::string lockPathFor(const std::string& databasePath) {
    return databasePath + ".lock";
  }

 private:
  int fd_ = -1;
  State state_ = State::Unavailable;
  long holderPid_ = 0;
  std::string problem_;
};

}  // namespace ember::storelock
