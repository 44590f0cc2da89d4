#pragma once
// Helpers for the tests that talk to real servers on loopback: a server process that reports or
// is given its port and stops with the test, and one request run to its Finished event.
#include <QElapsedTimer>
#include <QProcess>
#include <QtTest>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <condition_variable>
#include <mutex>

#include "ember/generator.h"

namespace ember::test {

// The result of one request: its text pieces, and the stats of its Finished event.
struct Outcome {
  std::string text;
  std::vector<std::string> pieces;
  RequestStats stats;
  bool finished = false;
  int finishedEvents = 0;
  int waitingEvents = 0;  // Progress events with waiting = true
  Clock::time_point finishedAt;
};

// Collects a request's events on the generator's thread; wait() blocks until Finished.
class Collector {
 public:
  // abortAfter > 0: calls abortFn after that many text pieces (from the event thread).
  EventSink sink(int abortAfter = 0, std::function<void()> abortFn = {}) {
    return [this, abortAfter, abortFn](const RequestEvent& e) {
      std::lock_guard lock(mutex_);
      if (e.kind == RequestEvent::Kind::Text) {
        outcome_.text += e.text;
        outcome_.pieces.push_back(e.text);
        if (abortAfter > 0 && static_cast<int>(outcome_.pieces.size()) == abortAfter) abortFn();
      } else if (e.kind == RequestEvent::Kind::Progress) {
        if (e.waiting) outcome_.waitingEvents++;
      } else if (e.kind == RequestEvent::Kind::Finished) {
        outcome_.stats = *e.stats;
        outcome_.finished = true;
        outcome_.finishedEvents++;
        outcome_.finishedAt = Clock::now();
        cv_.notify_all();
      }
    };
  }
  Outcome wait(int timeoutMs = 30000) {
    std::unique_lock lock(mutex_);
    cv_.wait_for(lock, std::chrono::milliseconds(timeoutMs), [&] { return outcome_.finished; });
    return outcome_;
  }

 private:
  std::mutex mutex_;
  std::condition_variable cv_;
  Outcome outcome_;
};

inline Outcome runRequest(Generator& g, GenerationRequest request, int timeoutMs = 30000) {
  Collector c;
  g.submit(std::move(request), c.sink());
  return c.wait(timeoutMs);
}

inline GenerationRequest chatRequest(const std::string& model, const std::string& user,
                                     int maxTokens = 16) {
  GenerationRequest r;
  r.model = model;
  r.messages = nlohmann::ordered_json::array({{{"role", "user"}, {"content", user}}});
  r.sampling.temperature = 0;
  r.sampling.maxTokens = maxTokens;
  return r;
}

inline bool connectsTo(int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  const bool ok = ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
  ::close(fd);
  return ok;
}

// A port nothing listens on right now (the OS picked it, then it was closed).
inline int freePort() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
  socklen_t len = sizeof addr;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  ::close(fd);
  return ntohs(addr.sin_port);
}

// Waits until `port` on 127.0.0.1 accepts connections or the process exits.
inline bool waitForPort(QProcess& process, int port, int timeoutMs) {
  QElapsedTimer timer;
  timer.start();
  while (timer.elapsed() < timeoutMs) {
    if (process.state() == QProcess::NotRunning) return false;
    if (connectsTo(port)) return true;
    QTest::qWait(100);
  }
  return false;
}

}  // namespace ember::test
