#include "fault/fault_vfs.h"

#include <sqlite3.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <thread>

namespace ember::test::fault {
namespace {

// kContended: the locks another process can hold for long (file locks, the WAL write and
// checkpoint locks), a subset of kLocks. Each call counts in every class it belongs to, whatever
// is armed, so that a run without faults counts what a faulted run will see.
enum Counter { kWrites, kSyncs, kLocks, kContended, kCounters };

Counter counterOf(Kind kind) {
  switch (kind) {
    case Kind::Write:
    case Kind::DiskFull: return kWrites;
    case Kind::Sync: return kSyncs;
    case Kind::Lock: return kLocks;
    case Kind::Busy: return kContended;
  }
  return kWrites;
}

std::atomic<int64_t> counts[kCounters];
std::atomic<bool> armed{false};
std::atomic<Kind> armedKind{Kind::Write};
std::atomic<int64_t> armedAt{0};
std::atomic<int64_t> failures{0};

// Counts one call of class `counter`; true when it must fail.
bool shouldFail(Counter counter) {
  const int64_t n = counts[counter].fetch_add(1) + 1;
  if (!armed.load() || counterOf(armedKind.load()) != counter || n < armedAt.load()) return false;
  failures.fetch_add(1);
  return true;
}

int writeFailureCode() {
  return armedKind.load() == Kind::DiskFull ? SQLITE_FULL : SQLITE_IOERR_WRITE;
}

sqlite3_vfs* realVfs = nullptr;
sqlite3_vfs shimVfs;

// The shim's file: our header followed by the real VFS's file object (szOsFile covers both).
struct ShimFile {
  sqlite3_file base;
  sqlite3_file* real;
};

sqlite3_file* real(sqlite3_file* file) { return reinterpret_cast<ShimFile*>(file)->real; }

int shimClose(sqlite3_file* f) {
  sqlite3_file* r = real(f);
  return r->pMethods ? r->pMethods->xClose(r) : SQLITE_OK;
}
int shimRead(sqlite3_file* f, void* buffer, int amount, sqlite3_int64 offset) {
  return real(f)->pMethods->xRead(real(f), buffer, amount, offset);
}
std::atomic<int> slowWriteMs{0};
std::atomic<int> slowSyncMs{0};
void sleepMs(int ms) {
  if (ms > 0) std::this_thread::sleep_for(std::chrono::milliseconds(ms));
}

int shimWrite(sqlite3_file* f, const void* buffer, int amount, sqlite3_int64 offset) {
  if (shouldFail(kWrites)) return writeFailureCode();
  sleepMs(slowWriteMs.load());
  return real(f)->pMethods->xWrite(real(f), buffer, amount, offset);
}
int shimTruncate(sqlite3_file* f, sqlite3_int64 size) {
  return real(f)->pMethods->xTruncate(real(f), size);
}
std::atomic<bool> realSyncs{false};

int shimSync(sqlite3_file* f, int flags) {
  if (shouldFail(kSyncs)) return SQLITE_IOERR_FSYNC;
  sleepMs(slowSyncMs.load());
  if (!realSyncs.load()) return SQLITE_OK;
  return real(f)->pMethods->xSync(real(f), flags);
}
int shimFileSize(sqlite3_file* f, sqlite3_int64* size) {
  return real(f)->pMethods->xFileSize(real(f), size);
}
int shimLock(sqlite3_file* f, int level) {
  const bool lockFails = shouldFail(kLocks);
  const bool contended = shouldFail(kContended);
  if (lockFails) return SQLITE_IOERR_LOCK;
  if (contended) return SQLITE_BUSY;
  return real(f)->pMethods->xLock(real(f), level);
}
int shimUnlock(sqlite3_file* f, int level) { return real(f)->pMethods->xUnlock(real(f), level); }
int shimCheckReservedLock(sqlite3_file* f, int* out) {
  return real(f)->pMethods->xCheckReservedLock(real(f), out);
}
int shimFileControl(sqlite3_file* f, int op, void* arg) {
  return real(f)->pMethods->xFileControl(real(f), op, arg);
}
int shimSectorSize(sqlite3_file* f) { return real(f)->pMethods->xSectorSize(real(f)); }
int shimDeviceCharacteristics(sqlite3_file* f) {
  return real(f)->pMethods->xDeviceCharacteristics(real(f));
}
int shimShmMap(sqlite3_file* f, int region, int size, int extend, void volatile** out) {
  return real(f)->pMethods->xShmMap(real(f), region, size, extend, out);
}
int shimShmLock(sqlite3_file* f, int offset, int n, int flags) {
  // Only taking a lock can fail; releasing one always succeeds, as on a real system. Contention
  // (Busy) is another writer holding the WAL's write lock (slot 0) or checkpoint lock (slot 1);
  // the read marks are only ever held for moments.
  if (flags & SQLITE_SHM_LOCK) {
    const bool lockFails = shouldFail(kLocks);
    const bool writerSlot = (flags & SQLITE_SHM_EXCLUSIVE) && offset <= 1;
    const bool contended = writerSlot && shouldFail(kContended);
    if (lockFails) return SQLITE_IOERR_SHMLOCK;
    if (contended) return SQLITE_BUSY;
  }
  return real(f)->pMethods->xShmLock(real(f), offset, n, flags);
}
void shimShmBarrier(sqlite3_file* f) { real(f)->pMethods->xShmBarrier(real(f)); }
int shimShmUnmap(sqlite3_file* f, int deleteFlag) {
  return real(f)->pMethods->xShmUnmap(real(f), deleteFlag);
}
int shimFetch(sqlite3_file* f, sqlite3_int64 offset, int amount, void** out) {
  return real(f)->pMethods->xFetch(real(f), offset, amount, out);
}
int shimUnfetch(sqlite3_file* f, sqlite3_int64 offset, void* page) {
  return real(f)->pMethods->xUnfetch(real(f), offset, page);
}

// SQLite asks for the methods' version it may call; the shim offers what the real file offers,
// up to version 3, so that WAL (version 2) and memory mapping (version 3) behave as without it.
sqlite3_io_methods methodsFor(int version) {
  sqlite3_io_methods m{};
  m.iVersion = version;
  m.xClose = shimClose;
  m.xRead = shimRead;
  m.xWrite = shimWrite;
  m.xTruncate = shimTruncate;
  m.xSync = shimSync;
  m.xFileSize = shimFileSize;
  m.xLock = shimLock;
  m.xUnlock = shimUnlock;
  m.xCheckReservedLock = shimCheckReservedLock;
  m.xFileControl = shimFileControl;
  m.xSectorSize = shimSectorSize;
  m.xDeviceCharacteristics = shimDeviceCharacteristics;
  if (version >= 2) {
    m.xShmMap = shimShmMap;
    m.xShmLock = shimShmLock;
    m.xShmBarrier = shimShmBarrier;
    m.xShmUnmap = shimShmUnmap;
  }
  if (version >= 3) {
    m.xFetch = shimFetch;
    m.xUnfetch = shimUnfetch;
  }
  return m;
}

const sqlite3_io_methods shimMethods[4] = {methodsFor(1), methodsFor(1), methodsFor(2),
                                           methodsFor(3)};

int shimOpen(sqlite3_vfs*, const char* name, sqlite3_file* file, int flags, int* outFlags) {
  auto* shim = reinterpret_cast<ShimFile*>(file);
  shim->real = reinterpret_cast<sqlite3_file*>(shim + 1);
  std::memset(shim->real, 0, static_cast<size_t>(realVfs->szOsFile));
  file->pMethods = nullptr;  // SQLite calls no method on a file whose open failed
  const int rc = realVfs->xOpen(realVfs, name, shim->real, flags, outFlags);
  if (rc == SQLITE_OK && shim->real->pMethods) {
    const int version = shim->real->pMethods->iVersion;
    file->pMethods = &shimMethods[version < 1 ? 1 : (version > 3 ? 3 : version)];
  }
  return rc;
}

int shimDelete(sqlite3_vfs*, const char* name, int syncDir) {
  return realVfs->xDelete(realVfs, name, syncDir);
}
int shimAccess(sqlite3_vfs*, const char* name, int flags, int* out) {
  return realVfs->xAccess(realVfs, name, flags, out);
}
int shimFullPathname(sqlite3_vfs*, const char* name, int size, char* out) {
  return realVfs->xFullPathname(realVfs, name, size, out);
}
void* shimDlOpen(sqlite3_vfs*, const char* name) { return realVfs->xDlOpen(realVfs, name); }
void shimDlError(sqlite3_vfs*, int size, char* out) { realVfs->xDlError(realVfs, size, out); }
void (*shimDlSym(sqlite3_vfs*, void* handle, const char* symbol))(void) {
  return realVfs->xDlSym(realVfs, handle, symbol);
}
void shimDlClose(sqlite3_vfs*, void* handle) { realVfs->xDlClose(realVfs, handle); }
int shimRandomness(sqlite3_vfs*, int size, char* out) {
  return realVfs->xRandomness(realVfs, size, out);
}
int shimSleep(sqlite3_vfs*, int micros) { return realVfs->xSleep(realVfs, micros); }
int shimCurrentTime(sqlite3_vfs*, double* out) { return realVfs->xCurrentTime(realVfs, out); }
int shimGetLastError(sqlite3_vfs*, int size, char* out) {
  return realVfs->xGetLastError ? realVfs->xGetLastError(realVfs, size, out) : 0;
}
int shimCurrentTimeInt64(sqlite3_vfs*, sqlite3_int64* out) {
  return realVfs->xCurrentTimeInt64(realVfs, out);
}

}  // namespace

const char* kindName(Kind kind) {
  switch (kind) {
    case Kind::Write: return "write error";
    case Kind::Sync: return "fsync error";
    case Kind::Lock: return "lock error";
    case Kind::Busy: return "lock held elsewhere";
    case Kind::DiskFull: return "disk full";
  }
  return "?";
}

bool install() {
  if (realVfs) return true;
  sqlite3_initialize();
  sqlite3_vfs* platform = sqlite3_vfs_find(nullptr);
  if (!platform || platform->iVersion < 2) return false;
  shimVfs = sqlite3_vfs{};
  shimVfs.iVersion = 2;  // no xSetSystemCall & co: those only matter to SQLite's own tests
  shimVfs.szOsFile = static_cast<int>(sizeof(ShimFile)) + platform->szOsFile;
  shimVfs.mxPathname = platform->mxPathname;
  shimVfs.zName = "ember-fault-shim";
  shimVfs.xOpen = shimOpen;
  shimVfs.xDelete = shimDelete;
  shimVfs.xAccess = shimAccess;
  shimVfs.xFullPathname = shimFullPathname;
  shimVfs.xDlOpen = shimDlOpen;
  shimVfs.xDlError = shimDlError;
  shimVfs.xDlSym = shimDlSym;
  shimVfs.xDlClose = shimDlClose;
  shimVfs.xRandomness = shimRandomness;
  shimVfs.xSleep = shimSleep;
  shimVfs.xCurrentTime = shimCurrentTime;
  shimVfs.xGetLastError = shimGetLastError;
  shimVfs.xCurrentTimeInt64 = shimCurrentTimeInt64;
  realVfs = platform;
  if (sqlite3_vfs_register(&shimVfs, /*makeDefault=*/1) != SQLITE_OK) {
    realVfs = nullptr;
    return false;
  }
  return sqlite3_vfs_find(nullptr) == &shimVfs;
}

void resetCounts() {
  for (auto& c : counts) c.store(0);
}

int64_t count(Kind kind) { return counts[counterOf(kind)].load(); }

void arm(Kind kind, int64_t nth) {
  armed.store(false);
  resetCounts();
  failures.store(0);
  armedKind.store(kind);
  armedAt.store(nth);
  armed.store(true);
}

void disarm() { armed.store(false); }

void setRealSyncs(bool on) { realSyncs.store(on); }

void setSlowDisk(int writeMs, int syncMs) {
  slowWriteMs.store(writeMs);
  slowSyncMs.store(syncMs);
}

int64_t injected() { return failures.load(); }

}  // namespace ember::test::fault
