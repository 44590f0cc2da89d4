#include "ember/engine_host.h"

#include <condition_variable>
#include <deque>
#include <exception>
#include <filesystem>
#include <future>
#include <mutex>
#include <thread>
#include <unordered_map>
#include <variant>

#include "ember/error.h"

namespace ember {
namespace {

double msSince(Clock::time_point from, Clock::time_point to) {
  return std::chrono::duration<double, std::milli>(to - from).count();
}

// What callers hand to the engine thread, applied there in the order they were queued.
struct SubmitCommand {
  RequestId id;
  GenerationRequest request;
  EventSink sink;
  Clock::time_point submitted;
};
struct AbortCommand {
  RequestId id;
};
struct TaskCommand {
  std::function<void()> run;  // load, unload, withEngine
};
using Command = std::variant<SubmitCommand, AbortCommand, TaskCommand>;

// A request the engine thread has accepted (queued or inside the engine).
struct Active {
  EventSink sink;
  RequestId engineId = 0;  // 0: not (yet) inside the engine
  double hostDelayMs = 0;  // submit() to Engine::addRequest
};

}  // namespace

struct EngineHost::Impl {
  // Shared between callers and the engine thread.
  mutable std::mutex mutex;
  std::condition_variable wake;
  std::deque<Command> commands;
  bool stopping = false;
  GeneratorStatus snapshot;    // what status() answers
  std::optional<GeneratorModel> model;  // the loaded model, for models() and submit's checks
  size_t vocabSize = 0;
  RequestId nextId = 1;
  int32_t queuedSubmits = 0;   // submit commands not yet taken by the thread

  // Engine thread only.
  std::unique_ptr<Engine> engine;
  std::unordered_map<RequestId, Active> active;
  std::unordered_map<RequestId, RequestId> byEngineId;  // engine's id -> host id
  std::thread thread;

