#pragma once
// A deadline for the arrival of each whole request (request line, headers and body). cpp-httplib
// (0.11, Debian 12) times out each read on its own, so a client sending a byte a second would
// hold a connection and a worker thread forever. A watchdog thread looks at the server's
// accepted connections twice a second; one that has been receiving a request for longer than
// the deadline gets a 408 with an OpenAI error body and is shut down, which ends httplib's read
// and frees its thread. A connection is "receiving" from when it is first seen, or from the end
// of its previous response, until its request reaches a handler whole (arrived()).
// It also closes a connection whose stream position is lost (a request refused before its body
// was read, or with an ambiguous length) right after the refusal is written, so that no bytes of
// it are read as a next request.
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <thread>

namespace ember::openai {

class RequestDeadline {
 public:
  // timedOutBody: the 408 response's JSON body. onTimeout: called once per connection cut.
  // A zero deadline: no watchdog (closeAfterAnswer still works).
  // keepAlive: how long httplib keeps an idle connection open between requests; the deadline
  // of a next request starts after it, so an idle connection is closed by httplib, never cut
  // with a 408 that a client would read as its next request's answer.
  RequestDeadline(std::chrono::milliseconds deadline, std::chrono::milliseconds keepAlive,
                  std::string timedOutBody, std::function<void()> onTimeout);
  ~RequestDeadline();  // stops the watchdog

  void start(int serverPort);
  void stop();
  // From the gateway: the request of this peer has arrived whole and is being served.
  void arrived(const std::string& peerAddress, int peerPort);
  // After its response is written: the connection may now receive its next request.
  void answered(const std::string& peerAddress, int peerPort);
  // This peer's connection is shut down once its current response is written (answered()).
  void closeAfterAnswer(const std::string& peerAddress, int peerPort);

 private:
  struct Connection {
    std::chrono::steady_clock::time_point receivingSince;
    bool serving = false;
    bool seen = false;  // in the latest scan
    bool closeAfterAnswer = false;
  };
  using Peer = std::pair<std::string, int>;
  void watch();
  void scan();

  std::chrono::milliseconds deadline_;
  std::chrono::milliseconds keepAlive_;
  std::string response_;  // the whole 408 response, status line to body
  std::function<void()> onTimeout_;
  int port_ = 0;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;
  std::map<Peer, Connection> connections_;
  std::thread thread_;
};

}  // namespace ember::openai
