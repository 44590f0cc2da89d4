#include "backend/cpu/thread_pool.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace ember::cpu {

namespace {

// How long an idle worker polls for the next call before it sleeps. Long enough to bridge the
// serial work between two matrix products of a decode step, short enough not to burn a core
// between requests.
constexpr auto kWorkerSpin = std::chrono::microseconds(200);
// How many times the caller polls for the last chunks before it sleeps (~0.1 ms): chunks are
// short, but a worker the OS has descheduled should not be waited for by burning a core.
constexpr int kCallerSpins = 1 << 13;
// Chunks per thread: more than one so that a thread delayed by the OS does not hold the call;
// few, because the repacked products prefetch a chunk's next row group while they compute, and
// the first group of every chunk starts cold (4 per thread measured 3-7% slower than 2 for
// batched decode, 1-chat decode and prompts with 2 threads).
constexpr int64_t kChunksPerThread = 2;
// Chunks of a prologue (parallelForAfter's `before`) per thread: its steps are short and cold
// starts cost nothing there, so it is cut finer (one token each in a decode step of 8).
constexpr int64_t kPrologueChunksPerThread = 8;
constexpr uint32_t kClosed = 0xffffffffu;

thread_local const void* tlsRunningPool = nullptr;  // the pool whose chunk this thread runs
thread_local int tlsThreadIndex = 0;                // ... and this thread's index in it

// Marks this thread as running chunks of `pool` for its lifetime (nested calls check it).
class RunningOn {
 public:
  RunningOn(const void* pool, int thread)
      : outerPool_(tlsRunningPool), outerIndex_(tlsThreadIndex) {
    tlsRunningPool = pool;
    tlsThreadIndex = thread;
  }
  ~RunningOn() {
    tlsRunningPool = outerPool_;
    tlsThreadIndex = outerIndex_;
  }
  RunningOn(const RunningOn&) = delete;
  RunningOn& operator=(const RunningOn&) = delete;

 private:
  const void* outerPool_;
  int outerIndex_;
};

inline void cpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  _mm_pause();
#endif
}

inline uint64_t packState(uint32_t job, uint32_t next) { return uint64_t(job) << 32 | next; }

}  // namespace

struct ThreadPool::Impl {
  // The current job. `chunkCount` is read before a chunk is claimed and so is atomic; the other
  // fields are read only by a thread holding a claimed chunk, and rewritten only once every
  // chunk of the job is done.
  Task task = nullptr;
  void* ctx = nullptr;
  int64_t n = 0;
  int64_t grain = 1;
  int64_t units = 0;  // grains in [0, n); chunk i covers grains [i * units / count, ...)
  // The prologue's chunks come first: indices [0, beforeChunks) cover [0, before.n), the rest
  // the job's own chunks. chunkCount counts both.
  Prologue before;
  uint32_t beforeChunks = 0;
  std::atomic<uint32_t> chunkCount{0};

  // (job id << 32 | next chunk index); the index is kClosed while the next job is being set up,
  // so that a thread still holding an old job id cannot claim a chunk of the new one.
  alignas(64) std::atomic<uint64_t> state{packState(0, kClosed)};
  alignas(64) std::atomic<uint32_t> doneChunks{0};
  alignas(64) std::atomic<uint32_t> beforeDone{0};  // prologue chunks finished
  alignas(64) std::atomic<uint32_t> generation{0};  // the id of the latest job; workers wait on it
  std::atomic<int> sleepingWorkers{0};
  std::atomic<bool> callerSleeping{false};
  std::atomic<bool> stopping{false};
  std::atomic<bool> failed{false};

  int threads = 1;
  std::vector<std::thread> workers;
  std::mutex callMutex;  // one call at a time
  std::mutex errorMutex;
  std::exception_ptr error;

  void runChunks(uint32_t job, int thread);
  uint32_t waitForJob(uint32_t seen);
  void workerLoop(int thread);
};

void ThreadPool::Impl::runChunks(uint32_t job, int thread) {
  const RunningOn running(this, thread);
  for (;;) {
    uint64_t s = state.load(std::memory_order_acquire);
    if (uint32_t(s >> 32) != job) break;
    const uint32_t index = uint32_t(s);
    if (index >= chunkCount.load(std::memory_order_acquire)) break;  // also true when closed
    if (!state.compare_exchange_weak(s, s + 1, std::memory_order_acq_rel)) continue;
    const uint32_t count = chunkCount.load(std::memory_order_relaxed);
    const uint32_t prologue = beforeChunks;
    const bool inPrologue = index < prologue;
    // The job's own chunks start once every prologue chunk is done; those were all handed out
    // before this one, so the threads running them are not waiting for anything.
    if (!inPrologue)
      while (beforeDone.load(std::memory_order_acquire) != prologue) cpuRelax();
    if (!failed.load(std::memory_order_relaxed)) {
      try {
        if (inPrologue) {
          before.task(before.ctx, int64_t(index) * before.n / prologue,
                      (int64_t(index) + 1) * before.n / prologue, thread);
        } else {
          const int64_t i = index - prologue, chunks = count - prologue;
          const int64_t begin = i * units / chunks * grain;
          const int64_t end = std::min(n, (i + 1) * units / chunks * grain);
          task(ctx, begin, end, thread);
        }
      } catch (...) {
        std::lock_guard lock(errorMutex);
        if (!error) error = std::current_exception();
        failed.store(true, std::memory_order_relaxed);
      }
    }
    if (inPrologue) beforeDone.fetch_add(1, std::memory_order_release);
    if (doneChunks.fetch_add(1, std::memory_order_seq_cst) + 1 == count &&
        callerSleeping.load(std::memory_order_seq_cst))
      doneChunks.notify_all();
  }
}

