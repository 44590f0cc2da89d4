#include "remote_generator.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <cctype>

#include <curl/curl.h>

#include "ember/error.h"
#include "remote_answer.h"
#include "remote_http.h"
#include "remote_protocol.h"
#include "remote_generator_internal.h"

namespace ember::openai {

namespace {

constexpr size_t kMaxErrorBody = 64u << 10;

bool headerIs(std::string_view line, std::string_view name) {
  if (line.size() <= name.size() || line[name.size()] != ':') return false;
  for (size_t i = 0; i < name.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(line[i])) != name[i]) return false;
  return true;
}

size_t onHeader(char* data, size_t size, size_t count, void* user) {
  auto* t = static_cast<RemoteGenerator::Transfer*>(user);
  const size_t bytes = size * count;
  std::string_view line(data, bytes);
  while (!line.empty() && (line.back() == '\n' || line.back() == '\r')) line.remove_suffix(1);
  if (line.starts_with("HTTP/")) {  // a new response (after 100 Continue, or a retry)
    t->retryAfter.reset();
    t->contentType.clear();
  } else if (headerIs(line, "retry-after")) {
    t->retryAfter = parseRetryAfter(line.substr(12), std::chrono::system_clock::now());
  } else if (headerIs(line, "content-type")) {
    std::string_view v = line.substr(13);
    while (!v.empty() && v.front() == ' ') v.remove_prefix(1);
    t->contentType = v;
  }
  return bytes;
}

size_t onBody(char* data, size_t size, size_t count, void* user) {
  auto* t = static_cast<RemoteGenerator::Transfer*>(user);
  const size_t bytes = size * count;
  const auto now = Clock::now();
  t->lastByte = now;
  curl_easy_getinfo(t->easy, CURLINFO_RESPONSE_CODE, &t->status);
  if (t->status != 200) {
    if (t->errorBody.size() < kMaxErrorBody)
      t->errorBody.append(data, std::min(bytes, kMaxErrorBody - t->errorBody.size()));
    return bytes;
  }
  t->answerBytes += bytes;
  try {
    t->reader.feed(std::string_view(data, bytes), t->events);
    for (const SseEvent& event : t->events) {
      if (event.type == "error") throw Error("the server reported an error mid-stream: " +
                                             errorBodyMessage(event.data));
      for (AnswerPiece& piece : t->answer.onData(event.data, now)) {
        RequestEvent e;
        e.id = t->id;
        e.kind = RequestEvent::Kind::Text;
        e.text = std::move(piece.text);
        e.reasoning = piece.reasoning;
        e.time = now;
        t->sink(e);
      }
    }
    t->events.clear();
  } catch (const std::exception& e) {
    t->events.clear();
    t->failure = t->options->name + ": " + e.what();
    return 0;  // makes libcurl stop the transfer with CURLE_WRITE_ERROR
  }
  return bytes;
}

}  // namespace

TransferCallback transferHeaderCallback() { return onHeader; }
TransferCallback transferBodyCallback() { return onBody; }

RemoteGenerator::RemoteGenerator(RemoteServerOptions options)
    : options_(std::move(options)), loop_(std::make_unique<Loop>()) {
  if (options_.baseUrl.empty()) throw Error("a remote server needs a base URL");
  if (options_.baseUrl.rfind("http://", 0) != 0 && options_.baseUrl.rfind("https://", 0) != 0)
    throw Error("the server address '" + options_.baseUrl +
                "' must start with http:// or https:// (for example http://127.0.0.1:8000/v1)");
  if (options_.name.empty()) options_.name = hostOf(options_.baseUrl);
  ensureCurlInitialized();
  loop_->multi = curl_multi_init();
  if (!loop_->multi) throw Error("libcurl could not start");
  thread_ = std::thread([this] { run(); });
}

RemoteGenerator::~RemoteGenerator() {
  {
    std::lock_guard lock(loop_->mutex);
    loop_->stopping = true;
  }
  curl_multi_wakeup(loop_->multi);
  thread_.join();
  curl_multi_cleanup(loop_->multi);
}

