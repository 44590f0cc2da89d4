#include "bench_stagger.h"

#include <algorithm>
#include <cstdio>
#include <memory>

#include "bench_batch.h"
#include "bench_figures.h"
#include "ember/error.h"

namespace ember::bench {
namespace {

struct StaggerRun {
  double itlP50Ms = 0, itlP95Ms = 0, itlMaxMs = 0;  // every chat's gaps pooled
  double firstTtftMs = 0;                           // the first chat: alone, nothing decoding
  double newcomerTtftP50Ms = 0, newcomerTtftMaxMs = 0;  // the chats opened while others decode
};

StaggerRun runStaggeredChats(BenchHost& engine, const StaggerOptions& o) {
  std::vector<GenerationRequest> requests;
  for (int i = 0; i < o.chats; ++i) {
    GenerationRequest r;
    r.promptTokens = syntheticPrompt(static_cast<size_t>(o.promptTokens), engine.vocabSize(),
                                     o.seed + static_cast<uint64_t>(i));
    r.sampling.temperature = 0;
    r.sampling.maxTokens = o.tokens;
    r.ignoreEndOfGeneration = true;
    requests.push_back(std::move(r));
  }
  const std::vector<RequestStats> stats = engine.runStaggered(std::move(requests), o.startAfter);
  std::vector<double> gaps, newcomers;
  for (size_t i = 0; i < stats.size(); ++i) {
    if (stats[i].finishReason == FinishReason::Error)
      throw Error("staggered request failed: " + stats[i].error);
    gaps.insert(gaps.end(), stats[i].interTokenMs.begin(), stats[i].interTokenMs.end());
    if (i > 0) newcomers.push_back(stats[i].ttftMs);
  }
  StaggerRun run;
  run.itlP50Ms = percentile(gaps, 50);
  run.itlP95Ms = percentile(gaps, 95);
  run.itlMaxMs = gaps.empty() ? 0 : *std::max_element(gaps.begin(), gaps.end());
  run.firstTtftMs = stats.front().ttftMs;
  run.newcomerTtftP50Ms = percentile(newcomers, 50);
  run.newcomerTtftMaxMs = newcomers.empty() ? 0 : *std::max_element(newcomers.begin(), newcomers.end());
  return run;
}

}  // namespace

std::vector<int> parseBudgetList(const std::string& text) {
  return parsePositiveIntList(text, "--prompt-budgets", false);
}

int runStaggerFigure(const StaggerOptions& o, Reporter& reporter, bool json) {
  if (o.chats < 2) throw Error("--chats must be at least 2 (one answering, one arriving)");
  if (o.tokens < 2) throw Error("--tokens must be at least 2 (decode needs two tokens)");
  if (o.promptTokens < 1 || o.startAfter < 1)
    throw Error("--prompt-tokens and --stagger must be at least 1");
  if (o.budgets.empty()) throw Error("--prompt-budgets is empty");
  // One engine per budget, loaded side by side; only one steps at a time.
  std::vector<std::unique_ptr<BenchHost>> engines;
  for (int budget : o.budgets) {
    EngineOptions e;
    e.modelPath = o.modelPath;
    e.threads = o.threads;
    e.kernels = o.kernels;
    e.maxSequences = o.chats;
    e.promptBudgetWhileDecoding = budget;
    e.contextLength = (o.promptTokens + o.tokens + 15) / 16 * 16 + 64;
    e.prefixCaching = false;  // every repetition repeats the same prompts
    engines.push_back(std::make_unique<BenchHost>(e));
    GenerationRequest warm;  // page faults, thread start
    warm.promptTokens = syntheticPrompt(16, engines.back()->vocabSize(), o.seed + 1000);
    warm.sampling.temperature = 0;
    warm.sampling.maxTokens = 4;
    engines.back()->run(std::move(warm), "warm-up request");
  }
  const size_t n = o.budgets.size();
  std::vector<std::vector<StaggerRun>> runs(n);
  for (int rep = 0; rep < o.repetitions; ++rep)  // budgets interleaved
    for (size_t b = 0; b < n; ++b) runs[b].push_back(runStaggeredChats(*engines[b], o));

  const std::string sha = fileSha256(o.modelPath);
  if (!json)
    std::printf("stagger: %d chats of %d prompt + %d generated tokens, each opened once the one "
                "before it streamed %d pieces; ms (ITL over every chat's gaps; TTFT of the first "
                "chat alone and of the newcomers)\n",
                o.chats, o.promptTokens, o.tokens, o.startAfter);
  auto column = [&](size_t b, double StaggerRun::*field) {
    std::vector<double> v;
    for (const StaggerRun& r : runs[b]) v.push_back(r.*field);
    return v;
  };
  const std::pair<const char*, double StaggerRun::*> fields[] = {
      {"itl-p50", &StaggerRun::itlP50Ms},
      {"itl-p95", &StaggerRun::itlP95Ms},
      {"itl-max", &StaggerRun::itlMaxMs},
      {"first-ttft", &StaggerRun::firstTtftMs},
      {"newcomer-ttft-p50", &StaggerRun::newcomerTtftP50Ms},
      {"newcomer-ttft-max", &StaggerRun::newcomerTtftMaxMs},
  };
  for (size_t b = 0; b < n; ++b)
    for (const auto& [name, field] : fields)
      reporter.report("stagger-budget" + std::to_string(o.budgets[b]) + "-" + name, "ms",
                      column(b, field), {}, sha);
  // Ratios against the first budget, per repetition (the runs sat next to each other).
  const std::string base = std::to_string(o.budgets[0]);
  for (size_t b = 1; b < n; ++b)
    for (const auto& [name, field] : fields)
      reporter.report("stagger-" + std::string(name) + "-budget" + std::to_string(o.budgets[b]) +
                          "-over-budget" + base,
                      "x", pairedRatios(column(b, field), column(0, field)), {}, sha);
  return 0;
}

}  // namespace ember::bench
