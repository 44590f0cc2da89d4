#include "server/generation_channel.h"

#include "ember/error.h"

namespace ember::openai {

void GenerationChannel::submit(const ParsedRequest& parsed) {
  for (int i = 0; i < parsed.n; ++i) {
    GenerationRequest request = parsed.generation;
    if (request.sampling.seed && i > 0) *request.sampling.seed += uint64_t(i);
    // The sink holds the channel: events may still come after the HTTP side gave up on them.
    auto self = shared_from_this();
    auto sink = [self, i](const RequestEvent& e) {
      if (e.kind == RequestEvent::Kind::Progress) return;
      ChoiceEvent event;
      event.index = i;
      event.finished = e.kind == RequestEvent::Kind::Finished;
      if (event.finished && e.stats) event.stats = *e.stats;
      else event.text = e.text;
      std::lock_guard lock(self->mutex_);
      if (event.finished) ++self->finished_;
      self->pending_.push_back(std::move(event));
      self->arrived_.notify_all();
    };
    try {
      const RequestId id = generator_.submit(std::move(request), sink);
      std::lock_guard lock(mutex_);
      ids_.push_back(id);
    } catch (const Error& e) {
      abortAll();
      std::unique_lock lock(mutex_);
      arrived_.wait(lock, [&] { return finished_ >= int(ids_.size()); });
      throw ApiError::invalid(e.what(), std::nullopt);
    }
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
    ids = ids_;
  }
  for (RequestId id : ids) generator_.abort(id);
}

bool GenerationChannel::allFinished() const {
  std::lock_guard lock(mutex_);
  return finished_ >= int(ids_.size());
}

}  // namespace ember::openai
