#include "server/request_deadline.h"

#include "server/peer_socket.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <utility>
#include <vector>

namespace ember::openai {
namespace {

constexpr std::chrono::milliseconds kScanInterval{500};

struct Accepted {
  int fd;
  std::string peerAddress;
  int peerPort;
};

// The process's sockets whose local port is the server's and that have a peer: the connections
// it accepted (the listening socket has no peer).
std::vector<Accepted> acceptedConnections(int serverPort) {
  std::vector<Accepted> out;
  DIR* dir = opendir("/proc/self/fd");
  if (!dir) return out;
  while (dirent* entry = readdir(dir)) {
    char* end = nullptr;
    const long fd = std::strtol(entry->d_name, &end, 10);
    if (end == entry->d_name || *end != '\0' || fd == dirfd(dir)) continue;
    struct stat st {};
    if (fstat(int(fd), &st) != 0 || !S_ISSOCK(st.st_mode)) continue;
    sockaddr_storage peer{}, local{};
    socklen_t peerLength = sizeof peer, localLength = sizeof local;
    if (getsockname(int(fd), reinterpret_cast<sockaddr*>(&local), &localLength) != 0) continue;
    std::string localAddress;
    int localPort = 0;
    if (!describeSocketAddress(local, &localAddress, &localPort) || localPort != serverPort) continue;
    if (getpeername(int(fd), reinterpret_cast<sockaddr*>(&peer), &peerLength) != 0) continue;
    Accepted a{int(fd), {}, 0};
    if (describeSocketAddress(peer, &a.peerAddress, &a.peerPort)) out.push_back(std::move(a));
  }
  closedir(dir);
  return out;
}

}  // namespace

RequestDeadline::RequestDeadline(std::chrono::milliseconds deadline,
                                 std::chrono::milliseconds keepAlive, std::string timedOutBody,
                                 std::function<void()> onTimeout)
    : deadline_(deadline), keepAlive_(keepAlive), onTimeout_(std::move(onTimeout)) {
  response_ = "HTTP/1.1 408 Request Timeout\r\nContent-Type: application/json\r\nContent-Length: " +
              std::to_string(timedOutBody.size()) + "\r\nConnection: close\r\n\r\n" + timedOutBody;
}

RequestDeadline::~RequestDeadline() { stop(); }

void RequestDeadline::start(int serverPort) {
  port_ = serverPort;
  if (deadline_.count() > 0) thread_ = std::thread([this] { watch(); });
}

void RequestDeadline::stop() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void RequestDeadline::arrived(const std::string& peerAddress, int peerPort) {
  std::lock_guard lock(mutex_);
  Connection& c = connections_[{peerAddress, peerPort}];
  c.serving = true;
}

void RequestDeadline::answered(const std::string& peerAddress, int peerPort) {
  bool close = false;
  {
    std::lock_guard lock(mutex_);
    Connection& c = connections_[{peerAddress, peerPort}];
    c.serving = false;
    c.receivingSince = std::chrono::steady_clock::now() + keepAlive_;
    close = std::exchange(c.closeAfterAnswer, false);
  }
  if (!close) return;
  // On httplib's thread, after the response and before it reads the next request.
  for (const Accepted& a : acceptedConnections(port_))
    if (a.peerAddress == peerAddress && a.peerPort == peerPort) ::shutdown(a.fd, SHUT_RDWR);
}

void RequestDeadline::closeAfterAnswer(const std::string& peerAddress, int peerPort) {
  if (peerPort == 0) return;  // httplib did not know the peer yet
  std::lock_guard lock(mutex_);
  connections_[{peerAddress, peerPort}].closeAfterAnswer = true;
}

void RequestDeadline::watch() {
  std::unique_lock lock(mutex_);
  while (!stopping_) {
    wake_.wait_for(lock, kScanInterval, [&] { return stopping_; });
    if (stopping_) break;
    lock.unlock();
    scan();
    lock.lock();
  }
}

void RequestDeadline::scan() {
  const std::vector<Accepted> sockets = acceptedConnections(port_);
  const auto now = std::chrono::steady_clock::now();
  std::vector<Accepted> late;
  {
    std::lock_guard lock(mutex_);
    for (auto& [peer, c] : connections_) c.seen = false;
    for (const Accepted& a : sockets) {
      auto [it, fresh] = connections_.try_emplace({a.peerAddress, a.peerPort});
      Connection& c = it->second;
      if (fresh) c.receivingSince = now;
      c.seen = true;
      if (!c.serving && now - c.receivingSince > deadline_) {
        late.push_back(a);
        c.receivingSince = now;  // once: the shutdown below ends the connection
      }
    }
    std::erase_if(connections_, [](const auto& entry) { return !entry.second.seen; });
  }
  for (const Accepted& a : late) {
    // The descriptor may have been closed and reused since the scan: it must still be the same
    // connection (same peer, same local port) to be cut.
    sockaddr_storage peer{}, local{};
    socklen_t peerLength = sizeof peer, localLength = sizeof local;
    std::string peerAddress, localAddress;
    int peerPort = 0, localPort = 0;
    const int fd = a.fd;
    if (getpeername(fd, reinterpret_cast<sockaddr*>(&peer), &peerLength) != 0 ||
        getsockname(fd, reinterpret_cast<sockaddr*>(&local), &localLength) != 0 ||
        !describeSocketAddress(peer, &peerAddress, &peerPort) ||
        !describeSocketAddress(local, &localAddress, &localPort) ||
        peerAddress != a.peerAddress || peerPort != a.peerPort || localPort != port_)
      continue;
    // The 408 goes out whole or not at all (a non-blocking send into a buffer that has room).
    (void)::send(fd, response_.data(), response_.size(), MSG_DONTWAIT | MSG_NOSIGNAL);
    ::shutdown(fd, SHUT_RDWR);  // httplib's blocked read returns; it closes the socket itself
    if (onTimeout_) onTimeout_();
  }
}

}  // namespace ember::openai
