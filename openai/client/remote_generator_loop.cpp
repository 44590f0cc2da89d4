// RemoteGenerator's own thread: one libcurl multi handle drives every transfer; submit() and
// abort() hand work over under a mutex and wake the poll.
#include <curl/curl.h>

#include "remote_answer.h"
#include "remote_generator_internal.h"
#include "remote_http.h"
#include "remote_protocol.h"

namespace ember::openai {

namespace {

using std::chrono::milliseconds;


void startTransfer(RemoteGenerator::Transfer& t, CURLM* multi) {
  const RemoteServerOptions& o = *t.options;
  t.easy = curl_easy_init();
  t.errorBuffer[0] = '\0';
  t.headers = curl_slist_append(nullptr, "Content-Type: application/json");
  t.headers = curl_slist_append(t.headers, "Accept: text/event-stream");
  if (!o.apiKey.empty()) {
    const std::string authorization = "Authorization: Bearer " + o.apiKey;
    t.headers = curl_slist_append(t.headers, authorization.c_str());  // copied by libcurl
  }
  curl_easy_setopt(t.easy, CURLOPT_URL, joinUrl(o.baseUrl, t.encoded.path).c_str());
  curl_easy_setopt(t.easy, CURLOPT_HTTPHEADER, t.headers);
  curl_easy_setopt(t.easy, CURLOPT_POSTFIELDS, t.encoded.body.c_str());
  curl_easy_setopt(t.easy, CURLOPT_POSTFIELDSIZE_LARGE,
                   static_cast<curl_off_t>(t.encoded.body.size()));
  curl_easy_setopt(t.easy, CURLOPT_HEADERFUNCTION, transferHeaderCallback());
  curl_easy_setopt(t.easy, CURLOPT_HEADERDATA, &t);
  curl_easy_setopt(t.easy, CURLOPT_WRITEFUNCTION, transferBodyCallback());
  curl_easy_setopt(t.easy, CURLOPT_WRITEDATA, &t);
  curl_easy_setopt(t.easy, CURLOPT_PRIVATE, &t);
  curl_easy_setopt(t.easy, CURLOPT_ERRORBUFFER, t.errorBuffer);
  curl_easy_setopt(t.easy, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(t.easy, CURLOPT_NOPROXY, "localhost,127.0.0.1,::1");
  curl_easy_setopt(t.easy, CURLOPT_USERAGENT, "ember");
  curl_easy_setopt(t.easy, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(o.connectTimeout.count()));
  curl_easy_setopt(t.easy, CURLOPT_TCP_KEEPALIVE, 1L);
  t.lastByte = Clock::now();
  curl_multi_add_handle(multi, t.easy);
}

void stopTransfer(RemoteGenerator::Transfer& t, CURLM* multi) {
  if (!t.easy) return;
  // Removing an unfinished transfer closes its connection: that is how a server learns of a
  // cancel (vLLM and llama.cpp abort the request when the client goes away).
  curl_multi_remove_handle(multi, t.easy);
  curl_easy_cleanup(t.easy);
  curl_slist_free_all(t.headers);
  t.easy = nullptr;
  t.headers = nullptr;
}

void emitFinished(RemoteGenerator::Transfer& t, FinishReason reason, std::string error,
                  bool retryable = false) {
  const auto now = Clock::now();
  RequestStats stats = t.answer.stats(now, reason, std::move(error));
  stats.retryable = retryable && !t.answer.anyText();
  stats.seed = t.seed;
  RequestEvent e;
  e.id = t.id;
  e.kind = RequestEvent::Kind::Finished;
  e.time = now;
  e.stats = &stats;
  t.sink(e);
}

}  // namespace

void RemoteGenerator::run() {
  Loop& loop = *loop_;
  const auto finishAndErase = [&](RequestId id, FinishReason reason, std::string error,
                                  bool retryable) {
    auto it = loop.active.find(id);
    if (it == loop.active.end()) return;
    Transfer& t = *it->second;
    (t.easy ? loop.running : loop.waiting)--;
    stopTransfer(t, loop.multi);
    emitFinished(t, reason, std::move(error), retryable);
    loop.active.erase(it);
  };
  // A failure before any byte of an answer: try again after a backoff (or the server's
  // Retry-After), or give up with the request marked retryable elsewhere.
  const auto retryOrFail = [&](Transfer& t, std::string message,
                               std::optional<double> retryAfterSeconds) {
    const auto& o = options_;
    auto delay = o.retryBackoff * (1 << std::min(t.attempt, 10));
    if (retryAfterSeconds) delay = milliseconds(static_cast<int64_t>(*retryAfterSeconds * 1000));
    if (t.attempt >= o.maxRetries || delay > o.maxRetryAfter) {
      if (t.attempt > 0) message += " (after " + std::to_string(t.attempt + 1) + " tries)";
      finishAndErase(t.id, FinishReason::Error, std::move(message), true);
      return;
    }
    ++t.attempt;
    // Tell the consumer it waits (as a local request queued behind others does).
    RequestEvent waiting;
    waiting.id = t.id;
    waiting.kind = RequestEvent::Kind::Progress;
    waiting.waiting = true;
    waiting.time = Clock::now();
    t.sink(waiting);
    stopTransfer(t, loop.multi);
    loop.running--;
    loop.waiting++;
    t.notBefore = Clock::now() + delay;
    t.answer = RemoteAnswer(t.submitted);
    t.reader = SseReader();
    t.status = 0;
    t.retryAfter.reset();
    t.errorBody.clear();
    t.failure.clear();
    t.answerBytes = 0;
  };
  const auto onDone = [&](Transfer& t, CURLcode code) {
    curl_easy_getinfo(t.easy, CURLINFO_RESPONSE_CODE, &t.status);
    const std::string url = joinUrl(options_.baseUrl, t.encoded.path);
    if (!t.failure.empty()) {  // malformed stream data: what arrived stays
      finishAndErase(t.id, FinishReason::Error, t.failure, false);
    } else if (code != CURLE_OK && t.answerBytes == 0 && t.status == 0) {
      const std::string detail = t.errorBuffer[0] ? t.errorBuffer : curl_easy_strerror(code);
      retryOrFail(t, unreachableMessage(options_.name, url, detail), std::nullopt);
    } else if (code != CURLE_OK && t.status == 200) {
      const std::string detail = t.errorBuffer[0] ? t.errorBuffer : curl_easy_strerror(code);
      finishAndErase(t.id, FinishReason::Error,
                     options_.name + " cut the stream after " +
                         std::to_string(t.answer.textChunks()) + " text chunks (" + detail +
                         "); the text that arrived is kept",
                     false);
    } else if (t.status != 200) {
      const std::string message =
          httpErrorMessage(options_.name, t.status, t.errorBody, t.model, t.retryAfter);
      if (t.status == 429 || t.status == 502 || t.status == 503 || t.status == 504)
        retryOrFail(t, message, t.retryAfter);
      else
        finishAndErase(t.id, FinishReason::Error, message, false);
    } else if (t.answer.complete()) {
      finishAndErase(t.id, FinishReason::None, {}, false);
    } else if (!t.answer.anyText() && t.contentType.find("text/event-stream") == std::string::npos) {
      finishAndErase(t.id, FinishReason::Error,
                     options_.name + " answered with Content-Type '" + t.contentType +
                         "' instead of an event stream",
                     false);
    } else {
      finishAndErase(t.id, FinishReason::Error,
                     options_.name + " ended the stream after " +
                         std::to_string(t.answer.textChunks()) +
                         " text chunks without finishing the answer; the text that arrived is kept",
                     false);
    }
  };

  for (;;) {
    std::vector<std::unique_ptr<Transfer>> incoming;
    std::vector<RequestId> aborts;
    bool stopping;
    {
      std::lock_guard lock(loop.mutex);
      incoming.swap(loop.incoming);
      aborts.swap(loop.aborts);
      stopping = loop.stopping;
    }
    for (auto& t : incoming) loop.active.emplace(t->id, std::move(t));
    for (RequestId id : aborts) finishAndErase(id, FinishReason::Cancelled, {}, false);
    if (stopping) {
      while (!loop.active.empty())
        finishAndErase(loop.active.begin()->first, FinishReason::Cancelled,
                       "the connection to " + options_.name + " was closed", false);
      return;
    }
    auto now = Clock::now();
    for (auto& [id, t] : loop.active) {
      if (!t->easy && t->notBefore <= now) {
        loop.waiting--;
        loop.running++;
        startTransfer(*t, loop.multi);
      }
    }
    int stillRunning = 0;
    curl_multi_perform(loop.multi, &stillRunning);
    int queued = 0;
    while (CURLMsg* msg = curl_multi_info_read(loop.multi, &queued)) {
      if (msg->msg != CURLMSG_DONE) continue;
      Transfer* t = nullptr;
      curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, &t);
      if (t) onDone(*t, msg->data.result);
    }
    // Read timeout: the longest silence a started transfer may keep.
    now = Clock::now();
    auto wake = now + milliseconds(1000);
    std::vector<RequestId> silent;
    for (auto& [id, t] : loop.active) {
      if (!t->easy) {
        wake = std::min(wake, t->notBefore);
      } else if (now - t->lastByte >= options_.readTimeout) {
        silent.push_back(id);
      } else {
        wake = std::min(wake, t->lastByte + options_.readTimeout);
      }
    }
    for (RequestId id : silent) {
      Transfer& t = *loop.active.at(id);
      const std::string message =
          options_.name + " sent nothing for " +
          std::to_string(options_.readTimeout.count()) + " ms (read timeout)" +
          (t.answer.anyText() ? "; the text that arrived is kept" : "");
      finishAndErase(id, FinishReason::Error, message, false);
    }
    const auto waitMs = std::chrono::duration_cast<milliseconds>(wake - Clock::now()).count();
    curl_multi_poll(loop.multi, nullptr, 0, static_cast<int>(std::max<int64_t>(waitMs, 0)),
                    nullptr);
  }
}

}  // namespace ember::openai
