#include "bench_cuda.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <memory>

#include "bench_figures.h"
#include "ember/error.h"
#include "ember/engine.h"
#include "ember/model_file.h"

#ifdef EMBER_WITH_CUDA
#include <dlfcn.h>

#include "ember/devices.h"
#endif

namespace ember::bench {

#ifndef EMBER_WITH_CUDA

int runGpuFigures(const GpuBenchOptions&, Reporter&) {
  throw Error("ember-bench gpu: this build has no CUDA backend (nvcc was not found when it was "
              "configured; configure with EMBER_CUDA=ON on a machine with the CUDA toolkit)");
}

#else

namespace {

// What the rooflines need to know about the model.
struct ModelFacts {
  uint64_t decodeReadBytes = 0;  // weights read per decoded token: all but the embedding table
                                 // (one row is read), unless the output is tied to it
  uint64_t layerParameters = 0;   // elements of the blk.* matrices (every prompt token)
  uint64_t outputParameters = 0;  // elements of the output matrix (only tokens given logits)
  uint64_t kvBytesPerToken = 0;
  uint64_t fileBytes = 0;
};

ModelFacts readModelFacts(const std::string& path) {
  const ModelFile file = inspectModelFile(path);
  if (!file.configured()) throw Error("ember-bench gpu: " + file.configError);
  ModelFacts facts;
  const bool tied = file.findTensor("output.weight") == nullptr;
  for (const ModelTensor& t : file.tensors) {
    const bool embedding = t.name == "token_embd.weight";
    if (!embedding || tied) facts.decodeReadBytes += t.bytes;
    if (t.shape.size() != 2) continue;
    if (t.name.rfind("blk.", 0) == 0) facts.layerParameters += t.elements;
    if (t.name == "output.weight" || (embedding && tied)) facts.outputParameters += t.elements;
  }
  facts.kvBytesPerToken = file.kvBytesPerToken;
  facts.fileBytes = file.fileBytes;
  return facts;
}

// sha256 of files up to 1 GiB; bigger (synthetic 8B) files would take longer than the figures.
std::string modelChecksum(const std::string& path, uint64_t bytes) {
  return bytes <= (uint64_t(1) << 30) ? fileSha256(path) : "not computed (file over 1 GiB)";
}

GenerationRequest greedyRequest(std::vector<int32_t> prompt, int32_t generate) {
  GenerationRequest r;
  r.promptTokens = std::move(prompt);
  r.sampling.temperature = 0;
  r.sampling.maxTokens = generate;
  r.ignoreEndOfGeneration = true;
  return r;
}

// C requests added at once and stepped to the end: generated tokens after each request's first,
// summed, over the span from the earliest first token to the latest last one (tokens/s).
double aggregateDecode(BenchHost& engine, int concurrency, int promptTokens, int generate,
                       uint64_t seed) {
  const size_t count = static_cast<size_t>(concurrency);
  std::vector<Clock::time_point> first(count), last(count);
  std::vector<GenerationRequest> requests;
  for (int i = 0; i < concurrency; ++i) {
    auto prompt = syntheticPrompt(size_t(promptTokens), engine.vocabSize(), seed + uint64_t(i));
    requests.push_back(greedyRequest(std::move(prompt), generate));
  }
  // Added together, so they enter the engine's same step; event times are the engine's.
  const std::vector<RequestStats> stats =
      engine.runTogether(std::move(requests), [&](size_t k, const RequestEvent& e) {
        if (e.kind != RequestEvent::Kind::Text) return;
        if (first[k] == Clock::time_point{}) first[k] = e.time;
        last[k] = e.time;
      });
  std::vector<int32_t> generated;
  for (const RequestStats& s : stats) {
    if (s.finishReason == FinishReason::Error) throw Error("batched decode failed: " + s.error);
    generated.push_back(s.generatedTokens);
  }
  const auto begin = *std::min_element(first.begin(), first.end());
  const auto end = *std::max_element(last.begin(), last.end());
  double tokens = 0;
  for (int32_t g : generated) tokens += std::max(0, g - 1);
  const double seconds = std::chrono::duration<double>(end - begin).count();
  return seconds > 0 ? tokens / seconds : 0;
}

std::vector<double> mapped(const std::vector<double>& v, const std::function<double(double)>& f) {
  std::vector<double> out;
  for (double x : v) out.push_back(f(x));
  return out;
}

// The probes' module: $EMBER_BENCH_CUDA_PROBES, else <executable's folder>/../lib/ember/.
// Opened only here, so that ember-bench's other figures run without the CUDA libraries.
const GpuProbes& gpuProbes() {
  std::string path;
  if (const char* env = std::getenv("EMBER_BENCH_CUDA_PROBES"); env && *env) {
    path = env;
  } else {
    path = std::filesystem::read_symlink("/proc/self/exe").parent_path().string() +
           "/../lib/ember/libember_bench_cuda.so";
  }
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) throw Error(std::string("ember-bench gpu: cannot load its probes: ") + dlerror());
  using Entry = const GpuProbes* (*)();
  const auto entry = reinterpret_cast<Entry>(dlsym(handle, "ember_bench_gpu_probes"));
  if (!entry) throw Error("ember-bench gpu: " + path + " has no ember_bench_gpu_probes");
  return *entry();
}

std::unique_ptr<BenchHost> loadCudaEngine(EngineOptions options) {
  options.backend = "cuda";
  auto engine = std::make_unique<BenchHost>(options);
  if (engine->info().backendName.rfind("cuda", 0) != 0)
    throw Error("ember-bench gpu: the engine runs on '" + engine->info().backendName +
                "', not on CUDA");
  return engine;
}

}  // namespace

