#pragma once
// The server's Prometheus metrics: counters, histograms and the gauges read from the generator
// at scrape time. Thread-safe; render() writes the text exposition format (version 0.0.4).
#include <array>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "ember/generator.h"

namespace ember::openai {

class Histogram {
 public:
  explicit Histogram(std::vector<double> upperBounds);
  void observe(double value);
  void render(std::string& out, const std::string& name, const std::string& help) const;

 private:
  std::vector<double> bounds_;
  std::vector<uint64_t> counts_;  // per bucket (not cumulative), last = +Inf
  double sum_ = 0;
  uint64_t count_ = 0;
};

class ServerMetrics {
 public:
  ServerMetrics();
  void countRequest(const std::string& endpoint, int status);
  void countRejected(const std::string& reason);  // rate_limit, tokens, queue_full
  void countDisconnect();
  // A finished generation: its tokens and latencies.
  void observe(const RequestStats& stats);
  // Prometheus text; gauges from the generator's status and the server's in-flight count.
  std::string render(const GeneratorStatus& status, int32_t inFlight) const;

 private:
  mutable std::mutex mutex_;
  std::map<std::pair<std::string, int>, uint64_t> requests_;
  std::map<std::string, uint64_t> rejected_;
  uint64_t disconnects_ = 0;
  uint64_t promptTokens_ = 0, cachedTokens_ = 0, generatedTokens_ = 0;
  Histogram ttft_, itl_, e2e_, queue_;
};

}  // namespace ember::openai
