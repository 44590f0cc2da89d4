#pragma once
// The staggered-arrival figure: chats opened one at a time while the earlier ones answer, as a
// user of several chats does. Each newcomer's prompt is computed next to the others' decoding;
// the figure is the gap between tokens of the running chats (p50, p95, max: a big prompt chunk
// in a decode step freezes every stream for that step) and the newcomers' time to first token,
// for each prompt budget while decoding (EngineOptions::promptBudgetWhileDecoding), side by side.
#include <cstdint>
#include <string>
#include <vector>

#include "bench_report.h"
#include "ember/engine.h"

namespace ember::bench {

struct StaggerOptions {
  std::string modelPath;
  int threads = 0;
  std::string kernels = EngineOptions{}.kernels;
  int repetitions = 5;
  int chats = 4;           // opened one after another
  int tokens = 64;         // generated per chat
  int promptTokens = 448;  // per chat, distinct prompts (no shared prefix)
  int startAfter = 8;      // a chat opens once the one before it has streamed this many pieces
  // Prompt budgets while decoding to compare; the first is the baseline of the ratios.
  std::vector<int> budgets = {512, EngineOptions{}.promptBudgetWhileDecoding};
  uint64_t seed = 1234;
};

// "512,64" -> {512, 64}: positive, in the order given. Throws ember::Error otherwise.
std::vector<int> parseBudgetList(const std::string& text);

// Runs the figure and reports it (figure lines, or JSON lines). Returns the exit code.
int runStaggerFigure(const StaggerOptions& options, Reporter& reporter, bool json);

}  // namespace ember::bench