RequestId RemoteGenerator::submit(GenerationRequest request, EventSink sink) {
  auto t = std::make_unique<Transfer>();
  t->model = !request.model.empty() ? request.model : options_.defaultModel;
  if (t->model.empty()) {
    const auto offered = models();
    if (offered.size() != 1) {
      std::string names;
      for (const auto& m : offered) names += (names.empty() ? "" : ", ") + m.id;
      throw Error("name the model to use on " + options_.name +
                  (names.empty() ? std::string(" (its model list is not available)")
                                 : " (it offers " + names + ")"));
    }
    t->model = offered.front().id;
  }
  t->encoded = encodeRequest(request, t->model);
  t->seed = request.sampling.seed.value_or(0);
  t->sink = std::move(sink);
  t->submitted = Clock::now();
  t->answer = RemoteAnswer(t->submitted);
  t->notBefore = t->submitted;
  t->options = &options_;
  t->id = loop_->nextId++;
  const RequestId id = t->id;
  {
    std::lock_guard lock(loop_->mutex);
    if (loop_->stopping) throw Error("the connection to " + options_.name + " is shutting down");
    loop_->waiting++;
    loop_->incoming.push_back(std::move(t));
  }
  curl_multi_wakeup(loop_->multi);
  return id;
}

void RemoteGenerator::abort(RequestId id) {
  {
    std::lock_guard lock(loop_->mutex);
    loop_->aborts.push_back(id);
  }
  curl_multi_wakeup(loop_->multi);
}

std::vector<GeneratorModel> RemoteGenerator::models() const {
  {
    std::lock_guard lock(modelsMutex_);
    if (!models_.empty()) return models_;
  }
  try {
    return fetchModels();
  } catch (const Error&) {
    return {};  // status() says why
  }
}

std::vector<GeneratorModel> RemoteGenerator::fetchModels() const {
  const std::string url = joinUrl(options_.baseUrl, "/models");
  const HttpResult r = httpGet(url, options_.apiKey, options_.connectTimeout,
                               options_.connectTimeout + std::chrono::seconds(10));
  std::string error;
  std::vector<GeneratorModel> list;
  if (r.curlCode != 0)
    error = unreachableMessage(options_.name, url, r.curlError);
  else if (r.status != 200)
    error = httpErrorMessage(options_.name, r.status, r.body, "", std::nullopt);
  else
    list = parseModelList(r.body, options_.name);  // throws on another shape
  std::lock_guard lock(modelsMutex_);
  lastError_ = error;
  if (!error.empty()) throw Error(error);
  models_ = list;
  return list;
}

HealthCheck RemoteGenerator::checkHealth() const {
  HealthCheck check;
  const auto total = options_.connectTimeout + std::chrono::seconds(5);
  std::string url = joinUrl(serverRoot(options_.baseUrl), "/health");
  HttpResult r = httpGet(url, options_.apiKey, options_.connectTimeout, total);
  check.probed = "/health";
  if (r.curlCode == 0 && (r.status == 404 || r.status == 405)) {  // no /health: ask for models
    url = joinUrl(options_.baseUrl, "/models");
    r = httpGet(url, options_.apiKey, options_.connectTimeout, total);
    check.probed = "/models";
  }
  check.roundTripMs = r.roundTripMs;
  if (r.curlCode != 0)
    check.message = unreachableMessage(options_.name, url, r.curlError);
  else if (r.status != 200)
    check.message = httpErrorMessage(options_.name, r.status, r.body, "", std::nullopt);
  else
    check.healthy = true;
  return check;
}

GeneratorStatus RemoteGenerator::status() const {
  GeneratorStatus s;
  {
    std::lock_guard lock(modelsMutex_);
    if (!lastError_.empty()) {
      s.state = GeneratorStatus::State::Failed;
      s.message = lastError_;
    } else if (!models_.empty()) {
      s.state = GeneratorStatus::State::Ready;
    }
  }
  s.running = loop_->running.load();
  s.waiting = loop_->waiting.load();
  return s;
}

}  // namespace ember::openai
