#pragma once
// ApiServer's insides, shared by its files: the gateway state, the routes (api_server.cpp) and
// the generation endpoints (completion_routes.cpp).
#include <httplib.h>
#include <spdlog/logger.h>

#include <atomic>
#include <memory>
#include <optional>
#include <string>
#include <thread>

#include "codec/api_error.h"
#include "codec/request_codec.h"
#include "codec/response_codec.h"
#include "server/api_server.h"
#include "server/gateway.h"
#include "server/metrics.h"
#include "server/request_deadline.h"
#include "server/usage_meter.h"

namespace ember::openai {

// What the gateway established about one HTTP request.
struct RequestContext {
  std::string requestId;  // also sent back as X-Request-Id
  std::string keyId;      // "key-1", ... or "local" without keys
  std::string endpoint;   // "chat", "completions", ...
  Clock::time_point received;
  std::string promptForLog;  // only with ServerOptions::logPrompts
};

struct ApiServer::Impl {
  Impl(Generator& g, ServerOptions o);

  Generator& generator;
  ServerOptions options;
  ApiKeys keys;
  RateLimiter limiter;
  ServerMetrics metrics;
  std::unique_ptr<UsageMeter> usage;
  std::shared_ptr<spdlog::logger> log;
  httplib::Server http;
  std::unique_ptr<RequestDeadline> deadline;  // the request deadline and the closing of lost streams
  std::thread thread;
  std::atomic<bool> listenEnded{false};  // the listening thread's loop has returned
  int boundPort = 0;
  int listenSocket = -1;  // captured from httplib's socket options hook
  std::atomic<int32_t> inFlight{0};   // admitted generation requests (choices), running or queued
  std::atomic<bool> stopping{false};
  std::atomic<uint64_t> requestCounter{0};
  uint64_t idSalt = 0;

  void installRoutes();
  // Gateway checks that every request passes (Host, Origin, header count); false: answered.
  bool screen(const httplib::Request& req, httplib::Response& res);
  std::string authenticate(const httplib::Request& req) const;  // throws ApiError(401)
  RequestContext context(const httplib::Request& req, const char* endpoint);
  void sendError(httplib::Response& res, const ApiError& error, const RequestContext* ctx,
                 int retryAfterSeconds = 0);
  void sendJson(httplib::Response& res, int status, const nlohmann::ordered_json& body);
  // The model a request names, among the generator's; ApiError 404 otherwise (nothing opened).
  GeneratorModel resolveModel(const std::string& name) const;

  // The body through `reader`, at most maxBodyBytes whatever its transfer coding (httplib 0.11
  // applies its payload limit to Content-Length bodies only); nullopt: answered (413 or 400).
  std::optional<std::string> readBody(const httplib::Request& req, httplib::Response& res,
                                      const httplib::ContentReader& reader);
  void handleGeneration(const httplib::Request& req, const std::string& bodyText,
                        httplib::Response& res, Endpoint endpoint);
  // After a generation request ends (any way): metrics, usage meter, rate charge, log line.
  void account(const RequestContext& ctx, const std::string& model, int status,
               const std::vector<ChoiceResult>& results, bool stream, const std::string& note);
};

}  // namespace ember::openai
