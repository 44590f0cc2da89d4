// ember-bench: speed figures of the engine, as BENCHMARKS.md describes them.
//   ember-bench (pp|tg|bw|all|tokens) --model M [--threads N] [--kernels fast|reference|approx] [--repetitions R] [--json]
//               [--prompt-seed S] [--count N]
//   ember-bench ttft-turns --model M [--dump-turns FILE] [...]
//   ember-bench batch --model M [--concurrency 1,4,8,16] [--tokens 64] [...]
//   ember-bench batch --model M --stagger PIECES [--concurrency CHATS] [--prompt-tokens 448]
//               [--prompt-budgets 512,64] [...]
//   ember-bench load --model M [--ctx 2560] [...]
// pp: prompt tokens/s for 512- and 2048-token prompts; tg: decode tokens/s for 128 tokens after
// a 512-token prompt (with TTFT and inter-token latency); bw: streaming read bandwidth (GB/s)
// for the roofline; tokens: prints the synthetic prompt ids (so a peer can use the same ones).
// ttft-turns: TTFT per turn of a replayed 8-turn chat, prefix cache on / off / ideal
// (--dump-turns writes the turns' messages and prompt ids for a peer; --own-answers adds the
// chat lived, each answer the model's own and sent back the next turn); batch: aggregate decode
// tokens/s and ITL with C chats at once (with --stagger: chats opened one at a time while the
// earlier ones answer, their ITL p50/p95/max and the newcomers' TTFT per prompt budget while
// decoding, side by side); load: time to the first token possible against the
// file read time, and peak resident memory after a 512-token prompt (one repetition per process).
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli/cli_args.h"
#include "bench_batch.h"
#include "bench_stagger.h"
#include "bench_cuda.h"
#include "bench_figures.h"
#include "bench_load.h"
#include "bench_report.h"
#include "bench_turns.h"
#include "ember/error.h"
#include "ember/version.h"

using namespace ember;