uint32_t ThreadPool::Impl::waitForJob(uint32_t seen) {
  const auto start = std::chrono::steady_clock::now();
  for (uint32_t i = 1;; ++i) {
    const uint32_t g = generation.load(std::memory_order_acquire);
    if (g != seen) return g;
    cpuRelax();
    if (i % 256 == 0 && std::chrono::steady_clock::now() - start > kWorkerSpin) break;
  }
  // The caller bumps `generation` and then reads `sleepingWorkers`; we do the opposite, so with
  // sequentially consistent operations one of us sees the other.
  sleepingWorkers.fetch_add(1, std::memory_order_seq_cst);
  uint32_t g;
  while ((g = generation.load(std::memory_order_seq_cst)) == seen) generation.wait(seen);
  sleepingWorkers.fetch_sub(1, std::memory_order_relaxed);
  return g;
}

void ThreadPool::Impl::workerLoop(int thread) {
  uint32_t seen = 0;
  for (;;) {
    seen = waitForJob(seen);
    if (stopping.load(std::memory_order_acquire)) return;
    runChunks(seen, thread);
  }
}

ThreadPool::ThreadPool(int threads) : impl_(new Impl) {
  impl_->threads = threads > 0 ? threads : physicalCores();
  impl_->workers.reserve(size_t(impl_->threads - 1));
  for (int t = 1; t < impl_->threads; ++t)
    impl_->workers.emplace_back([impl = impl_, t] { impl->workerLoop(t); });
}

ThreadPool::~ThreadPool() {
  impl_->stopping.store(true, std::memory_order_release);
  impl_->generation.fetch_add(1, std::memory_order_seq_cst);
  impl_->generation.notify_all();
  for (std::thread& worker : impl_->workers) worker.join();
  delete impl_;
}

int ThreadPool::size() const { return impl_->threads; }

void ThreadPool::run(int64_t n, int64_t grain, Task task, void* ctx, Prologue before) {
  if (before.n <= 0) before = {};
  if (n <= 0) {
    if (before.n == 0) return;
    n = 0;  // the prologue alone
  }
  grain = std::max<int64_t>(grain, 1);
  const int64_t units = (n + grain - 1) / grain;
  Impl& p = *impl_;
  auto runAll = [&](int thread) {
    if (before.n > 0) before.task(before.ctx, 0, before.n, thread);
    if (n > 0) task(ctx, 0, n, thread);
  };
  if (tlsRunningPool == &p) {  // nested: this thread runs it all, under its own index
    runAll(tlsThreadIndex);
    return;
  }
  std::lock_guard call(p.callMutex);
  if (p.threads == 1 || (units <= 1 && before.n <= 1)) {
    const RunningOn running(&p, 0);
    runAll(0);
    return;
  }
  const int64_t chunks = std::min<int64_t>(units, p.threads * kChunksPerThread);
  const int64_t beforeChunks = std::min<int64_t>(before.n, p.threads * kPrologueChunksPerThread);
  const uint32_t job = uint32_t(p.state.load(std::memory_order_relaxed) >> 32) + 1;

  // Close the index under the new job id before touching the fields (see Impl::state).
  p.state.store(packState(job, kClosed), std::memory_order_seq_cst);
  p.task = task;
  p.ctx = ctx;
  p.n = n;
  p.grain = grain;
  p.units = units;
  p.before = before;
  p.beforeChunks = uint32_t(beforeChunks);
  p.doneChunks.store(0, std::memory_order_relaxed);
  p.beforeDone.store(0, std::memory_order_relaxed);
  p.failed.store(false, std::memory_order_relaxed);
  p.chunkCount.store(uint32_t(beforeChunks + chunks), std::memory_order_release);
  p.state.store(packState(job, 0), std::memory_order_release);
  p.generation.store(job, std::memory_order_seq_cst);
  if (p.sleepingWorkers.load(std::memory_order_seq_cst) > 0) p.generation.notify_all();

  p.runChunks(job, 0);

  const uint32_t count = p.chunkCount.load(std::memory_order_relaxed);
  for (int spins = 0; p.doneChunks.load(std::memory_order_acquire) != count;) {
    if (++spins < kCallerSpins) {
      cpuRelax();
      continue;
    }
    p.callerSleeping.store(true, std::memory_order_seq_cst);
    const uint32_t done = p.doneChunks.load(std::memory_order_seq_cst);
    if (done != count) p.doneChunks.wait(done);
    p.callerSleeping.store(false, std::memory_order_relaxed);
  }
  if (p.failed.load(std::memory_order_relaxed)) {
    std::exception_ptr error;
    {
      std::lock_guard lock(p.errorMutex);
      std::swap(error, p.error);
    }
    std::rethrow_exception(error);
  }
}

}  // namespace ember::cpu
