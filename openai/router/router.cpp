#include "router.h"

#include <algorithm>
#include <limits>

#include "ember/error.h"
#include "router_state.h"

namespace ember::openai {

RouterUpstream remoteUpstream(std::shared_ptr<RemoteGenerator> remote) {
  RouterUpstream u;
  u.name = remote->name();
  u.probe = [remote] { return remote->checkHealth(); };
  u.listModels = [remote] { return remote->fetchModels(); };
  u.generator = std::move(remote);
  return u;
}

RouterUpstream localUpstream(Generator& local, std::string name) {
  RouterUpstream u;
  u.name = std::move(name);
  u.generator = std::shared_ptr<Generator>(&local, [](Generator*) {});  // not owned
  u.probe = [&local] {
    HealthCheck h;
    const GeneratorStatus s = local.status();
    h.healthy = s.state == GeneratorStatus::State::Ready;
    if (!h.healthy)
      h.message = s.state == GeneratorStatus::State::Loading ? "loading " + s.message
                  : s.message.empty()                         ? std::string("no model loaded")
                                                              : s.message;
    return h;
  };
  return u;
}

bool Router::State::serves(const Upstream& u, const std::string& model) const {
  if (model.empty()) return true;  // the upstream's own default model
  return std::any_of(u.models.begin(), u.models.end(),
                     [&](const GeneratorModel& m) { return m.id == model; });
}

size_t Router::State::choose(const Request& r) {
  const std::string& model = r.request.model;
  std::vector<size_t> candidates;
  bool known = false;       // some upstream, healthy or not, lists the model
  std::string unavailable;  // why the others that list it cannot take it
  for (size_t i = 0; i < upstreams.size(); ++i) {
    const Upstream& u = upstreams[i];
    if (!serves(u, model)) continue;
    known = true;
    const bool tried = std::find(r.tried.begin(), r.tried.end(), i) != r.tried.end();
    if (u.counters.healthy && !tried) {
      candidates.push_back(i);
      continue;
    }
    const std::string why = !u.counters.lastError.empty() ? u.counters.lastError
                            : tried                        ? std::string("refused it")
                                                           : std::string("ejected");
    unavailable += (unavailable.empty() ? "" : "; ") + u.spec.name + ": " + why;
  }
  if (!known) {
    std::string names;
    for (const auto& u : upstreams)
      if (u.counters.healthy)
        for (const auto& m : u.models) names += (names.empty() ? "" : ", ") + m.id;
    throw Error("no upstream serves the model '" + model + "'" +
                (names.empty() ? std::string() : " (models: " + names + ")"));
  }
  if (candidates.empty())
    throw Error("no upstream can take a request for '" + model + "' now (" + unavailable + ")");
  int32_t least = std::numeric_limits<int32_t>::max();
  for (size_t i : candidates) least = std::min(least, upstreams[i].counters.outstanding);
  if (options.affinity && r.request.messages.is_array()) {
    if (auto affine = affinity.lookup(r.request.messages)) {
      if (std::find(candidates.begin(), candidates.end(), *affine) != candidates.end() &&
          upstreams[*affine].counters.outstanding <= least + options.affinityMaxImbalance) {
        upstreams[*affine].counters.affinityHits++;
        return *affine;
      }
    }
  }
  for (size_t k = 0; k < upstreams.size(); ++k) {
    const size_t i = (cursor + k) % upstreams.size();
    if (upstreams[i].counters.outstanding == least &&
        std::find(candidates.begin(), candidates.end(), i) != candidates.end()) {
      cursor = i + 1;
      return i;
    }
  }
  return candidates.front();  // not reached: some candidate has the least count
}

void Router::State::dispatch(const std::shared_ptr<Request>& r) {
  std::shared_ptr<Generator> generator;
  size_t chosen;
  int attempt;
  {
    std::lock_guard lock(mutex);
    chosen = choose(*r);
    r->upstream = chosen;
    r->tried.push_back(chosen);
    r->streamed = false;
    r->answer.clear();
    r->upstreamIdKnown = false;
    attempt = ++r->attempt;
    upstreams[chosen].counters.outstanding++;
    upstreams[chosen].counters.routed++;
    generator = upstreams[chosen].spec.generator;
  }
  RequestId upstreamId;
  try {
    upstreamId = generator->submit(
        r->request, [state = shared_from_this(), r, chosen, attempt](const RequestEvent& e) {
          state->onEvent(r, chosen, attempt, e);
        });
  } catch (...) {
    std::lock_guard lock(mutex);
    upstreams[chosen].counters.outstanding--;
    throw;
  }
  bool cancel = false;
  {
    std::lock_guard lock(mutex);
    if (r->attempt == attempt) {
      r->upstreamId = upstreamId;
      r->upstreamIdKnown = true;
      cancel = r->cancelled;
    }
  }
  if (cancel) generator->abort(upstreamId);
}

void Router::State::noteFailure(size_t i, const std::string& why) {
  Upstream& u = upstreams[i];
  u.counters.lastError = why;
  u.consecutiveSuccesses = 0;
  if (++u.consecutiveFailures >= options.ejectAfterFailures && u.counters.healthy) {
    u.counters.healthy = false;
    u.counters.ejections++;
  }
}

void Router::State::onEvent(const std::shared_ptr<Request>& r, size_t i, int attempt,
                            const RequestEvent& e) {
  RequestEvent out = e;
  out.id = r->id;
  if (e.kind != RequestEvent::Kind::Finished) {
    if (e.kind == RequestEvent::Kind::Text) {
      std::lock_guard lock(mutex);
      if (r->attempt != attempt) return;
      r->streamed = true;
      if (!e.reasoning) r->answer += e.text;
    }
    r->sink(out);
    return;
  }
  const RequestStats& s = *e.stats;
  bool retry = false;
  {
    std::lock_guard lock(mutex);
    Upstream& u = upstreams[i];
    u.counters.outstanding--;
    if (s.finishReason == FinishReason::Error && s.retryable && !r->streamed && !r->cancelled &&
        static_cast<int>(r->tried.size()) < options.maxAttempts) {
      u.counters.retriedElsewhere++;
      noteFailure(i, s.error);
      retry = true;
    } else {
      (s.finishReason == FinishReason::Error ? u.counters.failed : u.counters.completed)++;
      u.counters.promptTokens += static_cast<uint64_t>(std::max(0, s.promptTokens));
      u.counters.cachedPromptTokens += static_cast<uint64_t>(std::max(0, s.cachedPromptTokens));
      u.counters.generatedTokens += static_cast<uint64_t>(std::max(0, s.generatedTokens));
      if (s.finishReason != FinishReason::Error && s.finishReason != FinishReason::Cancelled &&
          options.affinity && r->request.messages.is_array())
        affinity.record(r->request.messages, r->answer, i);
    }
  }
  if (retry) {
    try {
      dispatch(r);
      return;
    } catch (const Error&) {
      // No other upstream can take it: the client sees the refusal.
      std::lock_guard lock(mutex);
      upstreams[i].counters.failed++;
    }
  }
  {
    std::lock_guard lock(mutex);
    requests.erase(r->id);
    if (requests.empty()) idle.notify_all();
  }
  r->sink(out);
}

Router::Router(std::vector<RouterUpstream> upstreams, RouterOptions options)
    : state_(std::make_shared<State>()) {
  state_->options = options;
  state_->affinity = ConversationAffinity(options.affinityEntries);
  for (auto& spec : upstreams) {
    if (!spec.generator) throw Error("upstream '" + spec.name + "' has no generator");
    State::Upstream u;
    u.counters.name = spec.name;
    u.spec = std::move(spec);
    state_->upstreams.push_back(std::move(u));
  }
  if (state_->upstreams.empty()) throw Error("a router needs at least one upstream");
  state_->healthRound(/*first=*/true);
  state_->healthThread = std::thread([state = state_.get()] {
    std::unique_lock lock(state->healthMutex);
    while (!state->stopping) {
      state->healthWake.wait_for(lock, state->options.healthInterval);
      if (state->stopping) break;
      lock.unlock();
      state->healthRound(false);
      lock.lock();
    }
  });
}

Router::~Router() {
  {
    std::lock_guard lock(state_->healthMutex);
    state_->stopping = true;
  }
  state_->healthWake.notify_all();
  state_->healthThread.join();
  std::vector<RequestId> open;
  {
    std::lock_guard lock(state_->mutex);
    for (const auto& [id, r] : state_->requests) open.push_back(id);
  }
  for (RequestId id : open) abort(id);
  // Every request ends with its Finished event before the router is gone.
  std::unique_lock lock(state_->mutex);
  state_->idle.wait_for(lock, std::chrono::seconds(10), [&] { return state_->requests.empty(); });
}

RequestId Router::submit(GenerationRequest request, EventSink sink) {
  auto r = std::make_shared<State::Request>();
  r->request = std::move(request);
  r->sink = std::move(sink);
  {
    std::lock_guard lock(state_->mutex);
    r->id = state_->nextId++;
    state_->requests.emplace(r->id, r);
  }
  try {
    state_->dispatch(r);
  } catch (...) {
    std::lock_guard lock(state_->mutex);
    state_->requests.erase(r->id);
    throw;
  }
  return r->id;
}

void Router::abort(RequestId id) {
  std::shared_ptr<Generator> generator;
  RequestId upstreamId = 0;
  {
    std::lock_guard lock(state_->mutex);
    auto it = state_->requests.find(id);
    if (it == state_->requests.end()) return;
    State::Request& r = *it->second;
    r.cancelled = true;
    if (!r.upstreamIdKnown) return;  // dispatch() aborts it once submit returns
    generator = state_->upstreams[r.upstream].spec.generator;
    upstreamId = r.upstreamId;
  }
  generator->abort(upstreamId);
}

std::vector<GeneratorModel> Router::models() const {
  std::lock_guard lock(state_->mutex);
  std::vector<GeneratorModel> out;
  for (const auto& u : state_->upstreams) {
    if (!u.counters.healthy) continue;
    for (const auto& m : u.models)
      if (std::none_of(out.begin(), out.end(), [&](const auto& o) { return o.id == m.id; }))
        out.push_back(m);
  }
  return out;
}

GeneratorStatus Router::status() const {
  std::lock_guard lock(state_->mutex);
  GeneratorStatus s;
  bool anyHealthy = false;
  for (const auto& u : state_->upstreams) {
    s.running += u.counters.outstanding;
    if (u.counters.healthy) {
      anyHealthy = true;
    } else {
      s.message += (s.message.empty() ? "" : "; ") + u.spec.name + " is ejected" +
                   (u.counters.lastError.empty() ? "" : ": " + u.counters.lastError);
    }
  }
  // None healthy: Loading while one of them is loading its model (ember-serve's local engine at
  // start), else Failed.
  bool anyLoading = false;
  for (const auto& u : state_->upstreams)
    anyLoading = anyLoading || u.counters.lastError.rfind("loading", 0) == 0;
  s.state = anyHealthy   ? GeneratorStatus::State::Ready
            : anyLoading ? GeneratorStatus::State::Loading
                         : GeneratorStatus::State::Failed;
  return s;
}

std::vector<UpstreamCounters> Router::counters() const {
  std::lock_guard lock(state_->mutex);
  std::vector<UpstreamCounters> out;
  for (const auto& u : state_->upstreams) {
    out.push_back(u.counters);
    for (const auto& m : u.models) out.back().models.push_back(m.id);
  }
  return out;
}

void Router::checkHealthNow() { state_->healthRound(false); }

}  // namespace ember::openai
