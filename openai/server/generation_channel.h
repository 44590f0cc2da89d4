#pragma once
// The n requests of one HTTP generation request and the queue their events arrive in: sinks
// push on the generator's thread (never blocking on a socket), the HTTP thread takes them.
#include <chrono>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "codec/request_codec.h"
#include "ember/generator.h"

namespace ember::openai {

struct ChoiceEvent {
  int index = 0;
  bool finished = false;
  std::string text;    // !finished
  std::vector<TokenLogprob> logprobs;  // !finished, when the request asked for them
  RequestStats stats;  // finished
};

class GenerationChannel : public std::enable_shared_from_this<GenerationChannel> {
 public:
  explicit GenerationChannel(Generator& generator) : generator_(generator) {}

  // Submits choice 0 now (throws ApiError(400) when the generator refuses it) and the other
  // parsed.n - 1 once choice 0 has read the prompt, so that they reuse its KV blocks (seed + i
  // for choice i when a seed is given). A later choice the generator refuses finishes with an
  // error event.
  void submit(const ParsedRequest& parsed);
  // Events that arrived, waiting up to `timeout` for the first.
  std::vector<ChoiceEvent> take(std::chrono::milliseconds timeout);
  void abortAll();
  bool allFinished() const;

 private:
  EventSink sinkFor(int index);
  void push(ChoiceEvent event);  // mutex_ held
  void submitRest();

  Generator& generator_;
  GenerationRequest template_;
  int choices_ = 0;
  bool restStarted_ = false;
  bool aborted_ = false;
  std::vector<RequestId> ids_;
  mutable std::mutex mutex_;
  std::condition_variable arrived_;
  std::deque<ChoiceEvent> pending_;
  int finished_ = 0;
};

}  // namespace ember::openai
