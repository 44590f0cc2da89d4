// ThreadPool: every index of [0, n) visited exactly once, chunk boundaries on multiples of the
// grain, thread indices in range; behaviour across idle periods (workers asleep), nested and
// concurrent calls, exceptions; parallelForAfter's prologue done before any chunk of the job;
// physicalCores() against lscpu (util-linux) where available.
#include <QtTest>
#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <set>
#include <stdexcept>
#include <thread>
#include <vector>

#include "backend/cpu/thread_pool.h"
#include "common/test_paths.h"

using ember::cpu::ThreadPool;

class TestThreadPool : public QObject {
  Q_OBJECT

 private slots:
  void everyIndexOnce_data() {
    QTest::addColumn<int>("threads");
    QTest::addColumn<qint64>("n");
    QTest::addColumn<qint64>("grain");
    for (int threads : {1, 2, 3, 5})
      for (qint64 n : {0, 1, 2, 3, 7, 64, 1001, 100003})
        for (qint64 grain : {1, 3, 4, 64, 5000})
          QTest::addRow("%d threads n=%lld grain=%lld", threads, (long long)n, (long long)grain)
              << threads << n << grain;
  }
  void everyIndexOnce() {
    QFETCH(int, threads);
    QFETCH(qint64, n);
    QFETCH(qint64, grain);
    ThreadPool pool(threads);
    QCOMPARE(pool.size(), threads);
    for (int round = 0; round < 3; ++round) {
      std::unique_ptr<std::atomic<int>[]> visits(new std::atomic<int>[size_t(n) + 1]);
      for (qint64 i = 0; i <= n; ++i) visits[size_t(i)] = 0;
      std::atomic<int> badChunks{0}, badThreads{0};
      pool.parallelFor(n, grain, [&](int64_t begin, int64_t end, int thread) {
        if (begin >= end || begin % grain != 0 || (end % grain != 0 && end != n)) ++badChunks;
        if (thread < 0 || thread >= threads) ++badThreads;
        for (int64_t i = begin; i < end; ++i) visits[size_t(i)].fetch_add(1);
      });
      QCOMPARE(badChunks.load(), 0);
      QCOMPARE(badThreads.load(), 0);
      for (qint64 i = 0; i < n; ++i) QCOMPARE(visits[size_t(i)].load(), 1);
    }
  }

