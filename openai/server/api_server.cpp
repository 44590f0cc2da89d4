#include "server/api_server.h"

#include <spdlog/sinks/basic_file_sink.h>
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

#include <sys/socket.h>

#include <chrono>
#include <random>

#include "codec/fields.h"
#include "ember/error.h"
#include "server/server_impl.h"

namespace ember::openai {
namespace {

int64_t unixNow() {
  return std::chrono::duration_cast<std::chrono::seconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace

ApiServer::Impl::Impl(Generator& g, ServerOptions o)
    : generator(g), options(std::move(o)),
      limiter(options.requestsPerMinute, options.tokensPerMinute) {
  for (const std::string& key : options.apiKeys) keys.add(key);
  if (!isLoopbackHost(options.host) && keys.empty())
    throw Error("refusing to listen on " + options.host +
                " without an API key: only loopback addresses may be served without one");
  if (options.runningSlots < 1 || options.queueLimit < 0)
    throw Error("the running slots must be at least 1 and the queue at least 0");
  if (!options.usageDatabase.empty()) usage = std::make_unique<UsageMeter>(options.usageDatabase);
  if (!options.logFile.empty())
    log = std::make_shared<spdlog::logger>(
        "ember-serve", std::make_shared<spdlog::sinks::basic_file_sink_mt>(options.logFile));
  else
    log = std::make_shared<spdlog::logger>("ember-serve",
                                           std::make_shared<spdlog::sinks::stderr_sink_mt>());
  log->flush_on(spdlog::level::info);
  idSalt = std::random_device{}() | (uint64_t(std::random_device{}()) << 32);
}

RequestContext ApiServer::Impl::context(const httplib::Request& req, const char* endpoint) {
  RequestContext ctx;
  const uint64_t n = ++requestCounter;
  char id[40];
  std::snprintf(id, sizeof id, "%016llx%08llx", static_cast<unsigned long long>(idSalt ^ n),
                static_cast<unsigned long long>(n));
  ctx.requestId = id;
  ctx.endpoint = endpoint;
  ctx.received = Clock::now();
  (void)req;
  return ctx;
}

void ApiServer::Impl::sendJson(httplib::Response& res, int status,
                               const nlohmann::ordered_json& body) {
  res.status = status;
  res.set_content(encodeJson(body), "application/json");
}

void ApiServer::Impl::sendError(httplib::Response& res, const ApiError& error,
                                const RequestContext* ctx, int retryAfterSeconds) {
  sendJson(res, error.status(), error.body());
  if (retryAfterSeconds > 0) res.set_header("Retry-After", std::to_string(retryAfterSeconds));
  if (ctx) res.set_header("X-Request-Id", ctx->requestId);
}

std::string ApiServer::Impl::authenticate(const httplib::Request& req) const {
  if (keys.empty()) return "local";
  auto valuesOf = [&req](const char* name) {
    std::vector<std::string> values;
    for (size_t i = 0; i < req.get_header_value_count(name); ++i)
      values.push_back(req.get_header_value(name, i));
    return values;
  };
  if (conflictingKeys(valuesOf("Authorization"), valuesOf("X-Api-Key")))
    throw ApiError::unauthorized(
        "More than one API key given: send exactly one, as \"Authorization: Bearer KEY\" or "
        "\"X-Api-Key: KEY\".");
  const std::string presented =
      presentedKey(req.get_header_value("Authorization"), req.get_header_value("X-Api-Key"));
  if (presented.empty())
    throw ApiError::unauthorized(
        "No API key given: send it as \"Authorization: Bearer KEY\" or \"X-Api-Key: KEY\".");
  if (auto id = keys.identify(presented)) return *id;
  throw ApiError::unauthorized("Incorrect API key provided.");
}

bool ApiServer::Impl::screen(const httplib::Request& req, httplib::Response& res) {
  if (req.headers.size() > options.maxHeaderCount) {
    deadline->closeAfterAnswer(req.remote_addr, req.remote_port);  // its body is never read
    sendJson(res, 431,
             ApiError(431, "invalid_request_error",
                      "too many header fields (at most " +
                          std::to_string(options.maxHeaderCount) + ")")
                 .body());
    return false;
  }
  // Two Content-Length values, or one beside chunked transfer coding: the body's end is ambiguous
  // (the way requests are smuggled past proxies), so the request is refused and the connection
  // closed rather than guessed at.
  const size_t lengths = req.get_header_value_count("Content-Length");
  bool ambiguous = lengths > 1 && req.get_header_value("Content-Length", 0) !=
                                      req.get_header_value("Content-Length", 1);
  ambiguous = ambiguous || (lengths > 0 && req.has_header("Transfer-Encoding"));
  if (ambiguous) {
    sendJson(res, 400,
             ApiError(400, "invalid_request_error",
                      "contradictory Content-Length / Transfer-Encoding headers", std::nullopt,
                      std::string("ambiguous_body_length"))
                 .body());
    deadline->closeAfterAnswer(req.remote_addr, req.remote_port);
    return false;
  }
  if (!hostAllowed(req.get_header_value("Host"), options.host, options.allowedHosts)) {
    sendError(res, ApiError::forbidden("the Host header does not name this server"), nullptr);
    return false;
  }
  if (req.has_header("Origin")) {
    const std::string origin = req.get_header_value("Origin");
    const bool allowed = std::find(options.allowedOrigins.begin(), options.allowedOrigins.end(),
                                   origin) != options.allowedOrigins.end() ||
                         std::find(options.allowedOrigins.begin(), options.allowedOrigins.end(),
                                   "*") != options.allowedOrigins.end();
    if (!allowed) {
      sendError(res, ApiError::forbidden("cross-origin requests from " + origin +
                                         " are not allowed"),
                nullptr);
      return false;
    }
    res.set_header("Access-Control-Allow-Origin", origin);
    res.set_header("Vary", "Origin");
    if (req.method == "OPTIONS") {  // preflight: no key needed
      res.set_header("Access-Control-Allow-Methods", "GET, POST, OPTIONS");
      res.set_header("Access-Control-Allow-Headers", "Authorization, Content-Type, X-Api-Key");
      res.set_header("Access-Control-Max-Age", "600");
      res.status = 204;
      return false;
    }
  }
  return true;
}

std::optional<std::string> ApiServer::Impl::readBody(const httplib::Request& req,
                                                    httplib::Response& res,
                                                    const httplib::ContentReader& reader) {
  std::string body;
  bool tooLarge = false;
  const bool complete = reader([&](const char* data, size_t length) {
    if (body.size() + length > options.maxBodyBytes) {
      tooLarge = true;
      return false;
    }
    body.append(data, length);
    return true;
  });
  if (complete && !tooLarge) return body;
  deadline->closeAfterAnswer(req.remote_addr, req.remote_port);  // the rest is never read
  // httplib refuses a Content-Length over the limit itself (then sets 413) before any byte.
  if (tooLarge || res.status == 413) {
    sendJson(res, 413, ApiError(413, "invalid_request_error",
                                "the body is larger than " + std::to_string(options.maxBodyBytes) +
                                    " bytes")
                           .body());
  } else {
    sendJson(res, 400, ApiError(400, "invalid_request_error",
                                "the body could not be read (malformed chunked coding or a "
                                "connection that ended early)")
                           .body());
  }
  return std::nullopt;
}

GeneratorModel ApiServer::Impl::resolveModel(const std::string& name) const {
  for (const GeneratorModel& m : generator.models())
    if (m.id == name) return m;
  throw ApiError::notFound("The model `" + name + "` does not exist or you do not have access to it.",
                           field::kModel, "model_not_found");
}

void ApiServer::Impl::installRoutes() {
  http.set_payload_max_length(options.maxBodyBytes);
  http.set_read_timeout(options.readTimeoutSeconds, 0);
  http.set_write_timeout(options.writeTimeoutSeconds, 0);
  constexpr int kKeepAliveSeconds = 5;
  http.set_keep_alive_timeout(kKeepAliveSeconds);
  http.set_tcp_nodelay(true);  // each SSE frame leaves at once (no Nagle wait for an ACK)
  http.set_socket_options([this](socket_t sock) {
    httplib::default_socket_options(sock);
    // A fixed send buffer (accepted connections inherit it; Linux doubles it): a client that
    // stops reading backs its answer up here, at most ~128 KiB of kernel memory, and the next
    // write waits at most the write timeout, then its request is aborted. Left to autotuning,
    // loopback buffers grow to 4 MiB and a stalled stream never stalls.
    const int sendBuffer = 64 * 1024;
    setsockopt(sock, SOL_SOCKET, SO_SNDBUF, &sendBuffer, sizeof sendBuffer);
    listenSocket = int(sock);  // the server's listening socket (start() widens its backlog)
  });
  // Every admitted request holds a thread while it waits or streams; a few spare serve the rest.
  const size_t threads = size_t(options.runningSlots + options.queueLimit + 16);
  http.new_task_queue = [threads] { return new httplib::ThreadPool(threads); };

  deadline = std::make_unique<RequestDeadline>(
        std::chrono::seconds(options.requestTimeoutSeconds), std::chrono::seconds(kKeepAliveSeconds),
        encodeJson(ApiError(408, "invalid_request_error",
                            "the request did not arrive within " +
                                std::to_string(options.requestTimeoutSeconds) + " seconds",
                            std::nullopt, std::string("request_timeout"))
                       .body()),
        [this] { metrics.countRejected("request_timeout"); });
  // Called once a response is written: the connection may receive its next request.
  http.set_logger([this](const httplib::Request& req, const httplib::Response&) {
    deadline->answered(req.remote_addr, req.remote_port);
  });
  http.set_pre_routing_handler([this](const httplib::Request& req, httplib::Response& res) {
    return screen(req, res) ? httplib::Server::HandlerResponse::Unhandled
                            : httplib::Server::HandlerResponse::Handled;
  });
  // Errors httplib answers itself (no route, body too large, bad request line) get an OpenAI body.
  http.set_error_handler(httplib::Server::HandlerWithResponse(
      [this](const httplib::Request& req, httplib::Response& res) {
    if (!res.body.empty()) return httplib::Server::HandlerResponse::Unhandled;
    // httplib stopped reading this request part-way: the connection's next bytes mean nothing.
    if (res.status != 404) deadline->closeAfterAnswer(req.remote_addr, req.remote_port);
    std::string message = "the request could not be served";
    std::optional<std::string> code;
    if (res.status == 404) message = "no such route", code = "not_found";
    if (res.status == 413) message = "the body is larger than " +
                                     std::to_string(options.maxBodyBytes) + " bytes";
    if (res.status == 414) message = "the URL is too long";
    if (res.status == 431) message = "the request's header fields are too large";
    // httplib answers 400 itself when the request line was read but a header line was not: one
    // longer than its 8 KiB line limit (or not a header at all).
    if (res.status == 400 && !req.method.empty()) {
      res.status = 431;
      message = "a header field is larger than 8192 bytes, or malformed";
    }
    sendJson(res, res.status,
             ApiError(res.status, "invalid_request_error", message, std::nullopt, code).body());
    return httplib::Server::HandlerResponse::Handled;
  }));
  http.set_exception_handler(
      [this](const httplib::Request&, httplib::Response& res, std::exception_ptr) {
        sendError(res, ApiError::server("internal error"), nullptr);
      });

  // A route behind the key check, with its ApiErrors turned into responses and counted.
  auto guarded = [this](const char* endpoint, auto handler) {
    return [this, endpoint, handler](const httplib::Request& req, httplib::Response& res) {
      deadline->arrived(req.remote_addr, req.remote_port);
      RequestContext ctx = context(req, endpoint);
      try {
        ctx.keyId = authenticate(req);
        handler(req, res, ctx);
      } catch (const ApiError& e) {
        // A refused key leaves a trace (who knocked, on what) but never the key it presented.
        if (e.status() == 401)
          log->warn("request id={} endpoint={} status=401 from={} refused: {}", ctx.requestId,
                    endpoint, req.remote_addr, e.what());
        sendError(res, e, &ctx);
      }
      metrics.countRequest(endpoint, res.status);
    };
  };

  http.Get("/health", [this](const httplib::Request& req, httplib::Response& res) {
    deadline->arrived(req.remote_addr, req.remote_port);
    const GeneratorStatus s = generator.status();
    if (s.state == GeneratorStatus::State::Ready) {
      sendJson(res, 200, {{"status", "ok"}});
    } else {
      const char* state = s.state == GeneratorStatus::State::Loading ? "loading"
                          : s.state == GeneratorStatus::State::Failed ? "failed" : "no model";
      nlohmann::ordered_json body = ApiError::unavailable(std::string("the model is ") + state +
                                                          (s.message.empty() ? "" : ": " + s.message))
                                        .body();
      body["status"] = state;
      sendJson(res, 503, body);
    }
    metrics.countRequest("health", res.status);
  });
  http.Get("/v1/models", guarded("models", [this](const httplib::Request&, httplib::Response& res,
                                                  RequestContext&) {
    sendJson(res, 200, modelsJson(generator.models(), unixNow()));
  }));
  http.Get(R"(/v1/models/(.+))", guarded("models", [this](const httplib::Request& req,
                                                         httplib::Response& res, RequestContext&) {
    sendJson(res, 200, modelJson(resolveModel(req.matches[1]), unixNow()));
  }));
  http.Get("/metrics", guarded("metrics", [this](const httplib::Request&, httplib::Response& res,
                                                RequestContext&) {
    std::string text = metrics.render(generator.status(), inFlight.load());
    if (options.extraMetrics) text += options.extraMetrics();
    res.set_content(text, "text/plain; version=0.0.4");
  }));
  for (const auto& [path, endpoint] : {std::pair{"/v1/chat/completions", Endpoint::ChatCompletions},
                                        std::pair{"/v1/completions", Endpoint::Completions}}) {
    const Endpoint which = endpoint;
    http.Post(path, [this, which](const httplib::Request& req, httplib::Response& res,
                                  const httplib::ContentReader& reader) {
      const std::optional<std::string> body = readBody(req, res, reader);
      if (!body) {
        metrics.countRequest(which == Endpoint::ChatCompletions ? "chat" : "completions",
                             res.status);
        return;
      }
      deadline->arrived(req.remote_addr, req.remote_port);
      handleGeneration(req, *body, res, which);
    });
  }
}

ApiServer::ApiServer(Generator& generator, ServerOptions options)
    : impl_(std::make_unique<Impl>(generator, std::move(options))) {
  impl_->installRoutes();
}

ApiServer::~ApiServer() { stop(); }

void ApiServer::start() {
  Impl& d = *impl_;
  if (d.options.port == 0) {
    d.boundPort = d.http.bind_to_any_port(d.options.host);
  } else {
    d.boundPort = d.http.bind_to_port(d.options.host, d.options.port) ? d.options.port : -1;
  }
  if (d.boundPort <= 0)
    throw Error("cannot listen on " + d.options.host + ":" + std::to_string(d.options.port) +
                " (in use, or not an address of this machine)");
  // cpp-httplib 0.11 listens with a backlog of 5: a burst of clients (64 streams at once) would
  // overflow it. listen() again on the bound socket only raises the backlog.
  if (d.listenSocket >= 0) ::listen(d.listenSocket, 1024);
  d.thread = std::thread([&d] {
    d.http.listen_after_bind();
    d.listenEnded = true;
  });
  // httplib's stop() does nothing until its accept loop has started: without this wait, a
  // server stopped right after it started left its thread in accept() and stop() never returned.
  while (!d.http.is_running() && !d.listenEnded)
    std::this_thread::sleep_for(std::chrono::microseconds(100));
  if (d.deadline) d.deadline->start(d.boundPort);
  d.log->info("listening on {} ({} key(s), {} slots, queue {})", address(), d.options.apiKeys.size(),
              d.options.runningSlots, d.options.queueLimit);
}

void ApiServer::stop() {
  Impl& d = *impl_;
  if (d.stopping.exchange(true)) return;
  // Open requests see `stopping` within one wait: streams end with an error event, the others
  // answer 503. Only then does httplib stop (it would cut the streams without their event).
  const auto deadline = Clock::now() + std::chrono::seconds(10);
  while (d.inFlight.load() > 0 && Clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  if (d.deadline) d.deadline->stop();
  d.http.stop();
  if (d.thread.joinable()) d.thread.join();
}

int ApiServer::port() const { return impl_->boundPort; }

std::string ApiServer::address() const {
  const std::string& h = impl_->options.host;
  const bool v6 = h.find(':') != std::string::npos;
  return "http://" + (v6 ? "[" + h + "]" : h) + ":" + std::to_string(impl_->boundPort);
}

}  // namespace ember::openai
