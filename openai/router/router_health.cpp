// The router's health checks: each upstream's probe (outside the lock: it is a network call),
// then its model list when it is admitted, on every tenth healthy check, or while it has none.
#include "ember/error.h"
#include "router_state.h"

namespace ember::openai {

void Router::State::healthRound(bool first) {
  std::vector<RouterUpstream> specs;
  std::vector<bool> wantModels;
  {
    std::lock_guard lock(mutex);
    for (const auto& u : upstreams) {
      specs.push_back(u.spec);
      wantModels.push_back(!u.counters.healthy || u.models.empty() || u.checks % 10 == 9);
    }
  }
  for (size_t i = 0; i < specs.size(); ++i) {
    HealthCheck check;
    if (specs[i].probe) {
      check = specs[i].probe();
    } else {
      check.healthy = true;
    }
    std::vector<GeneratorModel> models;
    bool listed = false;
    if (check.healthy && wantModels[i]) {
      try {
        models = specs[i].listModels ? specs[i].listModels() : specs[i].generator->models();
        listed = true;
      } catch (const Error& e) {
        check.healthy = false;
        check.message = e.what();
      }
    }
    std::lock_guard lock(mutex);
    Upstream& u = upstreams[i];
    u.checks++;
    if (listed) u.models = std::move(models);
    if (!check.healthy) {
      if (first) {  // starts ejected, without counting an ejection
        u.counters.lastError = check.message;
        u.consecutiveFailures = options.ejectAfterFailures;
      } else {
        noteFailure(i, check.message);
      }
      continue;
    }
    u.consecutiveFailures = 0;
    ++u.consecutiveSuccesses;
    if (!u.counters.healthy && (first || u.consecutiveSuccesses >= options.readmitAfterSuccesses)) {
      u.counters.healthy = true;
      u.counters.lastError.clear();
      if (!first) u.counters.readmissions++;
    }
  }
}

}  // namespace ember::openai
