#pragma once
// The router's per-upstream counters in the Prometheus text format (version 0.0.4), appended to
// the server's /metrics: one series per upstream, labelled upstream="NAME".
#include <string>
#include <vector>

#include "router.h"

namespace ember::openai {

std::string renderUpstreamMetrics(const std::vector<UpstreamCounters>& upstreams);

}  // namespace ember::openai
