#include "bench_figures.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <memory>
#include <thread>

#include "ember/error.h"
#include "ember/rng.h"

namespace ember::bench {
namespace {

GenerationRequest greedy(const std::vector<int32_t>& tokens, int32_t maxTokens) {
  GenerationRequest r;
  r.promptTokens = tokens;
  r.sampling.temperature = 0;
  r.sampling.maxTokens = maxTokens;
  r.ignoreEndOfGeneration = true;
  return r;
}

}  // namespace

Sample measurePrompt(BenchHost& engine, const std::vector<int32_t>& tokens) {
  const RequestStats s = engine.run(greedy(tokens, 1));
  return {s.prefillTokensPerSecond, s.ttftMs, 0, 0};
}

Sample measureGeneration(BenchHost& engine, const std::vector<int32_t>& prompt, int32_t generate) {
  const RequestStats s = engine.run(greedy(prompt, generate));
  return {s.decodeTokensPerSecond, s.ttftMs, percentile(s.interTokenMs, 50),
          percentile(s.interTokenMs, 95)};
}

double probeReadBandwidth(int threads, size_t bytes) {
  threads = std::max(1, threads);
  const size_t words = bytes / sizeof(uint64_t);
  std::unique_ptr<uint64_t[]> buffer(new uint64_t[words]);
  for (size_t i = 0; i < words; ++i) buffer[i] = i;  // touch every page before timing
  std::atomic<uint64_t> sink{0};
  auto pass = [&] {
    std::vector<std::thread> workers;
    for (int t = 0; t < threads; ++t) {
      workers.emplace_back([&, t] {
        const size_t begin = words * static_cast<size_t>(t) / static_cast<size_t>(threads);
        const size_t end = words * static_cast<size_t>(t + 1) / static_cast<size_t>(threads);
        uint64_t a = 0, b = 0, c = 0, d = 0;  // four independent sums keep loads in flight
        for (size_t i = begin; i + 4 <= end; i += 4) {
          a += buffer[i];
          b += buffer[i + 1];
          c += buffer[i + 2];
          d += buffer[i + 3];
        }
        sink += a + b + c + d;
      });
    }
    for (auto& w : workers) w.join();
  };
  pass();  // warm-up
  double best = 0;
  for (int rep = 0; rep < 3; ++rep) {
    const auto t0 = std::chrono::steady_clock::now();
    pass();
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    best = std::max(best, static_cast<double>(bytes) / s / 1e9);
  }
  return best;
}

std::vector<int32_t> syntheticPrompt(size_t count, size_t vocab, uint64_t seed, int32_t lowest) {
  if (vocab <= static_cast<size_t>(lowest)) lowest = 0;
  Xoshiro256StarStar rng(seed);
  std::vector<int32_t> ids(count);
  const uint64_t span = vocab > static_cast<size_t>(lowest) ? vocab - static_cast<size_t>(lowest) : vocab;
  for (auto& id : ids) id = static_cast<int32_t>(static_cast<uint64_t>(lowest) + rng.next() % span);
  return ids;
}

}  // namespace ember::bench