  void run();
  void apply(Command& command);
  void addToEngine(SubmitCommand& submit);
  void deliver(RequestId hostId, const RequestEvent& event);
  void finishWithoutEngine(RequestId hostId, EventSink& sink, FinishReason reason,
                           const std::string& error);
  void failAll(const std::string& message);
  void publishStatus();
  // Runs fn on the engine thread between steps and waits for it; rethrows what fn threw.
  void runOnEngineThread(const std::function<void()>& fn);
};

void EngineHost::Impl::run() {
  for (;;) {
    std::deque<Command> batch;
    {
      std::unique_lock lock(mutex);
      wake.wait(lock, [&] {
        return stopping || !commands.empty() || (engine && engine->hasWork());
      });
      if (stopping) break;
      batch.swap(commands);
      queuedSubmits = 0;
    }
    for (Command& command : batch) apply(command);
    if (engine && engine->hasWork()) {
      try {
        engine->step();
      } catch (const std::exception& e) {
        // A step that throws leaves its requests in an unknown state: they fail, the engine
        // stays loaded for the next ones.
        failAll(std::string("generation failed: ") + e.what());
      }
    }
    publishStatus();
  }
  // Shutting down: what was queued or running ends with an error, then the engine goes.
  std::deque<Command> rest;
  {
    std::lock_guard lock(mutex);
    rest.swap(commands);
  }
  for (Command& command : rest) {
    if (auto* submit = std::get_if<SubmitCommand>(&command))
      finishWithoutEngine(submit->id, submit->sink, FinishReason::Error, "shutting down");
    else if (auto* task = std::get_if<TaskCommand>(&command))
      task->run();  // load/withEngine callers are waiting for an answer
  }
  failAll("shutting down");
  engine.reset();
}

void EngineHost::Impl::apply(Command& command) {
  if (auto* submit = std::get_if<SubmitCommand>(&command)) {
    addToEngine(*submit);
  } else if (auto* abort = std::get_if<AbortCommand>(&command)) {
    const auto it = active.find(abort->id);
    if (it != active.end() && engine && it->second.engineId) engine->abort(it->second.engineId);
  } else {
    std::get<TaskCommand>(command).run();
  }
}

void EngineHost::Impl::addToEngine(SubmitCommand& submit) {
  const auto now = Clock::now();
  if (!engine) {
    finishWithoutEngine(submit.id, submit.sink, FinishReason::Error, "no model is loaded");
    return;
  }
  Active& entry = active[submit.id];
  entry.sink = std::move(submit.sink);
  entry.hostDelayMs = msSince(submit.submitted, now);
  const RequestId hostId = submit.id;
  try {
    entry.engineId = engine->addRequest(
        std::move(submit.request), [this, hostId](const RequestEvent& e) { deliver(hostId, e); });
    byEngineId[entry.engineId] = hostId;
  } catch (const std::exception& e) {
    // The checks submit() cannot make (template rendering, tokenization) fail here.
    EventSink sink = std::move(entry.sink);
    active.erase(hostId);
    finishWithoutEngine(hostId, sink, FinishReason::Error, e.what());
  }
}

void EngineHost::Impl::deliver(RequestId hostId, const RequestEvent& event) {
  const auto it = active.find(hostId);
  if (it == active.end()) return;  // already failed by the host (model change)
  RequestEvent copy = event;
  copy.id = hostId;
  if (event.kind != RequestEvent::Kind::Finished) {
    it->second.sink(copy);
    return;
  }
  // The host's hand-off time belongs to the request's queue wait, TTFT and total.
  RequestStats stats = event.stats ? *event.stats : RequestStats{};
  const double delay = it->second.hostDelayMs;
  stats.queueWaitMs += delay;
  if (stats.ttftMs > 0) stats.ttftMs += delay;
  stats.totalMs += delay;
  stats.hostDelayMs = delay;
  copy.stats = &stats;
  EventSink sink = std::move(it->second.sink);
  byEngineId.erase(it->second.engineId);
  active.erase(it);
  publishStatus();  // the engine already released it: a consumer woken by this sees it gone
  sink(copy);
}

void EngineHost::Impl::finishWithoutEngine(RequestId hostId, EventSink& sink,
                                           FinishReason reason, const std::string& error) {
  RequestStats stats;
  stats.finishReason = reason;
  stats.error = error;
  RequestEvent event;
  event.id = hostId;
  event.kind = RequestEvent::Kind::Finished;
  event.time = Clock::now();
  event.stats = &stats;
  if (sink) sink(event);
}

void EngineHost::Impl::failAll(const std::string& message) {
  auto doomed = std::move(active);
  active.clear();
  byEngineId.clear();
  for (auto& [hostId, entry] : doomed) {
    if (engine && entry.engineId) engine->abort(entry.engineId);  // frees its blocks next step
    finishWithoutEngine(hostId, entry.sink, FinishReason::Error, message);
  }
  // Let the engine apply the aborts now, so its KV blocks are free before anything else runs.
  if (engine && engine->hasWork() && !doomed.empty()) {
    try {
      engine->step();
    } catch (const std::exception&) {  // the requests are already reported
    }
  }
}

void EngineHost::Impl::publishStatus() {
  std::lock_guard lock(mutex);
  if (!engine) {
    snapshot.running = 0;
    snapshot.waiting = queuedSubmits;
    snapshot.kvCache = {};
    return;
  }
  snapshot.running = engine->runningRequests();
  snapshot.waiting = engine->waitingRequests() + queuedSubmits;
  snapshot.kvCache = engine->kvCacheStats();
}

EngineHost::EngineHost() : impl_(std::make_unique<Impl>()) {
  impl_->thread = std::thread([this] { impl_->run(); });
}

EngineHost::~EngineHost() {
  {
    std::lock_guard lock(impl_->mutex);
    impl_->stopping = true;
  }
  impl_->wake.notify_all();
  impl_->thread.join();
}

ModelInfo EngineHost::load(const EngineOptions& options, LoadControl* control) {
  Impl& d = *impl_;
  if (std::this_thread::get_id() == d.thread.get_id())
    throw Error("a model cannot be loaded from inside a request's events");
  {
    std::lock_guard lock(d.mutex);
    d.snapshot.state = GeneratorStatus::State::Loading;
    d.snapshot.message = "loading " + options.modelPath;
    d.model.reset();
  }
  ModelInfo info;
  d.runOnEngineThread([&] {
    d.failAll("the model was changed before the answer finished");
    d.engine.reset();  // frees the old weights and KV pool before the new ones are mapped
    try {
      d.engine = Engine::load(options, control);
    } catch (const LoadCancelled&) {
      std::lock_guard lock(d.mutex);
      d.snapshot = {};  // Empty: nothing loaded, nothing failed
      d.snapshot.message = "loading " + options.modelPath + " was cancelled";
      throw;
    } catch (const std::exception& e) {
      std::lock_guard lock(d.mutex);
      d.snapshot = {};
      d.snapshot.state = GeneratorStatus::State::Failed;
      d.snapshot.message = e.what();
      throw;
    }
    info = d.engine->info();
    GeneratorModel model;
    model.id = std::filesystem::path(info.path).stem().string();
    model.ownedBy = "ember";
    model.contextLength = info.contextLength;
    model.info = info;
    {
      std::lock_guard lock(d.mutex);
      d.model = model;
      d.vocabSize = d.engine->vocabSize();
      d.snapshot.state = GeneratorStatus::State::Ready;
      d.snapshot.message.clear();
    }
    d.publishStatus();
  });
  return info;
}

void EngineHost::unload() {
  Impl& d = *impl_;
  {
    std::lock_guard lock(d.mutex);
    d.model.reset();
  }
  d.runOnEngineThread([&] {
    d.failAll("the model was unloaded before the answer finished");
    d.engine.reset();
    std::lock_guard lock(d.mutex);
    d.snapshot = {};
  });
}

namespace {

// What submit() checks on the caller's thread, under the host's lock: a model, its name, the
// sampling settings and a prompt. Throws ember::Error.
void checkSubmission(const GenerationRequest& request, const EventSink& sink, bool stopping,
                     const std::optional<GeneratorModel>& model, GeneratorStatus::State state,
                     size_t vocabSize) {
  if (!sink) throw Error("a request needs an event sink");
  const bool hasPrompt = request.prompt || request.promptTokens ||
                         (request.messages.is_array() && !request.messages.empty());
  if (!hasPrompt) throw Error("the request has no messages and no prompt");
  if (stopping) throw Error("shutting down");
  if (!model)
    throw Error(state == GeneratorStatus::State::Loading ? "a model is loading"
                                                          : "no model is loaded");
  if (!request.model.empty() && request.model != model->id)
    throw Error("unknown model \"" + request.model + "\" (this engine has \"" + model->id +
                "\")");
  validate(request.sampling, vocabSize, model->contextLength);
  if (request.logprobs && (request.topLogprobs < 0 || request.topLogprobs > kMaxTopLogprobs))
    throw Error("top_logprobs must be between 0 and " + std::to_string(kMaxTopLogprobs) +
                ", got " + std::to_string(request.topLogprobs));
}

}  // namespace

RequestId EngineHost::submit(GenerationRequest request, EventSink sink) {
  std::vector<GenerationRequest> requests;
  requests.push_back(std::move(request));
  std::vector<EventSink> sinks;
  sinks.push_back(std::move(sink));
  return submitAll(std::move(requests), std::move(sinks)).front();
}

std::vector<RequestId> EngineHost::submitAll(std::vector<GenerationRequest> requests,
                                             std::vector<EventSink> sinks) {
  Impl& d = *impl_;
  if (requests.size() != sinks.size())
    throw Error("submitAll needs one event sink per request");
  if (requests.empty()) return {};
  std::vector<RequestId> ids;
  {
    std::lock_guard lock(d.mutex);
    for (size_t i = 0; i < requests.size(); ++i)
      checkSubmission(requests[i], sinks[i], d.stopping, d.model, d.snapshot.state, d.vocabSize);
    const auto now = Clock::now();
    for (size_t i = 0; i < requests.size(); ++i) {
      const RequestId id = d.nextId++;
      ids.push_back(id);
      d.commands.push_back(SubmitCommand{id, std::move(requests[i]), std::move(sinks[i]), now});
      ++d.queuedSubmits;
      ++d.snapshot.waiting;
    }
  }
  d.wake.notify_one();
  return ids;
}

void EngineHost::abort(RequestId id) {
  {
    std::lock_guard lock(impl_->mutex);
    impl_->commands.push_back(AbortCommand{id});
  }
  impl_->wake.notify_one();
}

std::vector<GeneratorModel> EngineHost::models() const {
  std::lock_guard lock(impl_->mutex);
  if (!impl_->model) return {};
  return {*impl_->model};
}

GeneratorStatus EngineHost::status() const {
  std::lock_guard lock(impl_->mutex);
  return impl_->snapshot;
}

void EngineHost::withEngine(const std::function<void(Engine*)>& fn) {
  Impl& d = *impl_;
  if (std::this_thread::get_id() == d.thread.get_id()) {
    fn(d.engine.get());
    return;
  }
  d.runOnEngineThread([&] {
    fn(d.engine.get());
    d.publishStatus();
  });
}

void EngineHost::Impl::runOnEngineThread(const std::function<void()>& fn) {
  std::promise<void> done;
  auto future = done.get_future();
  {
    std::lock_guard lock(mutex);
    if (stopping) throw Error("shutting down");
    commands.push_back(TaskCommand{[&] {
      try {
        fn();
        done.set_value();
      } catch (...) {
        done.set_exception(std::current_exception());
      }
    }});
  }
  wake.notify_one();
  future.get();
}

}  // namespace ember
