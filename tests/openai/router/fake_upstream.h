#pragma once
// A deterministic upstream Generator for the router's tests. It answers on its own thread, can be
// "down" (its probe fails and it refuses requests before streaming, as a RemoteGenerator does
// when the connection is refused), can hold requests open until released, and simulates a prefix
// cache: the prompt is the messages rendered as "role:content\n" (one character = one token) and
// a request reuses the longest prefix it shares with a prompt + answer it served before.
#include <atomic>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "client/remote_generator.h"
#include "ember/generator.h"

namespace ember::test {

class FakeUpstream final : public Generator {
 public:
  FakeUpstream(std::string name, std::vector<std::string> models)
      : name_(std::move(name)), modelIds_(std::move(models)), thread_([this] { run(); }) {}
  ~FakeUpstream() override {
    {
      std::lock_guard lock(mutex_);
      stopping_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }

  std::atomic<bool> down{false};             // probe fails, requests refused before streaming
  std::atomic<bool> hold{false};             // requests wait for release()
  std::atomic<bool> failAfterText{false};    // one text piece, then a (non-retryable) error

  void release() {
    std::lock_guard lock(mutex_);
    for (auto& job : held_) queue_.push_back(std::move(job));
    held_.clear();
    cv_.notify_all();
  }
  int received() const { return received_.load(); }
  int heldCount() const {
    std::lock_guard lock(mutex_);
    return static_cast<int>(held_.size());
  }
  int aborts() const { return aborts_.load(); }

  openai::HealthCheck probe() const {
    openai::HealthCheck h;
    h.healthy = !down;
    if (down) h.message = "cannot reach " + name_ + ": connection refused";
    return h;
  }

  RequestId submit(GenerationRequest request, EventSink sink) override {
    std::lock_guard lock(mutex_);
    Job job{nextId_++, std::move(request), std::move(sink), down.load()};
    received_++;
    const RequestId id = job.id;
    (hold && !job.refuse ? held_ : queue_).push_back(std::move(job));
    cv_.notify_all();
    return id;
  }
  void abort(RequestId id) override {
    std::lock_guard lock(mutex_);
    for (auto it = held_.begin(); it != held_.end(); ++it) {
      if (it->id != id) continue;
      it->cancelled = true;
      queue_.push_back(std::move(*it));
      held_.erase(it);
      aborts_++;
      cv_.notify_all();
      return;
    }
  }
  std::vector<GeneratorModel> models() const override {
    std::vector<GeneratorModel> out;
    for (const auto& id : modelIds_) out.push_back({id, name_, 0, {}});
    return out;
  }
  GeneratorStatus status() const override {
    GeneratorStatus s;
    s.state = down ? GeneratorStatus::State::Failed : GeneratorStatus::State::Ready;
    if (down) s.message = name_ + " failed";
    return s;
  }

  static std::string render(const nlohmann::ordered_json& messages) {
    std::string out;
    for (const auto& m : messages)
      out += m["role"].get<std::string>() + ":" + m["content"].get<std::string>() + "\n";
    return out;
  }
  // The reply to a conversation: deterministic, different per turn.
  static std::string replyTo(const nlohmann::ordered_json& messages) {
    return "answer to " + messages.back()["content"].get<std::string>();
  }

 private:
  struct Job {
    RequestId id;
    GenerationRequest request;
    EventSink sink;
    bool refuse = false;
    bool cancelled = false;
  };

  void answer(Job& job) {
    RequestEvent e;
    e.id = job.id;
    RequestStats stats;
    if (job.refuse) {
      stats.finishReason = FinishReason::Error;
      stats.error = "cannot reach " + name_ + ": connection refused";
      stats.retryable = true;
    } else if (job.cancelled) {
      stats.finishReason = FinishReason::Cancelled;
    } else {
      const std::string prompt = render(job.request.messages);
      const std::string reply = replyTo(job.request.messages);
      size_t reused = 0;
      for (const auto& seen : served_) {
        size_t n = 0;
        while (n < seen.size() && n < prompt.size() && seen[n] == prompt[n]) ++n;
        reused = std::max(reused, n);
      }
      served_.push_back(prompt + "assistant:" + reply + "\n");
      stats.promptTokens = static_cast<int32_t>(prompt.size());
      stats.cachedPromptTokens = static_cast<int32_t>(reused);
      e.kind = RequestEvent::Kind::Text;
      e.text = failAfterText ? reply.substr(0, 3) : reply;
      job.sink(e);
      if (failAfterText) {
        stats.finishReason = FinishReason::Error;
        stats.error = name_ + " cut the stream";
      } else {
        stats.finishReason = FinishReason::Eos;
        stats.generatedTokens = static_cast<int32_t>(reply.size());
      }
    }
    e.kind = RequestEvent::Kind::Finished;
    e.text.clear();
    e.stats = &stats;
    job.sink(e);
  }

  void run() {
    std::unique_lock lock(mutex_);
    for (;;) {
      cv_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
      if (stopping_) {
        for (auto& job : held_) queue_.push_back(std::move(job));
        held_.clear();
        for (auto& job : queue_) {
          job.cancelled = true;
          answer(job);
        }
        return;
      }
      Job job = std::move(queue_.front());
      queue_.pop_front();
      lock.unlock();
      answer(job);
      lock.lock();
    }
  }

  std::string name_;
  std::vector<std::string> modelIds_;
  mutable std::mutex mutex_;
  std::condition_variable cv_;
  std::deque<Job> queue_;
  std::deque<Job> held_;
  std::vector<std::string> served_;  // the answer thread's own
  RequestId nextId_ = 1;
  std::atomic<int> received_{0};
  std::atomic<int> aborts_{0};
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace ember::test
