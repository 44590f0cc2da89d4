#include "upstream_metrics.h"

#include <cstdio>
#include <functional>

namespace ember::openai {

namespace {
// Label values escape backslash, double quote and newline (the exposition format's rule).
std::string label(const std::string& value) {
  std::string out;
  for (const char c : value) {
    if (c == '\\' || c == '"') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out;
}
}  // namespace

std::string renderUpstreamMetrics(const std::vector<UpstreamCounters>& upstreams) {
  std::string out;
  const auto family = [&](const char* name, const char* type, const char* help,
                          const std::function<double(const UpstreamCounters&)>& value) {
    out += std::string("# HELP ") + name + " " + help + "\n# TYPE " + name + " " + type + "\n";
    for (const auto& u : upstreams) {
      char number[64];
      std::snprintf(number, sizeof number, "%.17g", value(u));
      out += std::string(name) + "{upstream=\"" + label(u.name) + "\"} " + number + "\n";
    }
  };
  family("ember_upstream_healthy", "gauge", "1 while the upstream is admitted, 0 while ejected.",
         [](auto& u) { return u.healthy ? 1.0 : 0.0; });
  family("ember_upstream_outstanding_requests", "gauge", "Requests sent and not finished.",
         [](auto& u) { return double(u.outstanding); });
  family("ember_upstream_requests_total", "counter", "Requests routed to the upstream.",
         [](auto& u) { return double(u.routed); });
  family("ember_upstream_completed_total", "counter", "Requests it finished without error.",
         [](auto& u) { return double(u.completed); });
  family("ember_upstream_failed_total", "counter", "Requests that ended with an error.",
         [](auto& u) { return double(u.failed); });
  family("ember_upstream_retried_elsewhere_total", "counter",
         "Requests it refused before streaming, sent to another upstream.",
         [](auto& u) { return double(u.retriedElsewhere); });
  family("ember_upstream_affinity_hits_total", "counter",
         "Requests routed to it because it served the conversation's earlier turns.",
         [](auto& u) { return double(u.affinityHits); });
  family("ember_upstream_ejections_total", "counter", "Times health checks ejected it.",
         [](auto& u) { return double(u.ejections); });
  family("ember_upstream_prompt_tokens_total", "counter", "Prompt tokens it reported.",
         [](auto& u) { return double(u.promptTokens); });
  family("ember_upstream_cached_prompt_tokens_total", "counter",
         "Prompt tokens it reported as reused from its prefix cache.",
         [](auto& u) { return double(u.cachedPromptTokens); });
  family("ember_upstream_generated_tokens_total", "counter", "Tokens it generated.",
         [](auto& u) { return double(u.generatedTokens); });
  return out;
}

}  // namespace ember::openai
