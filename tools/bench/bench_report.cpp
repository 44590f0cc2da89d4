#include "bench_report.h"

#include <algorithm>
#include <array>
#include <cstdio>
#include <memory>

#include <nlohmann/json.hpp>

#include "ember/request.h"

namespace ember::bench {
namespace {

std::string firstWordOf(const std::string& command) {
  std::unique_ptr<FILE, int (*)(FILE*)> pipe(popen(command.c_str(), "r"), pclose);
  if (!pipe) return "unknown";
  std::array<char, 256> buf{};
  std::string out;
  while (fgets(buf.data(), buf.size(), pipe.get())) out += buf.data();
  const size_t end = out.find_first_of(" \n");
  out = out.substr(0, end);
  return out.empty() ? "unknown" : out;
}

std::string shellQuoted(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

}  // namespace

std::vector<double> values(const std::vector<Sample>& samples) {
  std::vector<double> v;
  for (const Sample& s : samples) v.push_back(s.value);
  return v;
}

std::string fileSha256(const std::string& path) {
  return firstWordOf("sha256sum " + shellQuoted(path) + " 2>/dev/null");
}

std::string sourceCommit() {
  return firstWordOf("git -C " + shellQuoted(EMBER_SOURCE_DIR) + " rev-parse HEAD 2>/dev/null");
}

void Reporter::report(const std::string& figure, const std::string& unit,
                      const std::vector<double>& v, const std::vector<Sample>& samples,
                      const std::string& modelSha) {
  const double median = percentile(v, 50);
  const double lo = *std::min_element(v.begin(), v.end());
  const double hi = *std::max_element(v.begin(), v.end());
  std::vector<double> ttft, p50, p95;
  for (const Sample& s : samples) {
    ttft.push_back(s.ttftMs);
    p50.push_back(s.itlP50Ms);
    p95.push_back(s.itlP95Ms);
  }
  if (json_) {
    nlohmann::ordered_json j;
    j["figure"] = figure;
    j["unit"] = unit;
    j["median"] = median;
    j["min"] = lo;
    j["max"] = hi;
    j["repetitions"] = v.size();
    if (!samples.empty()) {
      j["ttft_ms_median"] = percentile(ttft, 50);
      j["itl_p50_ms_median"] = percentile(p50, 50);
      j["itl_p95_ms_median"] = percentile(p95, 50);
    }
    j["model_sha256"] = modelSha;
    j["commit"] = sourceCommit();
    std::printf("%s\n", j.dump().c_str());
  } else {
    std::printf("%-8s %10.2f %-9s (min %.2f, max %.2f, n=%zu)", figure.c_str(), median,
                unit.c_str(), lo, hi, v.size());
    if (!samples.empty() && percentile(p50, 50) > 0)
      std::printf("  TTFT %.1f ms, ITL p50 %.2f ms p95 %.2f ms", percentile(ttft, 50),
                  percentile(p50, 50), percentile(p95, 50));
    std::printf("\n");
  }
  std::fflush(stdout);
}

}  // namespace ember::bench