  // Many back-to-back calls (workers spinning), then calls after idle periods (workers asleep).
  void manyCallsAndIdlePeriods() {
    ThreadPool pool(3);
    std::vector<int64_t> sums(3);
    std::atomic<int64_t> total{0};
    for (int call = 0; call < 20000; ++call)
      pool.parallelFor(64, 1, [&](int64_t b, int64_t e, int) {
        int64_t s = 0;
        for (int64_t i = b; i < e; ++i) s += i;
        total.fetch_add(s, std::memory_order_relaxed);
      });
    QCOMPARE(total.load(), int64_t(20000) * (63 * 64 / 2));
    for (int call = 0; call < 5; ++call) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      std::atomic<int64_t> count{0};
      pool.parallelFor(1000, 10, [&](int64_t b, int64_t e, int) { count += e - b; });
      QCOMPARE(count.load(), int64_t(1000));
    }
  }

  // Each thread index is held by one thread at a time, so per-thread scratch is safe.
  void threadIndexIsExclusive() {
    ThreadPool pool(4);
    std::vector<std::atomic<int>> inUse(4);
    std::atomic<int> clashes{0};
    for (int round = 0; round < 200; ++round)
      pool.parallelFor(400, 1, [&](int64_t, int64_t, int t) {
        if (inUse[size_t(t)].fetch_add(1) != 0) ++clashes;
        std::this_thread::yield();
        inUse[size_t(t)].fetch_sub(1);
      });
    QCOMPARE(clashes.load(), 0);
  }

  // Every worker takes chunks (no timing: chunks that sleep leave the CPU to the workers; the
  // union over a few calls must hold every thread index).
  void everyThreadTakesPart() {
    ThreadPool pool(3);
    std::set<int> seen;
    std::mutex mutex;
    for (int call = 0; call < 20 && seen.size() < 3; ++call)
      pool.parallelFor(12, 1, [&](int64_t, int64_t, int t) {
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
        std::lock_guard lock(mutex);
        seen.insert(t);
      });
    QCOMPARE(seen, (std::set<int>{0, 1, 2}));
  }

  // A call from inside a task on the same pool runs serially on the calling thread.
  void nestedCallRunsInline() {
    ThreadPool pool(3);
    std::atomic<int64_t> inner{0};
    std::atomic<int> wrongThread{0};
    pool.parallelFor(6, 1, [&](int64_t b, int64_t e, int outerThread) {
      for (int64_t i = b; i < e; ++i)
        pool.parallelFor(100, 7, [&](int64_t ib, int64_t ie, int innerThread) {
          if (innerThread != outerThread || ib != 0 || ie != 100) ++wrongThread;
          inner += ie - ib;
        });
    });
    QCOMPARE(inner.load(), int64_t(600));
    QCOMPARE(wrongThread.load(), 0);
  }

  // Calls from several threads on one pool are serialized and all complete correctly.
  void concurrentCallers() {
    ThreadPool pool(3);
    std::atomic<int> errors{0};
    std::vector<std::thread> callers;
    for (int c = 0; c < 4; ++c)
      callers.emplace_back([&, c] {
        for (int call = 0; call < 500; ++call) {
          std::atomic<int64_t> count{0};
          const int64_t n = 50 + c * 17 + call % 13;
          pool.parallelFor(n, 2, [&](int64_t b, int64_t e, int) { count += e - b; });
          if (count.load() != n) ++errors;
        }
      });
    for (std::thread& t : callers) t.join();
    QCOMPARE(errors.load(), 0);
  }

  void exceptionReachesCaller() {
    ThreadPool pool(3);
    for (int round = 0; round < 3; ++round) {
      bool caught = false;
      try {
        pool.parallelFor(1000, 1, [&](int64_t b, int64_t e, int) {
          if (b <= 500 && 500 < e) throw std::runtime_error("chunk 500");
        });
      } catch (const std::runtime_error& e) {
        caught = QString(e.what()) == "chunk 500";
      }
      QVERIFY(caught);
      std::atomic<int64_t> count{0};  // still usable afterwards
      pool.parallelFor(1000, 1, [&](int64_t b, int64_t e, int) { count += e - b; });
      QCOMPARE(count.load(), int64_t(1000));
    }
  }

  // parallelForAfter: every index of both ranges once, and no chunk of f before the whole
  // prologue: f checks every prologue mark when it starts (a prologue chunk that were still
  // running, or not yet drawn, would leave one unset). The prologue's chunks sleep a little so
  // that a thread drawing f's first chunk early would see them unfinished.
  void prologueFinishesBeforeEveryChunk_data() {
    QTest::addColumn<int>("threads");
    QTest::addColumn<qint64>("m");
    QTest::addColumn<qint64>("n");
    QTest::addColumn<qint64>("grain");
    for (int threads : {1, 2, 3})
      for (qint64 m : {0, 1, 2, 8, 9, 100})
        for (qint64 n : {0, 1, 5, 64})
          QTest::addRow("%d threads m=%lld n=%lld", threads, (long long)m, (long long)n)
              << threads << m << n << qint64(n == 64 ? 4 : 1);
  }
  void prologueFinishesBeforeEveryChunk() {
    QFETCH(int, threads);
    QFETCH(qint64, m);
    QFETCH(qint64, n);
    QFETCH(qint64, grain);
    ThreadPool pool(threads);
    for (int round = 0; round < 3; ++round) {
      std::unique_ptr<std::atomic<int>[]> marks(new std::atomic<int>[size_t(m) + 1]);
      std::unique_ptr<std::atomic<int>[]> visits(new std::atomic<int>[size_t(n) + 1]);
      for (qint64 i = 0; i <= m; ++i) marks[size_t(i)] = 0;
      for (qint64 i = 0; i <= n; ++i) visits[size_t(i)] = 0;
      std::atomic<int> early{0}, badThreads{0};
      pool.parallelForAfter(
          m,
          [&](int64_t b, int64_t e, int thread) {
            if (thread < 0 || thread >= threads) ++badThreads;
            std::this_thread::sleep_for(std::chrono::microseconds(50));
            for (int64_t i = b; i < e; ++i) marks[size_t(i)].fetch_add(1);
          },
          n, grain,
          [&](int64_t b, int64_t e, int thread) {
            if (thread < 0 || thread >= threads) ++badThreads;
            for (qint64 i = 0; i < m; ++i)
              if (marks[size_t(i)].load() != 1) ++early;
            for (int64_t i = b; i < e; ++i) visits[size_t(i)].fetch_add(1);
          });
      QCOMPARE(early.load(), 0);
      QCOMPARE(badThreads.load(), 0);
      for (qint64 i = 0; i < m; ++i) QCOMPARE(marks[size_t(i)].load(), 1);
      for (qint64 i = 0; i < n; ++i) QCOMPARE(visits[size_t(i)].load(), 1);
    }
  }

  // Both parts of one call run on more than one thread: a decode step's per-token prologue is
  // split, not left to the caller (each chunk waits until another thread has taken one).
  void prologueIsSplitAcrossThreads() {
    ThreadPool pool(2);
    std::mutex mutex;
    std::set<int> seen;
    std::atomic<int> started{0};
    pool.parallelForAfter(
        2,
        [&](int64_t, int64_t, int thread) {
          {
            std::lock_guard lock(mutex);
            seen.insert(thread);
          }
          ++started;
          const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
          while (started.load() < 2 && std::chrono::steady_clock::now() < deadline) {
          }
        },
        4, 1, [](int64_t, int64_t, int) {});
    QCOMPARE(seen, (std::set<int>{0, 1}));
  }

  // An exception in the prologue reaches the caller, f is skipped, the pool stays usable.
  void prologueExceptionReachesCaller() {
    ThreadPool pool(3);
    for (int round = 0; round < 3; ++round) {
      std::atomic<int64_t> ran{0};
      bool caught = false;
      try {
        pool.parallelForAfter(
            8,
            [&](int64_t b, int64_t e, int) {
              if (b <= 5 && 5 < e) throw std::runtime_error("prologue 5");
            },
            100, 1, [&](int64_t b, int64_t e, int) { ran += e - b; });
      } catch (const std::runtime_error& e) {
        caught = QString(e.what()) == "prologue 5";
      }
      QVERIFY(caught);
      QCOMPARE(ran.load(), int64_t(0));
      std::atomic<int64_t> count{0};
      pool.parallelForAfter(
          8, [&](int64_t b, int64_t e, int) { count += e - b; }, 100, 1,
          [&](int64_t b, int64_t e, int) { count += e - b; });
      QCOMPARE(count.load(), int64_t(108));
    }
  }

  void defaultSizeIsPhysicalCores() {
    const int cores = ThreadPool::physicalCores();
    QVERIFY(cores >= 1);
    QVERIFY(cores <= int(std::max(1u, std::thread::hardware_concurrency())));
    ThreadPool pool;
    QCOMPARE(pool.size(), cores);
    // Independent count: lscpu's (core, socket) pairs, when every CPU is ours to use.
    QByteArray all, mine, table;
    if (ember::test::runProcess("nproc", {"--all"}, &all) != 0 ||
        ember::test::runProcess("nproc", {}, &mine) != 0 || all.trimmed() != mine.trimmed() ||
        ember::test::runProcess("lscpu", {"-p=CORE,SOCKET"}, &table) != 0)
      QSKIP("lscpu/nproc unavailable, or the process is restricted to some CPUs");
    std::set<QByteArray> pairs;
    for (const QByteArray& line : table.split('\n'))
      if (!line.isEmpty() && !line.startsWith('#')) pairs.insert(line.trimmed());
    QCOMPARE(cores, int(pairs.size()));
  }
};

QTEST_APPLESS_MAIN(TestThreadPool)
#include "test_thread_pool.moc"
