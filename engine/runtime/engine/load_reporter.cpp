#include "runtime/engine/load_reporter.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <vector>

#include <fcntl.h>
#include <unistd.h>

namespace ember {

void LoadReporter::checkCancelled() const {
  if (control_ && control_->cancelRequested.load()) throw LoadCancelled();
}

void LoadReporter::report(LoadProgress::Stage stage, uint64_t done, uint64_t total,
                          double fraction) {
  fraction_ = std::max(fraction_, fraction);
  if (control_->onProgress) control_->onProgress({stage, done, total, fraction_});
}

void LoadReporter::reading(uint64_t done, uint64_t total) {
  if (!control_) return;
  checkCancelled();
  const double part = total ? double(std::min(done, total)) / double(total) : 1.0;
  report(LoadProgress::Stage::Reading, done, total, 0.5 * part);
}

void LoadReporter::preparing(uint64_t done, uint64_t total) {
  if (!control_) return;
  checkCancelled();
  const double part = total ? double(std::min(done, total)) / double(total) : 1.0;
  // Below 1: the KV pool and the scheduler are still to come.
  report(LoadProgress::Stage::Preparing, done, total, std::min(0.5 + 0.5 * part, 0.999));
}

void LoadReporter::done() {
  if (!control_) return;
  report(LoadProgress::Stage::Done, 1, 1, 1.0);
}

PrepareProgress LoadReporter::prepareProgress() {
  if (!control_) return {};
  return [this](uint64_t done, uint64_t total) { preparing(done, total); };
}

void readTensorData(const std::string& path, uint64_t offset, uint64_t size,
                    LoadReporter& reporter) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw Error("cannot read " + path + ": " + std::strerror(errno));
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  ::posix_fadvise(fd, off_t(offset), off_t(size), POSIX_FADV_SEQUENTIAL);
  constexpr size_t kChunk = size_t(8) << 20;  // 8 MiB: a few hundred reports for a large model
  std::vector<char> buffer(kChunk);
  uint64_t done = 0;
  reporter.reading(0, size);
  while (done < size) {
    const size_t want = size_t(std::min<uint64_t>(kChunk, size - done));
    const ssize_t got = ::pread(fd, buffer.data(), want, off_t(offset + done));
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) throw Error("cannot read " + path + ": " + std::strerror(errno));
    if (got == 0)
      throw Error("the model file " + path + " ends at byte " + std::to_string(offset + done) +
                  ", before its tensor data (" + std::to_string(offset + size) + " bytes)");
    done += uint64_t(got);
    reporter.reading(done, size);
  }
}

}  // namespace ember
