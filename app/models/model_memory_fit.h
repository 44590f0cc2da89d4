#pragma once
// "Will it fit" for a row of the model picker: ember::planMemory (the arithmetic ember-cli plan
// and the engine's load check use) for the current load settings against the memory free on
// the chosen compute device, as one line for people.
#include <QString>
#include <optional>

#include "ember/memory_plan.h"
#include "models/model_file_info.h"

namespace ember::app {

struct MemoryFitSettings {
  qint64 contextLength = 0;  // tokens per answer; 0: each model's own, at most the engine's default
  int sequences = 4;         // answers at once (EngineOptions::maxSequences)
  int stepTokens = 512;      // EngineOptions::stepTokenBudget (the workspace grows with it)
  std::optional<quint64> availableBytes;  // free memory; unknown: no line
  QString where;  // whose memory: "system RAM", "cuda:0 (NVIDIA H200)"
};

struct MemoryFit {
  bool known = false;  // false: no line (free memory unknown, or the file cannot be read)
  bool fits = false;
  MemoryPlan plan;  // when the plan could be made
  // "fits: needs 312.0 MiB of 21.4 GiB free in system RAM", "too big for cuda:0 (...): needs
  // 9.8 GiB (...) but 8.0 GiB is free; the largest context that fits is 5632 tokens", or why
  // there is no plan.
  QString line;
};

// The context a load with `settings` would get for `info` (as Engine::load chooses it).
qint64 plannedContext(const ModelFileInfo& info, const MemoryFitSettings& settings);
MemoryFit memoryFit(const ModelFileInfo& info, const MemoryFitSettings& settings);

}  // namespace ember::app
