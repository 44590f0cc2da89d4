#pragma once
// RemoteGenerator: a Generator over an OpenAI-compatible server (vLLM, llama.cpp's server,
// another Ember) at a base URL such as http://127.0.0.1:8000/v1, with an optional API key.
//
// Requests stream over HTTP + SSE on the generator's own thread (one libcurl multi handle for all
// of them). Failures become clear messages in RequestStats::error, with the text that arrived
// kept; a failure before any byte of an answer (connection refused, 429, 502-504) is retried with
// backoff, and is marked `retryable` when the retries are spent. abort() closes the connection.
// The key is sent only in the Authorization header and never appears in a message or a log.
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "ember/generator.h"

namespace ember::openai {

struct RemoteServerOptions {
  std::string name;     // shown in messages and as the models' owner; empty: host:port
  std::string baseUrl;  // the OpenAI base URL, ending in /v1 for most servers
  std::string apiKey;   // empty: no Authorization header
  std::string defaultModel;  // for requests that name none; empty: the server's only model
  std::chrono::milliseconds connectTimeout{5000};
  std::chrono::milliseconds readTimeout{120000};  // the longest silence inside an answer
  int maxRetries = 2;                               // before any byte of an answer arrived
  std::chrono::milliseconds retryBackoff{250};      // doubled after each try
  std::chrono::milliseconds maxRetryAfter{10000};   // a longer 429 Retry-After fails at once
};

struct HealthCheck {
  bool healthy = false;
  std::string message;  // why not
  double roundTripMs = 0;
  std::string probed;   // "/health" or "/models"
};

class RemoteGenerator final : public Generator {
 public:
  explicit RemoteGenerator(RemoteServerOptions options);
  ~RemoteGenerator() override;  // ends every open request as Cancelled, then joins its thread
  RemoteGenerator(const RemoteGenerator&) = delete;
  RemoteGenerator& operator=(const RemoteGenerator&) = delete;

  RequestId submit(GenerationRequest request, EventSink sink) override;
  void abort(RequestId id) override;
  // The models of the last successful fetchModels() (fetched on the first call).
  std::vector<GeneratorModel> models() const override;
  GeneratorStatus status() const override;

  // GET <base>/models on the calling thread. Throws ember::Error with a clear message.
  std::vector<GeneratorModel> fetchModels() const;
  // GET /health at the server's root (vLLM, llama.cpp, Ember), else <base>/models.
  HealthCheck checkHealth() const;

  const std::string& name() const { return options_.name; }
  const std::string& baseUrl() const { return options_.baseUrl; }

 private:
  void run();  // the transfer loop (remote_generator_loop.cpp)

 public:
  struct Transfer;  // internal: one request in flight, seen by libcurl's callbacks
  struct Loop;

 private:

  RemoteServerOptions options_;
  std::unique_ptr<Loop> loop_;
  mutable std::mutex modelsMutex_;
  mutable std::vector<GeneratorModel> models_;
  mutable std::string lastError_;
  std::thread thread_;
};

}  // namespace ember::openai
