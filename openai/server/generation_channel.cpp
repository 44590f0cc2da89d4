#include "server/generation_channel.h"

#include "ember/error.h"

namespace ember::openai {

EventSink GenerationChannel::sinkFor(int index) {
  // The sink holds the channel: events may still come after the HTTP side gave up on them.
  auto self = shared_from_this();
  return [self, index](const RequestEvent& e) {
    if (e.kind == RequestEvent::Kind::Progress) return;
    ChoiceEvent event;
    event.index = index;
    event.finished = e.kind == RequestEvent::Kind::Finished;
    if (event.finished && e.stats) event.stats = *e.stats;
    else {
      event.text = e.text;
      event.logprobs = e.logprobs;
    }
    bool startRest = false;
    {
      std::lock_guard lock(self->mutex_);
      if (index == 0 && !self->restStarted_) startRest = self->restStarted_ = true;
      self->push(std::move(event));
    }
    // Choice 0 has read the prompt: its full KV blocks are in the prefix cache now, so the
    // other choices reuse them instead of computing the prompt again.
    if (startRest) self->submitRest();
  };
}

void GenerationChannel::push(ChoiceEvent event) {
  if (event.finished) ++finished_;
  pending_.push_back(std::move(event));
  arrived_.notify_all();
}

void GenerationChannel::submit(const ParsedRequest& parsed) {
  template_ = parsed.generation;
  choices_ = parsed.n;
  try {
    const RequestId id = generator_.submit(template_, sinkFor(0));
    std::lock_guard lock(mutex_);
    ids_.push_back(id);
  } catch (const Error& e) {
    throw ApiError::invalid(e.what(), std::nullopt);
  }
}

void GenerationChannel::submitRest() {
  for (int i = 1; i < choices_; ++i) {
    GenerationRequest request = template_;
    if (request.sampling.seed) *request.sampling.seed += uint64_t(i);  // distinct, reproducible
    bool aborted;
    {
      std::lock_guard lock(mutex_);
      aborted = aborted_;
    }
    ChoiceEvent failed;
    failed.index = i;
    failed.finished = true;
    if (aborted) {
      failed.stats.finishReason = FinishReason::Cancelled;
    } else {
      try {
        const RequestId id = generator_.submit(std::move(request), sinkFor(i));
        std::lock_guard lock(mutex_);
        ids_.push_back(id);
        if (aborted_) generator_.abort(id);
        continue;
      } catch (const Error& e) {
        failed.stats.finishReason = FinishReason::Error;
        failed.stats.error = e.what();
      }
    }
    std::lock_guard lock(mutex_);
    push(std::move(failed));
  }
}

std::vector<ChoiceEvent> GenerationChannel::take(std::chrono::milliseconds timeout) {
  std::unique_lock lock(mutex_);
  arrived_.wait_for(lock, timeout, [&] { return !pending_.empty(); });
  std::vector<ChoiceEvent> events(std::make_move_iterator(pending_.begin()),
                                  std::make_move_iterator(pending_.end()));
  pending_.clear();
  return events;
}

void GenerationChannel::abortAll() {
  std::vector<RequestId> ids;
  {
    std::lock_guard lock(mutex_);
    aborted_ = true;
    ids = ids_;
  }
  for (RequestId id : ids) generator_.abort(id);
}

bool GenerationChannel::allFinished() const {
  std::lock_guard lock(mutex_);
  return finished_ >= choices_;
}

}  // namespace ember::openai
