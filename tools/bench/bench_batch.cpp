#include "bench_batch.h"

#include <algorithm>
#include <cstdio>
#include <optional>

#include "bench_figures.h"
#include "ember/error.h"

namespace ember::bench {
namespace {

// What one request of a batch run saw.
struct RequestTimes {
  std::optional<Clock::time_point> firstText;
  Clock::time_point finished;
  RequestStats stats;
};

// Prompts of 32..64 random ids, a different one per request (no shared prefixes).
std::vector<int32_t> batchPrompt(int request, size_t vocab, uint64_t seed) {
  const size_t length = 32 + static_cast<size_t>(request * 13) % 33;
  return syntheticPrompt(length, vocab, seed + static_cast<uint64_t>(request));
}

// The aggregate decode rate is measured over the decode phase of the whole batch: from the
// earliest first token of any request to the latest finish (the step that samples a request's
// last token also finishes it). The tokens counted are each request's tokens after its own first
// one, sum of (generated - 1), the same count as the batch-1 decode rate (n-1)/(t_last-t_first).
// The window also holds the steps where later requests still prefill next to early ones'
// decoding; that is what chats arriving together cost, so it stays in.
BatchRun runBatch(BenchHost& engine, int concurrency, int tokens, uint64_t seed) {
  std::vector<RequestTimes> times(static_cast<size_t>(concurrency));
  std::vector<GenerationRequest> requests;
  for (int i = 0; i < concurrency; ++i) {
    GenerationRequest r;
    r.promptTokens = batchPrompt(i, engine.vocabSize(), seed);
    r.sampling.temperature = 0;
    r.sampling.maxTokens = tokens;
    r.ignoreEndOfGeneration = true;
    requests.push_back(std::move(r));
  }
  // Added together, so they enter the engine's same step; event times are the engine's.
  const std::vector<RequestStats> stats =
      engine.runTogether(std::move(requests), [&times](size_t i, const RequestEvent& e) {
        RequestTimes& t = times[i];
        if (e.kind == RequestEvent::Kind::Text && !t.firstText) t.firstText = e.time;
        if (e.kind == RequestEvent::Kind::Finished) t.finished = e.time;
      });
  for (size_t i = 0; i < stats.size(); ++i) times[i].stats = stats[i];

  std::optional<Clock::time_point> begin, end;
  double counted = 0;
  std::vector<double> ttft, gaps;
  for (const RequestTimes& t : times) {
    if (t.stats.finishReason == FinishReason::Error)
      throw Error("batch request failed: " + t.stats.error);
    const Clock::time_point first = t.firstText.value_or(t.finished);
    if (!begin || first < *begin) begin = first;
    if (!end || t.finished > *end) end = t.finished;
    counted += std::max(0, t.stats.generatedTokens - 1);
    ttft.push_back(t.stats.ttftMs);
    gaps.insert(gaps.end(), t.stats.interTokenMs.begin(), t.stats.interTokenMs.end());
  }
  BatchRun run;
  const double seconds = std::chrono::duration<double>(*end - *begin).count();
  run.aggregateTokensPerSecond = seconds > 0 ? counted / seconds : 0;
  run.ttftP50Ms = percentile(ttft, 50);
  run.itlP50Ms = percentile(gaps, 50);
  run.itlP95Ms = percentile(gaps, 95);
  return run;
}

}  // namespace

std::vector<double> pairedRatios(const std::vector<double>& num, const std::vector<double>& den) {
  std::vector<double> r;
  for (size_t i = 0; i < num.size() && i < den.size(); ++i)
    r.push_back(den[i] > 0 ? num[i] / den[i] : 0);
  return r;
}

std::vector<int> parsePositiveIntList(const std::string& text, const std::string& option,
                                      bool increasing) {
  std::vector<int> list;
  size_t at = 0;
  while (at <= text.size()) {
    const size_t comma = std::min(text.find(',', at), text.size());
    const std::string item = text.substr(at, comma - at);
    int value = 0;
    size_t used = 0;
    try {
      value = std::stoi(item, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (item.empty() || used != item.size() || value < 1)
      throw Error(option + " wants positive integers separated by commas, got '" + text + "'");
    if (increasing && !list.empty() && value <= list.back())
      throw Error(option + " wants increasing values, got '" + text + "'");
    list.push_back(value);
    at = comma + 1;
  }
  return list;
}

std::vector<int> parseConcurrencyList(const std::string& text) {
  return parsePositiveIntList(text, "--concurrency", true);
}

int runBatchFigure(const BatchOptions& options, Reporter& reporter, bool json) {
  if (options.concurrency.empty()) throw Error("--concurrency is empty");
  if (options.tokens < 2) throw Error("--tokens must be at least 2 (decode needs two tokens)");
  EngineOptions e;
  e.modelPath = options.modelPath;
  e.threads = options.threads;
  e.kernels = options.kernels;
  // One engine sized for the largest batch; a smaller batch just leaves sequences unused.
  e.maxSequences = options.concurrency.back();
  // Room for the longest prompt (64) and the answer, in whole blocks, plus a margin.
  e.contextLength = (64 + options.tokens + 15) / 16 * 16 + 64;
  // Every repetition repeats the same prompts; without the cache each one computes them again.
  e.prefixCaching = false;
  BenchHost engine(e);
  runBatch(engine, 1, 8, options.seed + 1000);  // warm-up: page faults, thread start

  const size_t n = options.concurrency.size();
  std::vector<std::vector<Sample>> samples(n);
  std::vector<std::vector<double>> aggregate(n), itlP95(n);
  for (int rep = 0; rep < options.repetitions; ++rep) {  // C1 C4 C8 ... interleaved
    for (size_t c = 0; c < n; ++c) {
      const BatchRun run = runBatch(engine, options.concurrency[c], options.tokens, options.seed);
      samples[c].push_back(
          {run.aggregateTokensPerSecond, run.ttftP50Ms, run.itlP50Ms, run.itlP95Ms});
      aggregate[c].push_back(run.aggregateTokensPerSecond);
      itlP95[c].push_back(run.itlP95Ms);
    }
  }
  const std::string sha = fileSha256(options.modelPath);
  if (!json)
    std::printf("batch: C requests of %d tokens added at once; aggregate decode tokens/s "
                "(TTFT p50 over the requests, ITL p50/p95 over all their gaps)\n",
                options.tokens);
  for (size_t c = 0; c < n; ++c)
    reporter.report("batch" + std::to_string(options.concurrency[c]), "tokens/s", aggregate[c],
                    samples[c], sha);
  // Ratios against the smallest concurrency, per repetition (its runs sat next to each other).
  const std::string base = std::to_string(options.concurrency[0]);
  for (size_t c = 1; c < n; ++c) {
    const std::string at = std::to_string(options.concurrency[c]);
    reporter.report("batch" + at + "-over-batch" + base, "x",
                    pairedRatios(aggregate[c], aggregate[0]), {}, sha);
    reporter.report("itl-p95-batch" + at + "-over-batch" + base, "x",
                    pairedRatios(itlP95[c], itlP95[0]), {}, sha);
  }
  if (!json)
    std::printf("goals (135M model): batch8-over-batch1 >= 3x; "
                "itl-p95-batch8-over-batch1 < 3x\n");
  return 0;
}

}  // namespace ember::bench
