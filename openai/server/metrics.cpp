#include "server/metrics.h"

#include <cstdio>

namespace ember::openai {
namespace {

std::string number(double v) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.9g", v);
  return buffer;
}

void line(std::string& out, const std::string& text) {
  out += text;
  out += '\n';
}

void header(std::string& out, const std::string& name, const char* type, const std::string& help) {
  line(out, "# HELP " + name + " " + help);
  line(out, "# TYPE " + name + " " + type);
}

}  // namespace

Histogram::Histogram(std::vector<double> upperBounds)
    : bounds_(std::move(upperBounds)), counts_(bounds_.size() + 1, 0) {}

void Histogram::observe(double value) {
  size_t i = 0;
  while (i < bounds_.size() && value > bounds_[i]) ++i;
  ++counts_[i];
  sum_ += value;
  ++count_;
}

void Histogram::render(std::string& out, const std::string& name, const std::string& help) const {
  header(out, name, "histogram", help);
  uint64_t cumulative = 0;
  for (size_t i = 0; i < bounds_.size(); ++i) {
    cumulative += counts_[i];
    line(out, name + "_bucket{le=\"" + number(bounds_[i]) + "\"} " + std::to_string(cumulative));
  }
  cumulative += counts_.back();
  line(out, name + "_bucket{le=\"+Inf\"} " + std::to_string(cumulative));
  line(out, name + "_sum " + number(sum_));
  line(out, name + "_count " + std::to_string(count_));
}

// Buckets in seconds: TTFT and end to end from 10 ms to 2 min; inter-token from 1 ms to 2 s.
ServerMetrics::ServerMetrics()
    : ttft_({0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120}),
      itl_({0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2}),
      e2e_({0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120}),
      queue_({0.001, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60}) {}

void ServerMetrics::countRequest(const std::string& endpoint, int status) {
  std::lock_guard lock(mutex_);
  ++requests_[{endpoint, status}];
}

void ServerMetrics::countRejected(const std::string& reason) {
  std::lock_guard lock(mutex_);
  ++rejected_[reason];
}

void ServerMetrics::countDisconnect() {
  std::lock_guard lock(mutex_);
  ++disconnects_;
}

void ServerMetrics::observe(const RequestStats& s) {
  std::lock_guard lock(mutex_);
  promptTokens_ += static_cast<uint64_t>(std::max(0, s.promptTokens));
  cachedTokens_ += static_cast<uint64_t>(std::max(0, s.cachedPromptTokens));
  generatedTokens_ += static_cast<uint64_t>(std::max(0, s.generatedTokens));
  if (s.ttftMs > 0) ttft_.observe(s.ttftMs / 1000);
  for (double gap : s.interTokenMs) itl_.observe(gap / 1000);
  e2e_.observe(s.totalMs / 1000);
  queue_.observe(s.queueWaitMs / 1000);
}

std::string ServerMetrics::render(const GeneratorStatus& status, int32_t inFlight) const {
  std::lock_guard lock(mutex_);
  std::string out;
  header(out, "ember_requests_total", "counter", "HTTP requests answered, by endpoint and status");
  for (const auto& [key, count] : requests_)
    line(out, "ember_requests_total{endpoint=\"" + key.first + "\",status=\"" +
                  std::to_string(key.second) + "\"} " + std::to_string(count));
  header(out, "ember_rejected_total", "counter", "Requests refused with 429, by reason");
  for (const char* reason : {"rate_limit", "tokens", "queue_full"}) {
    const auto it = rejected_.find(reason);
    line(out, std::string("ember_rejected_total{reason=\"") + reason + "\"} " +
                  std::to_string(it == rejected_.end() ? 0 : it->second));
  }
  header(out, "ember_client_disconnects_total", "counter",
         "Requests aborted because the client went away");
  line(out, "ember_client_disconnects_total " + std::to_string(disconnects_));
  header(out, "ember_prompt_tokens_total", "counter", "Prompt tokens of finished requests");
  line(out, "ember_prompt_tokens_total " + std::to_string(promptTokens_));
  header(out, "ember_cached_prompt_tokens_total", "counter",
         "Prompt tokens whose KV blocks the prefix cache reused");
  line(out, "ember_cached_prompt_tokens_total " + std::to_string(cachedTokens_));
  header(out, "ember_generated_tokens_total", "counter", "Tokens generated");
  line(out, "ember_generated_tokens_total " + std::to_string(generatedTokens_));
  ttft_.render(out, "ember_time_to_first_token_seconds", "Submission to the first text piece");
  itl_.render(out, "ember_inter_token_seconds", "Gap between text pieces");
  e2e_.render(out, "ember_request_duration_seconds", "Submission to the last event");
  queue_.render(out, "ember_queue_wait_seconds", "Submission to the first engine step");

  header(out, "ember_requests_running", "gauge", "Requests being computed");
  line(out, "ember_requests_running " + std::to_string(status.running));
  header(out, "ember_requests_waiting", "gauge", "Requests waiting for a slot");
  line(out, "ember_requests_waiting " + std::to_string(status.waiting));
  header(out, "ember_http_requests_in_flight", "gauge", "Admitted generation requests");
  line(out, "ember_http_requests_in_flight " + std::to_string(inFlight));
  header(out, "ember_kv_blocks_total", "gauge", "KV cache blocks in the pool");
  line(out, "ember_kv_blocks_total " + std::to_string(status.kvCache.totalBlocks));
  header(out, "ember_kv_blocks_used", "gauge", "KV cache blocks held by running requests");
  line(out, "ember_kv_blocks_used " + std::to_string(status.kvCache.referencedBlocks));
  header(out, "ember_kv_blocks_cached", "gauge", "Full KV blocks a later prompt can reuse");
  line(out, "ember_kv_blocks_cached " + std::to_string(status.kvCache.cachedBlocks));
  header(out, "ember_prefix_cache_hit_ratio", "gauge",
         "Share of prompt tokens served from the prefix cache");
  line(out, "ember_prefix_cache_hit_ratio " +
                number(promptTokens_ ? double(cachedTokens_) / double(promptTokens_) : 0));
  header(out, "ember_model_ready", "gauge", "1 when a model is loaded and ready");
  line(out, std::string("ember_model_ready ") +
                (status.state == GeneratorStatus::State::Ready ? "1" : "0"));
  return out;
}

}  // namespace ember::openai
