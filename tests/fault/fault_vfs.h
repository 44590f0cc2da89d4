#pragma once
// An SQLite VFS shim for fault-injection tests. It wraps the platform's default VFS, becomes the
// default itself (so code that opens databases the ordinary way goes through it), and counts the
// file operations of four kinds across every file SQLite opens (database, WAL, shared memory,
// journals, VACUUM INTO targets). When armed at N, the Nth operation of the chosen kind and every
// later one fails, as a full disk or a failing device keeps failing, until disarm().
//
//   Write    -> xWrite returns SQLITE_IOERR_WRITE
//   Sync     -> xSync returns SQLITE_IOERR_FSYNC
//   Lock     -> xLock returns SQLITE_IOERR_LOCK; taking a WAL shared-memory lock returns
//               SQLITE_IOERR_SHMLOCK
//   Busy     -> xLock and the WAL's write and checkpoint locks return SQLITE_BUSY (another
//               process holding the lock)
//   DiskFull -> xWrite returns SQLITE_FULL
//
// The file's own data is never changed by a failed call: the shim returns before the real one.
#include <cstdint>

namespace ember::test::fault {

enum class Kind { Write, Sync, Lock, Busy, DiskFull };

const char* kindName(Kind kind);

// Registers the shim as the default VFS (idempotent). Returns false when SQLite refused.
bool install();

// Counting restarts from zero; nothing fails until arm().
void resetCounts();
// The calls of `kind`'s class seen since resetCounts(): writes for Write/DiskFull, syncs for
// Sync, lock acquisitions for Lock, the contended ones among them for Busy.
int64_t count(Kind kind);

// Restarts counting; from the `nth` call of `kind`'s class on (1-based), every such call fails
// with `kind`'s code.
void arm(Kind kind, int64_t nth);
void disarm();
// Whether a sync that does not fail reaches the disk (default: no). The tests check what the
// store does with errors, not durability across a power cut, and hundreds of fault points times
// a few fsyncs each would otherwise take minutes on a busy disk. The sync is still counted and
// can still fail.
void setRealSyncs(bool on);
// A slow disk: from now on every write sleeps `writeMs` and every sync `syncMs` before it runs
// (0, 0: full speed again). Independent of arm(); for tests of who waits for the disk.
void setSlowDisk(int writeMs, int syncMs);
// How many calls failed since the last arm().
int64_t injected();

// A slow disk for the lifetime of the scope.
class SlowDisk {
 public:
  SlowDisk(int writeMs, int syncMs) { setSlowDisk(writeMs, syncMs); }
  ~SlowDisk() { setSlowDisk(0, 0); }
  SlowDisk(const SlowDisk&) = delete;
  SlowDisk& operator=(const SlowDisk&) = delete;
};

// Arms for the lifetime of the scope.
class Armed {
 public:
  Armed(Kind kind, int64_t nth) { arm(kind, nth); }
  ~Armed() { disarm(); }
  Armed(const Armed&) = delete;
  Armed& operator=(const Armed&) = delete;
};

}  // namespace ember::test::fault
