#pragma once
// The OpenAI-compatible HTTP server over any Generator (the local EngineHost, or later a router
// over several): /v1/chat/completions, /v1/completions, /v1/models, /health, /metrics, behind
// the gateway (keys, Host/Origin checks, body and header limits, per-key rate limits and a
// bounded queue answering 429), with a usage meter, metrics and one log line per request.
#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "ember/generator.h"

namespace ember::openai {

struct ServerOptions {
  std::string host = "127.0.0.1";
  int port = 8080;                      // 0: any free port (see ApiServer::port)
  std::vector<std::string> apiKeys;     // empty: no key needed (loopback only)
  std::vector<std::string> allowedOrigins;  // CORS; empty: cross-origin requests are refused
  std::vector<std::string> allowedHosts;    // Host names accepted besides the bound one
  int runningSlots = 4;     // the generator's parallel requests
  int queueLimit = 64;      // admitted requests waiting beyond the running slots
  double requestsPerMinute = 0;  // per key; 0: no limit
  double tokensPerMinute = 0;    // per key, prompt + completion; 0: no limit
  size_t maxBodyBytes = 8u << 20;
  size_t maxHeaderCount = 128;
  int readTimeoutSeconds = 15;  // each read of a request
  // The whole request (line, headers, body) must arrive within this, or the client gets a 408
  // and the connection is closed (a slow client cannot hold a worker). 0: no deadline.
  int requestTimeoutSeconds = 30;
  int writeTimeoutSeconds = 15;
  std::string usageDatabase;     // empty: no usage meter
  std::string logFile;           // empty: the request log goes to stderr
  bool logPrompts = false;       // the request log never holds prompt text unless this is set
  // More Prometheus text appended to /metrics (ember-serve's per-upstream series); null: none.
  std::function<std::string()> extraMetrics;
};

class ApiServer {
 public:
  // Throws ember::Error for options it refuses (a non-loopback bind without a key, bad limits).
  ApiServer(Generator& generator, ServerOptions options);
  ~ApiServer();  // stops and joins

  // Binds (throws ember::Error when it cannot) and serves on a thread of its own.
  void start();
  // Stops accepting, ends the streams still open with an error event, joins.
  void stop();
  int port() const;
  std::string address() const;  // http://host:port

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace ember::openai
