// POST /v1/chat/completions and /v1/completions: parse, admit (rate limits, bounded queue),
// submit to the generator, then answer in one body or as server-sent events. A client that goes
// away is noticed within one wait (kPoll) and its requests are aborted.
#include <spdlog/spdlog.h>

#include <chrono>

#include "codec/fields.h"
#include "codec/logprobs_codec.h"
#include "ember/error.h"
#include "server/generation_channel.h"
#include "server/peer_socket.h"
#include "server/server_impl.h"

namespace ember::openai {
namespace {

constexpr std::chrono::milliseconds kPoll{25};

int64_t unixNow() {
  return std::chrono::duration_cast<std::chrono::seconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// A request that ended with an error before answering: the prompt's fault (400), the server
// going away (503) or the engine failing (500).
ApiError errorFor(const std::string& message) {
  for (const char* unavailable : {"shutting down", "model was changed", "unloaded", "no model"})
    if (message.find(unavailable) != std::string::npos) return ApiError::unavailable(message);
  if (message.find("generation failed") != std::string::npos) return ApiError::server(message);
  return ApiError::invalid(message, std::nullopt);
}

// What the HTTP side has seen of a generation so far.
struct Progress {
  std::vector<ChoiceResult> results;
  std::vector<bool> started;  // role chunk sent
  std::vector<int64_t> streamedCharacters;  // per choice: text_offset of the next chunk
  int finished = 0;
  std::optional<ApiError> error;

  explicit Progress(int n)
      : results(size_t(n)), started(size_t(n), false), streamedCharacters(size_t(n), 0) {}
  bool done() const { return finished >= int(results.size()); }
  void apply(const ChoiceEvent& e) {
    ChoiceResult& r = results[size_t(e.index)];
    if (!e.finished) {
      r.text += e.text;
      r.logprobs.insert(r.logprobs.end(), e.logprobs.begin(), e.logprobs.end());
      return;
    }
    r.stats = e.stats;
    ++finished;
    if (e.stats.finishReason == FinishReason::Error && !error) error = errorFor(e.stats.error);
  }
};

// The streaming side's state, shared by httplib's content provider and its releaser.
struct Stream {
  std::shared_ptr<GenerationChannel> channel;
  Progress progress;
  ResponseMeta meta;
  ParsedRequest request;
  RequestContext ctx;
  PeerSocket peer;
  bool ended = false;          // [DONE] or the error frame written
  bool disconnected = false;

  Stream(std::shared_ptr<GenerationChannel> c, int n, ResponseMeta m, ParsedRequest r,
         RequestContext x, PeerSocket p)
      : channel(std::move(c)), progress(n), meta(std::move(m)), request(std::move(r)),
        ctx(std::move(x)), peer(p) {}

  // The SSE frames for a batch of events.
  std::string frames(const std::vector<ChoiceEvent>& events) {
    std::string out;
    const bool chat = request.endpoint == Endpoint::ChatCompletions;
    for (const ChoiceEvent& e : events) {
      const bool hadError = progress.error.has_value();
      progress.apply(e);
      if (hadError) continue;
      if (progress.error) {  // after the 200 header: the error travels as a data frame
        out += sseFrame(progress.error->body());
        channel->abortAll();
        continue;
      }
      if (!e.finished && e.text.empty() && e.logprobs.empty()) continue;
      const std::optional<std::string> finish =
          e.finished ? finishReasonWire(e.stats.finishReason) : std::nullopt;
      if (e.finished && !finish) continue;  // cancelled: the stream is being torn down
      std::optional<std::string> content;
      if (!e.finished) content = e.text;
      if (chat) {
        const bool first = !progress.started[size_t(e.index)];
        progress.started[size_t(e.index)] = true;
        ojson chunk = chatChunkJson(meta, e.index, first, content, finish, &e.logprobs);
        if (e.finished) chunk[field::kTimings] = timingsJson(e.stats);
        out += sseFrame(chunk);
      } else {
        int64_t& offset = progress.streamedCharacters[size_t(e.index)];
        out += sseFrame(
            completionChunkJson(meta, e.index, content.value_or(""), finish, &e.logprobs, offset));
        for (const TokenLogprob& t : e.logprobs) offset += characterCount(t.text);
      }
    }
    if (progress.done() && !ended) {
      if (!progress.error) {
        if (request.includeUsage) out += sseFrame(usageChunkJson(meta, chat, progress.results));
        out += sseDone();
      }
      ended = true;
    }
    return out;
  }
};

}  // namespace

void ApiServer::Impl::handleGeneration(const httplib::Request& req, const std::string& bodyText,
                                       httplib::Response& res, Endpoint endpoint) {
  const char* name = endpoint == Endpoint::ChatCompletions ? "chat" : "completions";
  RequestContext ctx = context(req, name);
  res.set_header("X-Request-Id", ctx.requestId);
  ParsedRequest parsed;
  int admitted = 0;
  try {
    ctx.keyId = authenticate(req);
    if (stopping) throw ApiError::unavailable("the server is shutting down");
    const nlohmann::json body = parseJsonBody(bodyText);
    parsed = endpoint == Endpoint::ChatCompletions ? parseChatCompletionRequest(body)
                                                   : parseCompletionRequest(body);
    if (generator.status().state != GeneratorStatus::State::Ready)
      throw ApiError::unavailable("the model is not loaded yet");
    resolveModel(parsed.model);
    if (options.logPrompts) ctx.promptForLog = body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    if (auto refusal = limiter.admit(ctx.keyId)) {
      metrics.countRejected(refusal->reason);
      const ApiError e = ApiError::rateLimited(
          refusal->reason == "tokens" ? "Rate limit reached for tokens per minute."
                                      : "Rate limit reached for requests per minute.",
          "rate_limit_exceeded");
      sendError(res, e, &ctx, refusal->retryAfterSeconds);
      metrics.countRequest(name, res.status);
      return;
    }
    const int32_t capacity = options.runningSlots + options.queueLimit;
    if (inFlight.fetch_add(parsed.n) + parsed.n > capacity) {
      inFlight.fetch_sub(parsed.n);
      metrics.countRejected("queue_full");
      sendError(res,
                ApiError::rateLimited("The server is busy: " + std::to_string(capacity) +
                                          " requests are running or queued. Retry shortly.",
                                      "queue_full"),
                &ctx, 1);
      metrics.countRequest(name, res.status);
      return;
    }
    admitted = parsed.n;
  } catch (const ApiError& e) {
    sendError(res, e, &ctx);
    metrics.countRequest(name, res.status);
    return;
  }

  auto channel = std::make_shared<GenerationChannel>(generator);
  try {
    channel->submit(parsed);
  } catch (const ApiError& e) {
    inFlight.fetch_sub(admitted);
    sendError(res, e, &ctx);
    metrics.countRequest(name, res.status);
    return;
  }
  ResponseMeta meta;
  meta.id = (endpoint == Endpoint::ChatCompletions ? "chatcmpl-" : "cmpl-") + ctx.requestId;
  meta.created = unixNow();
  meta.model = parsed.model;
  meta.logprobs = parsed.generation.logprobs;
  const PeerSocket peer(req.remote_addr, req.remote_port, req.local_port);

  if (!parsed.stream) {
    Progress progress(parsed.n);
    bool disconnected = false;
    while (!progress.done()) {
      for (const ChoiceEvent& e : channel->take(kPoll)) progress.apply(e);
      if (!progress.done() && !disconnected && (stopping || peer.closed())) {
        disconnected = !stopping;
        if (stopping) progress.error = ApiError::unavailable("the server is shutting down");
        channel->abortAll();
      }
    }
    inFlight.fetch_sub(admitted);
    if (disconnected) {
      metrics.countDisconnect();
      res.status = 499;  // nobody reads it: for the log and the metrics
      account(ctx, parsed.model, 499, progress.results, false, "client disconnected");
    } else if (progress.error) {
      sendError(res, *progress.error, &ctx);
      account(ctx, parsed.model, res.status, progress.results, false, progress.error->what());
    } else {
      sendJson(res, 200, endpoint == Endpoint::ChatCompletions
                             ? chatCompletionJson(meta, progress.results)
                             : completionJson(meta, progress.results));
      account(ctx, parsed.model, 200, progress.results, false, "");
    }
    metrics.countRequest(name, res.status);
    return;
  }

  auto stream = std::make_shared<Stream>(channel, parsed.n, meta, parsed, ctx, peer);
  res.set_header("Cache-Control", "no-cache");
  res.set_header("X-Accel-Buffering", "no");
  res.set_chunked_content_provider(
      "text/event-stream",
      [this, stream](size_t, httplib::DataSink& sink) {
        if (stream->ended) {
          sink.done();
          return true;
        }
        if (stopping) {  // the stream ends with an error event, before httplib stops
          stream->channel->abortAll();
          const std::string frame =
              sseFrame(ApiError::unavailable("the server is shutting down").body());
          sink.write(frame.data(), frame.size());
          stream->ended = true;
          sink.done();
          return true;
        }
        const std::vector<ChoiceEvent> events = stream->channel->take(kPoll);
        if (events.empty()) {
          if (stream->peer.closed()) {
            stream->disconnected = true;
            return false;
          }
          return true;
        }
        const std::string out = stream->frames(events);
        if (!out.empty() && !sink.write(out.data(), out.size())) {
          stream->disconnected = true;
          return false;
        }
        if (stream->ended) sink.done();
        return true;
      },
      [this, stream, admitted](bool written) {
        // httplib can end a response without our provider seeing it fail (headers it could not
        // write, a socket unwritable for the write timeout between two of our calls): its
        // "not written" is then the only sign that the client is gone.
        if (!written && !stream->ended && !stopping) stream->disconnected = true;
        // Whatever happened, the requests end here: abort what runs, wait for every Finished.
        if (!stream->progress.done()) stream->channel->abortAll();
        while (!stream->progress.done())
          for (const ChoiceEvent& e : stream->channel->take(kPoll)) stream->progress.apply(e);
        inFlight.fetch_sub(admitted);
        int status = 200;
        std::string note;
        if (stream->disconnected) {
          metrics.countDisconnect();
          status = 499;
          note = "client disconnected";
        } else if (stream->progress.error) {
          status = stream->progress.error->status();
          note = stream->progress.error->what();
        }
        account(stream->ctx, stream->meta.model, status, stream->progress.results, true, note);
      });
  metrics.countRequest(name, 200);
}

void ApiServer::Impl::account(const RequestContext& ctx, const std::string& model, int status,
                              const std::vector<ChoiceResult>& results, bool stream,
                              const std::string& note) {
  int64_t prompt = 0, cached = 0, completion = 0;
  if (!results.empty()) {
    prompt = results[0].stats.promptTokens;
    cached = results[0].stats.cachedPromptTokens;
  }
  for (const ChoiceResult& r : results) {
    completion += r.stats.generatedTokens;
    if (r.stats.finishReason != FinishReason::None) metrics.observe(r.stats);
  }
  if (prompt + completion > 0) {
    limiter.chargeTokens(ctx.keyId, prompt + completion);
    if (usage) {
      try {
        usage->record(ctx.keyId, prompt, cached, completion);
      } catch (const Error& e) {
        log->error("usage meter: {}", e.what());
      }
    }
  }
  const RequestStats first = results.empty() ? RequestStats{} : results[0].stats;
  const double e2e = std::chrono::duration<double, std::milli>(Clock::now() - ctx.received).count();
  log->info(
      "request id={} key={} endpoint={} model={} status={} stream={} n={} prompt={} cached={} "
      "completion={} finish={} queue_ms={:.1f} tokenize_ms={:.1f} prefill_ms={:.1f} "
      "ttft_ms={:.1f} total_ms={:.1f} http_ms={:.1f}{}{}",
      ctx.requestId, ctx.keyId, ctx.endpoint, model, status, stream ? 1 : 0, results.size(),
      prompt, cached, completion, finishReasonName(first.finishReason), first.queueWaitMs,
      first.tokenizeMs, first.prefillMs, first.ttftMs, first.totalMs, e2e,
      note.empty() ? "" : " note=\"" + note + "\"",
      ctx.promptForLog.empty() ? "" : " body=" + ctx.promptForLog);
}

}  // namespace ember::openai
