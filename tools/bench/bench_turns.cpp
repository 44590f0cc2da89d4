#include "bench_turns.h"

#include <algorithm>
#include <cstdio>
#include <memory>

#include "bench_batch.h"
#include "bench_figures.h"
#include "ember/error.h"
#include "bench_host.h"

namespace ember::bench {
namespace {

constexpr int kTurns = 8;

// One turn as one arm saw it.
struct TurnStats {
  double ttftMs = 0;
  int32_t promptTokens = 0;
  int32_t cachedTokens = 0;
  // The engine's own stage times (RequestStats): template render + tokenization, queue (to the
  // first step that ran it), prefill (first chunk start to last chunk done).
  double tokenizeMs = 0, queueMs = 0, prefillMs = 0;
};

// Per arm and turn, one value per repetition.
struct Series {
  std::vector<std::vector<double>> prompt = std::vector<std::vector<double>>(kTurns);
  std::vector<std::vector<double>> ttft = std::vector<std::vector<double>>(kTurns);
  std::vector<std::vector<double>> cached = std::vector<std::vector<double>>(kTurns);
  std::vector<std::vector<double>> tokenize = std::vector<std::vector<double>>(kTurns);
  std::vector<std::vector<double>> queue = std::vector<std::vector<double>>(kTurns);
  std::vector<std::vector<double>> prefill = std::vector<std::vector<double>>(kTurns);
};

GenerationRequest firstTokenOnly() {
  GenerationRequest r;
  r.sampling.temperature = 0;
  r.sampling.maxTokens = 1;
  r.ignoreEndOfGeneration = true;
  return r;
}

RequestStats runToEnd(BenchHost& engine, GenerationRequest request) {
  return engine.run(std::move(request), "ttft-turns request");
}

// TTFT as the engine measures it (submission, template rendering included, to the first text
// piece). A first token without text (a control token) leaves ttftMs at 0: the request's whole
// time, which ends at that token, is then the same moment.
double firstTokenMs(const RequestStats& s) { return s.ttftMs > 0 ? s.ttftMs : s.totalMs; }

TurnStats turnStats(const RequestStats& s) {
  return {firstTokenMs(s), s.promptTokens, s.cachedPromptTokens, s.tokenizeMs, s.queueWaitMs,
          s.prefillMs};
}

std::unique_ptr<BenchHost> loadEngine(const TurnsOptions& o, bool prefixCaching,
                                      size_t longestPrompt) {
  EngineOptions e;
  e.modelPath = o.modelPath;
  e.threads = o.threads;
  e.kernels = o.kernels;
  e.maxSequences = 1;
  e.prefixCaching = prefixCaching;
  auto engine = std::make_unique<BenchHost>(e);
  if (longestPrompt + 1 > static_cast<size_t>(engine->info().contextLength))
    throw Error("the replayed chat needs " + std::to_string(longestPrompt + 1) +
                " tokens of context; the engine has " +
                std::to_string(engine->info().contextLength));
  // Warm-up (page faults, thread start) on random ids that share no prefix with the chat.
  GenerationRequest warm = firstTokenOnly();
  warm.promptTokens = syntheticPrompt(32, engine->vocabSize(), 99);
  runToEnd(*engine, std::move(warm));
  return engine;
}

std::vector<TurnStats> replayChat(BenchHost& engine, const ReplayedChat& replay) {
  std::vector<TurnStats> turns;
  for (int t = 0; t < kTurns; ++t) {
    GenerationRequest r = firstTokenOnly();
    r.messages = turnMessages(replay.chat, t);
    const RequestStats s = runToEnd(engine, std::move(r));
    const size_t expected = replay.prompts[static_cast<size_t>(t)].size();
    if (static_cast<size_t>(s.promptTokens) != expected || s.droppedTurns != 0)
      throw Error("turn " + std::to_string(t + 1) + ": the engine built " +
                  std::to_string(s.promptTokens) + " prompt tokens, the replay expected " +
                  std::to_string(expected));
    turns.push_back(turnStats(s));
  }
  return turns;
}

// The chat lived instead of replayed: each turn's answer is the model's own (greedy, up to
// kOwnAnswerTokens, ended by its end-of-turn token) and the next turn sends it back, as the app
// does. A cache then holds each answer from its decoding, and a turn computes its user message
// (and the answer's last, partial block) only. The TTFT is that of the answer's first token.
constexpr int kOwnAnswerTokens = 64;

std::vector<TurnStats> liveChat(BenchHost& engine, const SyntheticChat& chat) {
  SyntheticChat live = chat;  // the user messages kept, each answer replaced by the model's
  std::vector<TurnStats> turns;
  for (int t = 0; t < kTurns; ++t) {
    GenerationRequest r;
    r.sampling.temperature = 0;
    r.sampling.maxTokens = kOwnAnswerTokens;
    r.messages = turnMessages(live, t);
    std::string answer;  // written on the engine thread, read once runTogether has returned
    const RequestStats s =
        engine.runTogether({std::move(r)}, [&answer](size_t, const RequestEvent& e) {
          if (e.kind == RequestEvent::Kind::Text && !e.reasoning) answer += e.text;
        })[0];
    if (s.finishReason == FinishReason::Error || s.droppedTurns != 0)
      throw Error("live chat turn " + std::to_string(t + 1) + " failed: " +
                  (s.error.empty() ? "turns were dropped" : s.error));
    live.assistant[static_cast<size_t>(t)] = answer;
    turns.push_back(turnStats(s));
  }
  return turns;
}

// The ideal of turn k, measured: a cold request whose prompt is only the tokens of turn k that
// a perfect prefix cache would compute (those after the longest prefix shared with turn k-1's
// prompt; all of turn 1). It computes as many positions as a perfect cache, but attends over
// none of the history and renders no conversation, so it is a slight lower bound on any cache.
// (Scaling the cold TTFT by new/prompt tokens was the alternative; it would hide fixed costs.)
std::vector<double> idealTurns(BenchHost& coldEngine, const std::vector<size_t>& newTokens,
                               const ReplayedChat& replay) {
  std::vector<double> ms;
  for (int t = 0; t < kTurns; ++t) {
    const auto& prompt = replay.prompts[static_cast<size_t>(t)];
    const auto fresh = static_cast<ptrdiff_t>(newTokens[static_cast<size_t>(t)]);
    GenerationRequest r = firstTokenOnly();
    r.promptTokens = std::vector<int32_t>(prompt.end() - fresh, prompt.end());
    ms.push_back(firstTokenMs(runToEnd(coldEngine, std::move(r))));
  }
  return ms;
}

void record(Series& series, const std::vector<TurnStats>& turns) {
  for (int t = 0; t < kTurns; ++t) {
    series.ttft[static_cast<size_t>(t)].push_back(turns[static_cast<size_t>(t)].ttftMs);
    series.prompt[static_cast<size_t>(t)].push_back(turns[static_cast<size_t>(t)].promptTokens);
    series.cached[static_cast<size_t>(t)].push_back(turns[static_cast<size_t>(t)].cachedTokens);
    series.tokenize[static_cast<size_t>(t)].push_back(turns[static_cast<size_t>(t)].tokenizeMs);
    series.queue[static_cast<size_t>(t)].push_back(turns[static_cast<size_t>(t)].queueMs);
    series.prefill[static_cast<size_t>(t)].push_back(turns[static_cast<size_t>(t)].prefillMs);
  }
}

double median(const std::vector<double>& v) { return percentile(v, 50); }

void printTable(const ReplayedChat& replay, const std::vector<size_t>& newTokens, const Series& on,
                const Series& off, const std::vector<std::vector<double>>& ideal) {
  std::printf(
      "ttft-turns: an %d-turn chat replayed turn by turn (1 token generated per turn), median of\n"
      "the repetitions. on = prefix cache on, off = off, ideal = a cold request on only the new\n"
      "tokens of the turn (those after the prefix it shares with the previous turn's prompt).\n",
      kTurns);
  std::printf("%4s %7s %5s %9s %10s %10s %10s %9s %8s\n", "turn", "prompt", "new", "cached(on)",
              "on ms", "off ms", "ideal ms", "on/ideal", "off/on");
  for (size_t t = 0; t < kTurns; ++t) {
    const double o = median(on.ttft[t]), f = median(off.ttft[t]), i = median(ideal[t]);
    std::printf("%4zu %7zu %5zu %9.0f %10.1f %10.1f %10.1f %8.2fx %7.2fx\n", t + 1,
                replay.prompts[t].size(), newTokens[t], median(on.cached[t]), o, f, i,
                i > 0 ? o / i : 0, o > 0 ? f / o : 0);
  }
  // Where a cached turn's first-token time goes, by the engine's stage timings (medians, so the
  // columns need not add up exactly); "rest" is the first token's sampling, detokenization and
  // hand-off.
  std::printf("stages of the cached arm (ms): render+tokenize, queue, prefill, rest\n");
  std::printf("%4s %10s %8s %9s %7s\n", "turn", "tokenize", "queue", "prefill", "rest");
  for (size_t t = 0; t < kTurns; ++t) {
    const double k = median(on.tokenize[t]), q = median(on.queue[t]), p = median(on.prefill[t]);
    std::printf("%4zu %10.2f %8.2f %9.1f %7.2f\n", t + 1, k, q, p, median(on.ttft[t]) - k - q - p);
  }
  std::fflush(stdout);
}

void printLiveTable(const Series& own) {
  std::printf(
      "live chat: the same user messages, each answer the model's own (greedy, at most %d\n"
      "tokens), sent back the next turn; prefix cache on. new = prompt - cached.\n",
      kOwnAnswerTokens);
  std::printf("%4s %7s %7s %5s %10s\n", "turn", "prompt", "cached", "new", "ttft ms");
  for (size_t t = 0; t < kTurns; ++t) {
    const double prompt = median(own.prompt[t]), cached = median(own.cached[t]);
    std::printf("%4zu %7.0f %7.0f %5.0f %10.1f\n", t + 1, prompt, cached, prompt - cached,
                median(own.ttft[t]));
  }
  std::fflush(stdout);
}

}  // namespace

int runTurnsFigure(const TurnsOptions& options, Reporter& reporter, bool json) {
  const ReplayedChat replay = buildReplayedChat(options.modelPath, kTurns, options.seed);
  if (options.dumpTurnsPath) writeTurnsJson(*options.dumpTurnsPath, options.modelPath, replay);
  std::vector<size_t> newTokens;
  for (size_t t = 0; t < kTurns; ++t)
    newTokens.push_back(std::max<size_t>(
        1, replay.prompts[t].size() -
               (t == 0 ? 0 : commonPrefix(replay.prompts[t], replay.prompts[t - 1]))));
  const size_t longest = replay.prompts.back().size();

  Series on, off, own;
  std::vector<std::vector<double>> ideal(kTurns);
  // Arms interleaved per repetition, each on a fresh engine so that a cache never holds the
  // previous repetition's chat; on goes first in even repetitions, off (then ideal) in odd ones,
  // so neither arm always follows the other.
  for (int rep = 0; rep < options.repetitions; ++rep) {
    const auto runOn = [&] { record(on, replayChat(*loadEngine(options, true, longest), replay)); };
    if (rep % 2 == 0 || options.cachedOnly) runOn();
    if (!options.cachedOnly) {
      const auto cold = loadEngine(options, false, longest);
      record(off, replayChat(*cold, replay));
      const auto idealMs = idealTurns(*cold, newTokens, replay);
      for (size_t t = 0; t < kTurns; ++t) ideal[t].push_back(idealMs[t]);
    }
    if (rep % 2 == 1 && !options.cachedOnly) runOn();
    // Its prompts hold the model's answers instead of the replay's (about as long): room for
    // every answer at its longest on top of the replay's last prompt.
    if (options.ownAnswers)
      record(own, liveChat(*loadEngine(options, true, longest + kTurns * kOwnAnswerTokens),
                           replay.chat));
  }

  if (!json) printTable(replay, newTokens, on, off, ideal);
  if (!json && options.ownAnswers) printLiveTable(own);
  const std::string sha = fileSha256(options.modelPath);
  for (size_t t = 0; t < kTurns; ++t) {
    const std::string turn = "ttft-turn" + std::to_string(t + 1);
    reporter.report(turn + "-cached", "ms", on.ttft[t], {}, sha);
    if (!options.cachedOnly) {
      reporter.report(turn + "-cold", "ms", off.ttft[t], {}, sha);
      reporter.report(turn + "-ideal", "ms", ideal[t], {}, sha);
    }
    if (json) {
      reporter.report("cached-tokens-turn" + std::to_string(t + 1), "tokens", on.cached[t], {},
                      sha);
      reporter.report("prompt-tokens-turn" + std::to_string(t + 1), "tokens",
                      {static_cast<double>(replay.prompts[t].size())}, {}, sha);
    }
  }
  const size_t last = kTurns - 1;
  // The goal: turn 8 within 1.3x of turn 1 with the cache on.
  auto ratio = [&](const std::string& name, const std::vector<double>& num,
                   const std::vector<double>& den) {
    reporter.report(name, "x", pairedRatios(num, den), {}, sha);
  };
  ratio("ttft-turn8-over-turn1-cached", on.ttft[last], on.ttft[0]);
  if (options.ownAnswers) {
    for (size_t t = 0; t < kTurns; ++t) {
      const std::string turn = std::to_string(t + 1);
      reporter.report("ttft-turn" + turn + "-own-answers", "ms", own.ttft[t], {}, sha);
      if (json)
        reporter.report("cached-tokens-turn" + turn + "-own-answers", "tokens", own.cached[t], {},
                        sha);
    }
    ratio("ttft-turn8-over-turn1-own-answers", own.ttft[last], own.ttft[0]);
  }
  if (options.cachedOnly) return 0;
  ratio("ttft-turn8-over-turn1-cold", off.ttft[last], off.ttft[0]);
  ratio("ttft-turn8-cached-over-ideal", on.ttft[last], ideal[last]);
  ratio("ttft-turn8-cold-over-cached", off.ttft[last], on.ttft[last]);
  return 0;
}

}  // namespace ember::bench
