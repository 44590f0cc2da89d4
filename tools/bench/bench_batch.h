#pragma once
// The batch figure (BENCHMARKS.md): aggregate decode tokens/s and inter-token latency with C
// chats decoding at once, against the same figures at the smallest C (normally 1).
#include <cstdint>
#include <string>
#include <vector>

#include "bench_report.h"
#include "ember/engine.h"

namespace ember::bench {

// "1,2,4" -> {1, 2, 4}: positive integers (strictly increasing when `increasing`); anything else
// throws an ember::Error that names `option`.
std::vector<int> parsePositiveIntList(const std::string& text, const std::string& option,
                                      bool increasing);
// "1,4,8,16" -> {1, 4, 8, 16}: positive, strictly increasing. Throws ember::Error otherwise.
std::vector<int> parseConcurrencyList(const std::string& text);

struct BatchOptions {
  std::string modelPath;
  int threads = 0;
  std::string kernels = EngineOptions{}.kernels;
  int repetitions = 5;
  std::vector<int> concurrency = {1, 4, 8, 16};
  int tokens = 64;  // generated per request
  uint64_t seed = 1234;
};

// One run of C requests added at once and stepped until all are done.
struct BatchRun {
  // Sum over requests of (generated - 1) / (latest last token - earliest first token), tokens/s.
  double aggregateTokensPerSecond = 0;
  double ttftP50Ms = 0;  // over the requests
  double itlP50Ms = 0;   // over every request's inter-token gaps pooled
  double itlP95Ms = 0;
};

// num[i] / den[i] per repetition i: two arms that ran side by side in each repetition.
std::vector<double> pairedRatios(const std::vector<double>& num, const std::vector<double>& den);

// Runs the figure and reports it (figure lines, or JSON lines). Returns the exit code.
int runBatchFigure(const BatchOptions& options, Reporter& reporter, bool json);

}  // namespace ember::bench
