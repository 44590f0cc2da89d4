#pragma once
// A fixed pool of worker threads for the CPU backend. parallelFor splits [0, n) into contiguous
// chunks, runs them on the workers and the calling thread, and returns when all are done. The
// callable is passed by reference (no heap allocation per call: the decode loop calls this for
// every matrix of every token).
//
// Workers persist between calls: after a call they spin briefly for the next one (a decode step
// issues ~200 calls back to back), then sleep on an atomic wait.
//
// Use rules:
// - [0, n) is cut into up to 2 chunks per thread of nearly equal size (whole grains), handed
//   out dynamically: one thread may run several chunks, in any order. The thread index passed
//   to f is in [0, size()) and unique among threads running at once (0 is the caller), so it
//   can select per-thread scratch.
// - A call from inside f on the same pool (nested) does not deadlock: it runs f over its whole
//   range on the calling thread, serially.
// - Calls from several threads on one pool at once are serialized (one runs at a time).
// - If f throws, the remaining chunks are skipped and the first exception is rethrown from
//   parallelFor in the caller once every thread has stopped.
#include <cstdint>
#include <type_traits>

namespace ember::cpu {

class ThreadPool {
 public:
  // threads <= 0 means one per physical core.
  explicit ThreadPool(int threads = 0);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int size() const;  // threads taking part, the caller included

  // Calls f(begin, end, threadIndex) over a split of [0, n); chunks are multiples of `grain`
  // (except the last one).
  template <class F>
  void parallelFor(int64_t n, int64_t grain, F&& f) {
    using Callable = std::remove_reference_t<F>;
    run(
        n, grain,
        [](void* ctx, int64_t b, int64_t e, int t) { (*static_cast<Callable*>(ctx))(b, e, t); },
        const_cast<void*>(static_cast<const void*>(&f)), Prologue{0, nullptr, nullptr});
  }

  // Calls before(begin, end, threadIndex) over a split of [0, m), then f as parallelFor does,
  // in one round trip: no chunk of f starts until every chunk of `before` has returned (its
  // writes are visible to f on every thread). For the per-token steps that must precede a
  // product: split over the threads instead of run by the caller while the workers wait. The
  // split of [0, m) is finer than f's (chunks of about a token for a decode step), handed out
  // first; a thread that draws a chunk of f waits only for chunks of `before` already taken.
  template <class B, class F>
  void parallelForAfter(int64_t m, B&& before, int64_t n, int64_t grain, F&& f) {
    using Before = std::remove_reference_t<B>;
    using Callable = std::remove_reference_t<F>;
    run(
        n, grain,
        [](void* ctx, int64_t b, int64_t e, int t) { (*static_cast<Callable*>(ctx))(b, e, t); },
        const_cast<void*>(static_cast<const void*>(&f)),
        {m, [](void* ctx, int64_t b, int64_t e,
               int t) { (*static_cast<Before*>(ctx))(b, e, t); },
         const_cast<void*>(static_cast<const void*>(&before))});
  }

  // Physical cores this process may run on (hyper-threads of one core count once).
  static int physicalCores();

 private:
  using Task = void (*)(void* ctx, int64_t begin, int64_t end, int thread);
  struct Prologue {  // before(begin, end, thread) over [0, n); n == 0: none
    int64_t n;
    Task task;
    void* ctx;
  };
  void run(int64_t n, int64_t grain, Task task, void* ctx, Prologue before);
  struct Impl;
  Impl* impl_;
};

}  // namespace ember::cpu
