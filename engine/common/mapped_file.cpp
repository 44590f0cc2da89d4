#include "common/mapped_file.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <mutex>
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

// The live mappings, read by the SIGBUS handler: plain atomics in a fixed table, no locks or
// allocation (a signal handler may use neither). A slot is claimed under slotMutex by the
// threads that map and unmap; the handler only reads it.
constexpr int kSlots = 256;
struct Slot {
  std::atomic<uintptr_t> begin{0};
  std::atomic<uintptr_t> end{0};  // 0: free
  std::atomic<bool> lost{false};
};
Slot slots[kSlots];
std::mutex slotMutex;
struct sigaction previousAction;
std::once_flag handlerInstalled;

void onSigbus(int sig, siginfo_t* info, void* context) {
  const auto address = reinterpret_cast<uintptr_t>(info->si_addr);
  for (Slot& s : slots) {
    const uintptr_t begin = s.begin.load(std::memory_order_acquire);
    const uintptr_t end = s.end.load(std::memory_order_acquire);
    if (end == 0 || address < begin || address >= end) continue;
    // Zero pages from the faulting page to the end of the mapping; the faulting read is
    // retried on return and sees them.
    const uintptr_t page = static_cast<uintptr_t>(::sysconf(_SC_PAGESIZE));
    const uintptr_t from = address & ~(page - 1);
    void* at = ::mmap(reinterpret_cast<void*>(from), end - from, PROT_READ,
                      MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
    if (at != MAP_FAILED) {
      s.lost.store(true, std::memory_order_release);
      return;
    }
    break;
  }
  // Not ours (or the repair failed): behave as before this handler existed.
  if (previousAction.sa_flags & SA_SIGINFO) {
    if (previousAction.sa_sigaction) return previousAction.sa_sigaction(sig, info, context);
  } else if (previousAction.sa_handler != SIG_DFL && previousAction.sa_handler != SIG_IGN) {
    return previousAction.sa_handler(sig);
  }
  ::signal(SIGBUS, SIG_DFL);
  ::raise(SIGBUS);
}

void installHandler() {
  std::call_once(handlerInstalled, [] {
    struct sigaction action {};
    action.sa_sigaction = onSigbus;
    action.sa_flags = SA_SIGINFO | SA_NODEFER;
    sigemptyset(&action.sa_mask);
    ::sigaction(SIGBUS, &action, &previousAction);
  });
}

int claimSlot(const uint8_t* data, uint64_t size) {
  installHandler();
  std::lock_guard lock(slotMutex);
  for (int i = 0; i < kSlots; ++i) {
    if (slots[i].end.load() != 0) continue;
    slots[i].lost.store(false);
    slots[i].begin.store(reinterpret_cast<uintptr_t>(data), std::memory_order_release);
    slots[i].end.store(reinterpret_cast<uintptr_t>(data) + size, std::memory_order_release);
    return i;
  }
  return -1;  // more than kSlots files mapped at once: this one is unprotected
}

void releaseSlot(int slot) {
  if (slot < 0) return;
  std::lock_guard lock(slotMutex);
  slots[slot].end.store(0, std::memory_order_release);
  slots[slot].begin.store(0, std::memory_order_release);
}

}  // namespace

MappedFile::MappedFile(const std::filesystem::path& path) : path_(path) {
  FileDescriptor file;
  file.fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (file.fd < 0) throwSystemError(path, "open the file");
  struct stat info {};
  if (::fstat(file.fd, &info) != 0) throwSystemError(path, "read the file size");
  if (!S_ISREG(info.st_mode)) throw Error(path.string() + ": not a regular file");
  size_ = static_cast<uint64_t>(info.st_size);
  device_ = info.st_dev;
  inode_ = info.st_ino;
  modified_ = info.st_mtim;
  if (size_ == 0) return;
  void* mapped = ::mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, file.fd, 0);
  if (mapped == MAP_FAILED) throwSystemError(path, "map the file into memory");
  data_ = static_cast<const uint8_t*>(mapped);
  slot_ = claimSlot(data_, size_);
}

MappedFile::~MappedFile() {
  releaseSlot(slot_);
  if (data_ != nullptr) ::munmap(const_cast<uint8_t*>(data_), size_);
}

bool MappedFile::lostPages() const {
  return slot_ >= 0 && slots[slot_].lost.load(std::memory_order_acquire);
}

bool MappedFile::changedOnDisk() const {
  struct stat info {};
  if (::stat(path_.c_str(), &info) != 0) return true;
  return info.st_dev != device_ || info.st_ino != inode_ ||
         static_cast<uint64_t>(info.st_size) != size_ || info.st_mtim.tv_sec != modified_.tv_sec ||
         info.st_mtim.tv_nsec != modified_.tv_nsec;
}

}  // namespace ember