int runGpuFigures(const GpuBenchOptions& o, Reporter& reporter) {
  if (const std::string reason = cudaUnavailableReason(); !reason.empty())
    throw Error("ember-bench gpu: no CUDA device is usable: " + reason);
  const GpuProbes& probes = gpuProbes();
  std::fprintf(stderr, "ember-bench gpu: %s\n", probes.deviceDescription().c_str());
  const ModelFacts facts = readModelFacts(o.modelPath);
  const std::string sha = modelChecksum(o.modelPath, facts.fileBytes);

  // The limits, measured in this run.
  std::vector<double> copy, bf16, fp16;
  for (int r = 0; r < o.repetitions; ++r) {
    copy.push_back(probes.copyBandwidth(size_t(1) << 30));
    bf16.push_back(probes.gemmTflops(true, 4096));
    fp16.push_back(probes.gemmTflops(false, 4096));
  }
  reporter.report("gpu_copy_bw", "GB/s", copy, {}, "");
  reporter.report("gpu_gemm_bf16", "TFLOP/s", bf16, {}, "");
  reporter.report("gpu_gemm_fp16", "TFLOP/s", fp16, {}, "");
  const double bandwidth = percentile(copy, 50) * 1e9;     // bytes/s
  const double matrixRate = percentile(bf16, 50) * 1e12;   // FLOP/s

  {
    EngineOptions options;
    options.modelPath = o.modelPath;
    options.contextLength = 2560;
    options.maxSequences = 1;
    options.stepTokenBudget = 2048;  // a 2048-token prompt in one chunk
    const auto engine = loadCudaEngine(options);
    const size_t vocab = engine->vocabSize();
    measurePrompt(*engine, syntheticPrompt(32, vocab, o.promptSeed));  // warm-up

    // Batch-1 decode: 128 tokens after a 512-token prompt; on average 576 tokens of KV are read.
    const auto prompt512 = syntheticPrompt(512, vocab, o.promptSeed);
    std::vector<Sample> samples;
    for (int r = 0; r < o.repetitions; ++r)
      samples.push_back(measureGeneration(*engine, prompt512, 128));
    const std::vector<double> tg = values(samples);
    const double bytesPerToken = double(facts.decodeReadBytes) + double(facts.kvBytesPerToken) * 576;
    const double roofline = bandwidth / bytesPerToken;
    reporter.report("gpu_tg128", "tokens/s", tg, samples, sha);
    reporter.report("gpu_tg128_roofline", "tokens/s", {roofline}, {}, sha);
    reporter.report("gpu_tg128_vs_roofline", "ratio", mapped(tg, [&](double v) { return v / roofline; }),
                    {}, sha);
    reporter.report("gpu_tg128_overhead", "us/token",
                    mapped(tg, [&](double v) { return (1.0 / v - bytesPerToken / bandwidth) * 1e6; }),
                    {}, sha);

    for (size_t n : {size_t(512), size_t(2048)}) {
      const auto prompt = syntheticPrompt(n, vocab, o.promptSeed);
      std::vector<Sample> pp;
      for (int r = 0; r < o.repetitions; ++r) pp.push_back(measurePrompt(*engine, prompt));
      const std::vector<double> rate = values(pp);
      // Only the last prompt token goes through the output matrix: count the layers' FLOPs.
      const auto tflops = [&](double v) { return 2.0 * double(facts.layerParameters) * v / 1e12; };
      const std::string name = "gpu_pp" + std::to_string(n);
      reporter.report(name, "tokens/s", rate, pp, sha);
      reporter.report(name + "_tflops", "TFLOP/s", mapped(rate, tflops), {}, sha);
      reporter.report(name + "_vs_bf16", "ratio",
                      mapped(rate, [&](double v) { return tflops(v) * 1e12 / matrixRate; }), {}, sha);
    }
  }

  // Aggregate decode: C sequences with 128-token prompts, 64 tokens each, prefilled in one step.
  constexpr int kPrompt = 128, kGenerate = 64;
  EngineOptions options;
  options.modelPath = o.modelPath;
  options.contextLength = 256;
  options.maxSequences = 64;
  options.stepTokenBudget = 64 * kPrompt;
  options.prefixCaching = false;
  const auto engine = loadCudaEngine(options);
  aggregateDecode(*engine, 8, kPrompt, 8, o.promptSeed);  // warm-up
  for (int c : {8, 16, 32, 64}) {
    std::vector<double> rate;
    for (int r = 0; r < o.repetitions; ++r)
      rate.push_back(aggregateDecode(*engine, c, kPrompt, kGenerate, o.promptSeed + 1000 * uint64_t(r)));
    // One step reads the weights once and each sequence's KV (on average 160 tokens), and
    // computes 2 x params FLOPs per sequence: whichever takes longer bounds the step.
    const double stepBytes = double(facts.decodeReadBytes) +
                             double(c) * double(facts.kvBytesPerToken) * (kPrompt + kGenerate / 2);
    const double stepSeconds = std::max(stepBytes / bandwidth,
                                        2.0 * double(facts.layerParameters + facts.outputParameters) *
                                            c / matrixRate);
    const double roofline = double(c) / stepSeconds;
    const std::string name = "gpu_batch" + std::to_string(c);
    reporter.report(name, "tokens/s", rate, {}, sha);
    reporter.report(name + "_roofline", "tokens/s", {roofline}, {}, sha);
    reporter.report(name + "_vs_roofline", "ratio", mapped(rate, [&](double v) { return v / roofline; }),
                    {}, sha);
  }
  return 0;
}

#endif  // EMBER_WITH_CUDA

}  // namespace ember::bench