namespace {

constexpr const char* kUsage =
    "usage: ember-bench (pp|tg|bw|all|tokens) --model M [--threads N] [--kernels fast|reference|approx] [--repetitions R] "
    "[--json] [--prompt-seed S] [--count N]\n"
    "       ember-bench ttft-turns --model M [--threads N] [--kernels fast|reference|approx] [--repetitions R] [--json] "
    "[--dump-turns FILE] [--cached-only] [--own-answers]\n"
    "       ember-bench batch --model M [--threads N] [--kernels fast|reference|approx] [--repetitions R] [--json] "
    "[--concurrency 1,4,8,16] [--tokens 64]\n"
    "         staggered arrivals: [--stagger PIECES] [--concurrency CHATS] [--prompt-tokens 448] "
    "[--prompt-budgets 512,64]\n"
    "       ember-bench load --model M [--threads N] [--kernels fast|reference|approx] [--json] "
    "[--ctx 2560]\n";

int run(const std::vector<std::string>& raw) {
  if (raw.empty()) throw Error("missing figure");
  const std::string figure = raw[0];
  const cli::ParsedArgs args(std::vector<std::string>(raw.begin() + 1, raw.end()),
                             {"--model", "--threads", "--repetitions", "--prompt-seed", "--count",
                              "--dump-turns", "--concurrency", "--tokens", "--kernels", "--ctx",
                              "--stagger", "--prompt-tokens", "--prompt-budgets"},
                             {"--json", "--cached-only", "--own-answers"});
  const int threads = std::stoi(args.value("--threads").value_or("0"));
  const int repetitions = std::stoi(args.value("--repetitions").value_or("5"));
  const uint64_t promptSeed = std::stoull(args.value("--prompt-seed").value_or("1234"));
  const bool json = args.flag("--json");
  const std::string kernels = args.value("--kernels").value_or(EngineOptions{}.kernels);
  if (repetitions < 1) throw Error("--repetitions must be at least 1");

  bench::Reporter reporter(json);
  if (figure == "gpu") return bench::runGpuFigures({args.required("--model"), repetitions, promptSeed}, reporter);
  if (figure == "bw") {
    std::vector<double> values;
    for (int r = 0; r < repetitions; ++r) values.push_back(bench::probeReadBandwidth(threads));
    reporter.report("bw", "GB/s", values, {}, "");
    return 0;
  }
  if (figure == "ttft-turns") {
    bench::TurnsOptions turns;
    turns.modelPath = args.required("--model");
    turns.threads = threads;
    turns.kernels = kernels;
    turns.repetitions = repetitions;
    turns.seed = promptSeed;
    turns.dumpTurnsPath = args.value("--dump-turns");
    turns.cachedOnly = args.flag("--cached-only");
    turns.ownAnswers = args.flag("--own-answers");
    return bench::runTurnsFigure(turns, reporter, json);
  }
  if (figure == "load") {
    bench::LoadOptions load;
    load.modelPath = args.required("--model");
    load.threads = threads;
    load.kernels = kernels;
    load.seed = promptSeed;
    load.contextLength = std::stoi(args.value("--ctx").value_or("2560"));
    return bench::runLoadFigure(load, json);
  }
  if (figure == "batch") {
    bench::BatchOptions batch;
    batch.modelPath = args.required("--model");
    batch.threads = threads;
    batch.kernels = kernels;
    batch.repetitions = repetitions;
    batch.seed = promptSeed;
    batch.tokens = std::stoi(args.value("--tokens").value_or("64"));
    if (const auto stagger = args.value("--stagger")) {  // chats opened one at a time
      bench::StaggerOptions o;
      o.modelPath = batch.modelPath;
      o.threads = threads;
      o.kernels = kernels;
      o.repetitions = repetitions;
      o.seed = promptSeed;
      o.tokens = batch.tokens;
      o.startAfter = std::stoi(*stagger);
      if (const auto list = args.value("--concurrency"))
        o.chats = bench::parseConcurrencyList(*list).back();
      if (const auto p = args.value("--prompt-tokens")) o.promptTokens = std::stoi(*p);
      if (const auto list = args.value("--prompt-budgets"))
        o.budgets = bench::parseBudgetList(*list);
      return bench::runStaggerFigure(o, reporter, json);
    }
    if (const auto list = args.value("--concurrency"))
      batch.concurrency = bench::parseConcurrencyList(*list);
    return bench::runBatchFigure(batch, reporter, json);
  }
  EngineOptions options;
  options.modelPath = args.required("--model");
  options.threads = threads;
  options.kernels = kernels;
  options.contextLength = 2560;
  options.maxSequences = 1;
  const auto engine = std::make_unique<bench::BenchHost>(options);
  const std::string sha = bench::fileSha256(options.modelPath);
  if (figure == "tokens") {
    const size_t count = std::stoul(args.value("--count").value_or("512"));
    for (int32_t id : bench::syntheticPrompt(count, engine->vocabSize(), promptSeed))
      std::printf("%d ", id);
    std::printf("\n");
    return 0;
  }
  const bool all = figure == "all";
  if (!all && figure != "pp" && figure != "tg") throw Error("unknown figure '" + figure + "'");
  // One warm-up request so page faults and thread start-up are not measured.
  bench::measurePrompt(*engine, bench::syntheticPrompt(32, engine->vocabSize(), promptSeed));
  if (all || figure == "pp") {
    for (size_t n : {size_t(512), size_t(2048)}) {
      const auto prompt = bench::syntheticPrompt(n, engine->vocabSize(), promptSeed);
      std::vector<bench::Sample> samples;
      for (int r = 0; r < repetitions; ++r) samples.push_back(bench::measurePrompt(*engine, prompt));
      reporter.report("pp" + std::to_string(n), "tokens/s", bench::values(samples), samples, sha);
    }
  }
  if (all || figure == "tg") {
    const auto prompt = bench::syntheticPrompt(512, engine->vocabSize(), promptSeed);
    std::vector<bench::Sample> samples;
    for (int r = 0; r < repetitions; ++r)
      samples.push_back(bench::measureGeneration(*engine, prompt, 128));
    reporter.report("tg128", "tokens/s", bench::values(samples), samples, sha);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const std::vector<std::string> args(argv + 1, argv + argc);
  for (const auto& a : args) {
    if (a == "--version" || a == "-V") {
      std::puts(EMBER_VERSION_LINE("ember-bench"));
      return 0;
    }
    if (a == "--help" || a == "-h") {
      std::fputs(kUsage, stdout);
      return 0;
    }
  }
  try {
    return run(std::vector<std::string>(argv + 1, argv + argc));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ember-bench: error: %s\n%s", e.what(), kUsage);
    return 1;
  }
}
