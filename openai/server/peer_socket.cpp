#include "server/peer_socket.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace ember::openai {

bool describeSocketAddress(const sockaddr_storage& a, std::string* address, int* port) {
  char text[INET6_ADDRSTRLEN] = {};
  if (a.ss_family == AF_INET) {
    const auto& v4 = reinterpret_cast<const sockaddr_in&>(a);
    inet_ntop(AF_INET, &v4.sin_addr, text, sizeof text);
    *port = ntohs(v4.sin_port);
  } else if (a.ss_family == AF_INET6) {
    const auto& v6 = reinterpret_cast<const sockaddr_in6&>(a);
    inet_ntop(AF_INET6, &v6.sin6_addr, text, sizeof text);
    *port = ntohs(v6.sin6_port);
  } else {
    return false;
  }
  *address = text;
  return true;
}

PeerSocket::PeerSocket(const std::string& remoteAddress, int remotePort, int localPort) {
  DIR* dir = opendir("/proc/self/fd");
  if (!dir) return;
  while (dirent* entry = readdir(dir)) {
    char* end = nullptr;
    const long fd = std::strtol(entry->d_name, &end, 10);
    if (end == entry->d_name || *end != '\0' || fd == dirfd(dir)) continue;
    struct stat st {};
    if (fstat(int(fd), &st) != 0 || !S_ISSOCK(st.st_mode)) continue;
    sockaddr_storage peer{}, local{};
    socklen_t peerLength = sizeof peer, localLength = sizeof local;
    if (getpeername(int(fd), reinterpret_cast<sockaddr*>(&peer), &peerLength) != 0) continue;
    if (getsockname(int(fd), reinterpret_cast<sockaddr*>(&local), &localLength) != 0) continue;
    std::string peerAddress, localAddress;
    int peerPort = 0, ownPort = 0;
    if (!describeSocketAddress(peer, &peerAddress, &peerPort) ||
        !describeSocketAddress(local, &localAddress, &ownPort))
      continue;
    if (peerPort == remotePort && ownPort == localPort && peerAddress == remoteAddress) {
      fd_ = int(fd);
      break;
    }
  }
  closedir(dir);
}

bool PeerSocket::closed() const {
  if (fd_ < 0) return false;
  char byte;
  const ssize_t n = recv(fd_, &byte, 1, MSG_PEEK | MSG_DONTWAIT);
  if (n == 0) return true;  // orderly close
  if (n < 0) return errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR;
  return false;  // bytes waiting (a pipelined request): still there
}

}  // namespace ember::openai
