#pragma once
// RemoteGenerator's inner state, shared by its two source files (the public methods and the
// transfer loop). Not part of the interface.
#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include <curl/curl.h>

#include "remote_answer.h"
#include "remote_generator.h"
#include "remote_protocol.h"
#include "sse_reader.h"

namespace ember::openai {

// One request from submit to its Finished event. Owned by the loop thread once queued; libcurl's
// callbacks run on that thread too.
struct RemoteGenerator::Transfer {
  RequestId id = 0;
  std::string model;
  EncodedRequest encoded;
  uint64_t seed = 0;  // the request's own seed (a server does not report the one it drew)
  EventSink sink;
  Clock::time_point submitted;
  RemoteAnswer answer{Clock::time_point{}};
  SseReader reader;
  std::vector<SseEvent> events;
  CURL* easy = nullptr;  // null while waiting for its first try or a retry
  curl_slist* headers = nullptr;
  char errorBuffer[CURL_ERROR_SIZE] = {};
  long status = 0;
  std::optional<double> retryAfter;  // seconds, from the answer's Retry-After
  std::string contentType;
  std::string errorBody;  // the body of a non-200 answer (bounded)
  std::string failure;    // set inside a callback that stopped the transfer
  size_t answerBytes = 0;  // bytes of a 200 answer
  int attempt = 0;
  Clock::time_point notBefore;
  Clock::time_point lastByte;
  const RemoteServerOptions* options = nullptr;
};

struct RemoteGenerator::Loop {
  std::mutex mutex;  // guards incoming, aborts and stopping
  std::vector<std::unique_ptr<Transfer>> incoming;
  std::vector<RequestId> aborts;
  bool stopping = false;
  CURLM* multi = nullptr;
  std::atomic<RequestId> nextId{1};
  std::atomic<int32_t> running{0};
  std::atomic<int32_t> waiting{0};
  std::map<RequestId, std::unique_ptr<Transfer>> active;  // the loop thread's own
};

using TransferCallback = size_t (*)(char*, size_t, size_t, void*);
TransferCallback transferHeaderCallback();  // CURLOPT_HEADERFUNCTION, data = Transfer*
TransferCallback transferBodyCallback();    // CURLOPT_WRITEFUNCTION, data = Transfer*

}  // namespace ember::openai
