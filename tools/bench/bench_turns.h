#pragma once
// The ttft-turns figure (BENCHMARKS.md): TTFT of the 8 turns of a replayed chat with the prefix
// cache on and off, against the ideal where only the new tokens of a turn are computed; with
// --own-answers also the chat lived, its answers the model's own.
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench_report.h"
#include "ember/engine.h"

namespace ember::bench {

// A deterministic synthetic chat: a system prompt, then per turn a user message of about
// `userTokens` tokens (English sentences from a fixed word list, a Korean sentence in some turns)
// and a fixed assistant answer of about `answerTokens` tokens. Every engine replays the same
// history, whatever it would have answered. `countTokens` measures a text in the model's tokens.
struct SyntheticChat {
  std::string system;
  std::vector<std::string> user;       // one per turn
  std::vector<std::string> assistant;  // one per turn (appended after the turn is measured)
};
using TokenCounter = std::function<size_t(const std::string&)>;
SyntheticChat makeSyntheticChat(int turns, int userTokens, int answerTokens, uint64_t seed,
                                const TokenCounter& countTokens);

// The messages that turn `turn` (0-based) submits: system, the earlier user/assistant pairs and
// this turn's user message.
nlohmann::ordered_json turnMessages(const SyntheticChat& chat, int turn);

// Length of the common prefix of two token sequences.
size_t commonPrefix(const std::vector<int32_t>& a, const std::vector<int32_t>& b);

// The chat the figure replays and every turn's prompt token ids exactly as the engine builds
// them from the messages (the model's chat template, then its tokenizer).
struct ReplayedChat {
  SyntheticChat chat;
  std::vector<std::vector<int32_t>> prompts;  // one per turn
};
ReplayedChat buildReplayedChat(const std::string& modelPath, int turns, uint64_t seed);
// {"model": ..., "turns": [{"turn": 1, "tokens": [...]}, ...]}; throws ember::Error on failure.
void writeTurnsJson(const std::string& path, const std::string& modelPath,
                    const ReplayedChat& replay);

struct TurnsOptions {
  std::string modelPath;
  int threads = 0;
  std::string kernels = EngineOptions{}.kernels;
  int repetitions = 5;
  uint64_t seed = 1234;
  std::optional<std::string> dumpTurnsPath;  // writes the turns' prompt token ids as JSON
  bool cachedOnly = false;  // only the cache-on arm (the turn-8/turn-1 ratio and its stages)
  // Adds the live arm: the chat with the model's own answers, sent back turn by turn.
  bool ownAnswers = false;
};

// Runs the figure and reports it (a table, or JSON lines). Returns the process exit code.
int runTurnsFigure(const TurnsOptions& options, Reporter& reporter, bool json);

}  // namespace ember::bench
