#pragma once
// Printing benchmark figures: median, min and max over the repetitions, as a table line or as
// one JSON object per line (figure, unit, median, min, max, repetitions, model_sha256, commit).
#include <string>
#include <vector>

#include "bench_figures.h"

namespace ember::bench {

std::vector<double> values(const std::vector<Sample>& samples);
std::string fileSha256(const std::string& path);  // via sha256sum; "unknown" if unavailable
std::string sourceCommit();                        // git HEAD of the source tree, or "unknown"

class Reporter {
 public:
  explicit Reporter(bool json) : json_(json) {}
  // samples may be empty (no latency columns).
  void report(const std::string& figure, const std::string& unit, const std::vector<double>& v,
              const std::vector<Sample>& samples, const std::string& modelSha);

 private:
  bool json_;
};

}  // namespace ember::bench
