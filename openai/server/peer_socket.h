#pragma once
// Whether the client of a request is still there. cpp-httplib (0.11, Debian 12) gives a handler
// the peer's address and port but not its socket, so the socket is found once by matching those
// among the process's sockets; then a non-blocking peek tells an orderly close or a reset.
#include <sys/socket.h>

#include <string>

namespace ember::openai {

// The address and port of a socket address, as inet_ntop writes them; false for a family other
// than IPv4 and IPv6.
bool describeSocketAddress(const sockaddr_storage& a, std::string* address, int* port);

class PeerSocket {
 public:
  PeerSocket(const std::string& remoteAddress, int remotePort, int localPort);
  // True when the peer closed or reset the connection. Without a found socket: false.
  bool closed() const;
  bool found() const { return fd_ >= 0; }

 private:
  int fd_ = -1;
};

}  // namespace ember::openai
