#pragma once
// The figures ember-bench measures. Each measurement is one
// repetition; the caller interleaves and repeats them.
#include <cstdint>
#include <string>
#include <vector>

#include "bench_host.h"

namespace ember::bench {

struct Sample {
  double value = 0;       // the figure's main number in its unit
  double ttftMs = 0;
  double itlP50Ms = 0;
  double itlP95Ms = 0;
};

// Prompt processing: tokens/s for a prompt of `tokens.size()` tokens (one generated token).
Sample measurePrompt(BenchHost& engine, const std::vector<int32_t>& tokens);
// Text generation: decode tokens/s for `generate` tokens after the prompt is in the cache.
Sample measureGeneration(BenchHost& engine, const std::vector<int32_t>& prompt, int32_t generate);
// Streaming read bandwidth over a buffer much larger than the last-level cache, GB/s.
double probeReadBandwidth(int threads, size_t bytes = size_t(1) << 30);

// Deterministic prompt tokens: ids drawn with a fixed seed from [lowest, vocab), like
// llama-bench's random prompts (the model's first ids are often control tokens).
std::vector<int32_t> syntheticPrompt(size_t count, size_t vocab, uint64_t seed,
                                     int32_t lowest = 1000);

}  // namespace ember::bench
