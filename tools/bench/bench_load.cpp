#include "bench_load.h"

#include <chrono>
#include <cstdio>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench_figures.h"
#include "bench_report.h"
#include "ember/error.h"

namespace ember::bench {
namespace {

using Clock = std::chrono::steady_clock;

double msSince(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

// Reads the whole file twice in 8 MiB chunks and returns the second pass's GB/s: the rate at
// which this process can bring the file's bytes in (from the page cache once the first pass has
// read it, as it is for every load after the first).
double probeFileRead(const std::string& path, uint64_t& bytes) {
  std::vector<char> chunk(size_t(8) << 20);
  double gbps = 0;
  for (int pass = 0; pass < 2; ++pass) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw Error("cannot read " + path);
    bytes = 0;
    const auto t0 = Clock::now();
    while (in.read(chunk.data(), std::streamsize(chunk.size())) || in.gcount() > 0)
      bytes += uint64_t(in.gcount());
    gbps = double(bytes) / (msSince(t0) * 1e6);
  }
  return gbps;
}

// VmHWM of /proc/self/status: this process's peak resident set (getrusage's ru_maxrss would
// also carry the peak of the process image exec replaced).
uint64_t peakResidentBytes() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line))
    if (line.rfind("VmHWM:", 0) == 0) return std::stoull(line.substr(6)) * 1024;  // kB
  return 0;
}

}  // namespace

int runLoadFigure(const LoadOptions& options, bool json) {
  uint64_t fileBytes = 0;
  const double readGbps = probeFileRead(options.modelPath, fileBytes);
  const uint64_t rssBeforeLoad = peakResidentBytes();

  EngineOptions e;
  e.modelPath = options.modelPath;
  e.threads = options.threads;
  e.kernels = options.kernels;
  e.contextLength = options.contextLength;
  e.maxSequences = 1;
  const auto t0 = Clock::now();
  const auto engine = std::make_unique<BenchHost>(e);
  const double loadMs = msSince(t0);
  measurePrompt(*engine, syntheticPrompt(1, engine->vocabSize(), options.seed));
  const double firstTokenMs = msSince(t0);
  const uint64_t rssLoaded = peakResidentBytes();
  measurePrompt(*engine, syntheticPrompt(512, engine->vocabSize(), options.seed));
  const uint64_t rssPeak = peakResidentBytes();

  const KvCacheStats kv = engine->kvCacheStats();
  const double limitMs = double(fileBytes) / (readGbps * 1e6);
  const nlohmann::json row = {
      {"figure", "load"},
      {"unit", "ms"},
      {"load_ms", loadMs},
      {"first_token_ms", firstTokenMs},
      {"file_bytes", fileBytes},
      {"file_read_gbps", readGbps},
      {"limit_ms", limitMs},
      {"ratio", firstTokenMs / limitMs},
      {"rss_before_load_bytes", rssBeforeLoad},
      {"rss_after_first_token_bytes", rssLoaded},
      {"peak_rss_bytes", rssPeak},
      {"kv_pool_bytes", uint64_t(kv.totalBlocks) * kv.bytesPerBlock},
      {"context", engine->info().contextLength},
      {"backend", engine->info().backendName},
      {"commit", sourceCommit()}};
  if (json) {
    std::printf("%s\n", row.dump().c_str());
  } else {
    std::printf("load: %.0f ms to the first token possible (EngineHost::load %.0f ms), limit %.0f ms "
                "(%.0f MB at %.2f GB/s): %.1fx\n",
                firstTokenMs, loadMs, limitMs, double(fileBytes) / 1e6, readGbps,
                firstTokenMs / limitMs);
    std::printf("memory: peak resident %.1f MB after a 512-token prompt (KV pool %.1f MB, "
                "context %d)\n",
                double(rssPeak) / 1e6, double(row["kv_pool_bytes"].get<uint64_t>()) / 1e6,
                engine->info().contextLength);
  }
  return 0;
}

}  // namespace ember::bench
