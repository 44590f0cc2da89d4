#pragma once
// The engine: load a model, add requests, call step() until they finish. A step schedules work
// for the running requests (prompt chunks and decode tokens), runs one forward pass over all of
// it, samples, and emits events. abort() takes effect between steps. Not thread-safe: one thread
// (the CLI's, or the app's inference worker) owns the engine.
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "ember/load_progress.h"
#include "ember/request.h"

namespace ember {

class Tokenizer;
class Backend;

struct EngineOptions {
  std::string modelPath;
  int threads = 0;             // 0: one per physical core
  int32_t contextLength = 0;   // tokens per sequence; 0: the model's, at most kDefaultContext
  int32_t blockSize = 16;      // tokens per KV block
  int32_t maxSequences = 4;    // requests running at once (the KV pool is sized for them)
  int32_t stepTokenBudget = 512;  // tokens computed per step (long prompts go in chunks)
  // Prompt tokens in a step that also decodes other requests (chunked prefill): each decoding
  // stream waits for the whole step, so this bounds their gap between tokens while a new chat's
  // prompt is computed. With nothing decoding a prompt takes the whole stepTokenBudget.
  int32_t promptBudgetWhileDecoding = 32;
  // Reuse the KV blocks of earlier prompts that start the same way (turns, branches, chats).
  bool prefixCaching = true;
  // KV pool budget in bytes; 0: room for maxSequences full contexts. A bigger pool keeps more
  // finished conversations cached; a smaller one preempts (recomputes) under pressure.
  int64_t kvCacheBytes = 0;
  // Host-RAM tier for cached KV blocks the pool has to reuse (they come back on the next turn
  // instead of being recomputed). -1: automatic (with the CUDA backend the smaller of 4 GiB and
  // a quarter of the RAM; none with the CPU backend, whose pool already is in RAM); 0: none.
  int64_t hostKvCacheBytes = -1;
  // Compute device: "auto" (CUDA when a device is present and the build has it, else CPU),
  // "cpu", or "cuda" (an error when there is none).
  std::string backend = "auto";
  // CPU kernels: "fast" (Q4_0/Q4_1/Q5_0/Q5_1/Q8_0 weights, and Q4_K on AVX-512 VNNI CPUs,
  // repacked at load for faster kernels that keep llama.cpp's sums in every layer, so the layers
  // compute "reference"'s bits and the logits stay within their last bits), "reference" (the
  // kernels without repacking), or "approx" (fast,
  // and Q5_K/Q6_K repacked too, and a prompt's attention on AMX bf16 tiles, else int8 with
  // AVX-512 VNNI: faster, logits equal to llama.cpp's only within a tolerance).
  std::string kernels = "fast";
  static constexpr int32_t kDefaultContext = 4096;
};

struct ModelInfo {
  std::string path;
  std::string architecture;
  std::string description;       // layers, dimensions, heads
  int32_t trainedContext = 0;    // <arch>.context_length
  int32_t contextLength = 0;     // what this engine uses
  std::string backendName;
  std::string chatTemplateName;  // "model" or a built-in's name
  std::string chatTemplateWarning;  // non-empty when a built-in template is used, and why
};

// The KV block pool and its prefix cache.
struct KvCacheStats {
  int32_t blockSize = 0;
  int32_t totalBlocks = 0;
  int32_t referencedBlocks = 0;  // held by running requests
  int32_t cachedBlocks = 0;      // full blocks a later prompt can reuse
  int64_t hitBlocks = 0;         // blocks reused so far
  int64_t evictedBlocks = 0;     // cached blocks given to new work so far
  int64_t spilledBlocks = 0;     // of those, copied to the host-RAM tier
  int64_t restoredBlocks = 0;    // brought back from it
  int32_t hostBlocks = 0;        // held in the host-RAM tier now
  size_t bytesPerBlock = 0;
};

// What a request's prompt takes, counted without queueing it (the app's context meter).
struct PromptTokenCount {
  int32_t tokens = 0;           // the whole request rendered and tokenized, nothing left out
  int32_t maxPromptTokens = 0;  // what the context leaves for the prompt (the rest: the answer)
  int32_t contextLength = 0;
  int32_t droppedTurns = 0;     // oldest messages addRequest would leave out to fit
  bool fits = true;             // false: too long even with every older turn left out
};

class Engine {
 public:
  // Loads the model; throws ember::Error with a clear message (bad file, unsupported
  // architecture or tensor type, context longer than the model's).
  static std::unique_ptr<Engine> load(const EngineOptions& options);
  // The same, with progress: the file's tensor data is read first (Stage::Reading), then the
  // backend prepares the weights (Stage::Preparing), each reported to `control` (nullptr: the
  // load above, which reads nothing ahead). Throws LoadCancelled, having freed what it built,
  // when control->cancel() was called.
  static std::unique_ptr<Engine> load(const EngineOptions& options, LoadControl* control);
  ~Engine();

  // Validates, renders and tokenizes the request and queues it. Throws ember::Error for bad
  // settings or an empty prompt, before anything is queued.
  RequestId addRequest(GenerationRequest request, EventSink sink);
  void abort(RequestId id);  // finishes it as cancelled at the next step; unknown ids ignored
  // Renders and tokenizes the request as addRequest would, and says how it fits the context.
  // Throws ember::Error for what addRequest refuses before fitting (no messages, bad settings).
  PromptTokenCount countPromptTokens(const GenerationRequest& request) const;
  void step();
  bool hasWork() const;
  int32_t runningRequests() const;  // being computed (prompt or decode)
  int32_t waitingRequests() const;  // queued for a free slot (preempted ones included)

  // Logits for every position of a token sequence (ember-cli logits, fidelity checks):
  // (ids.size(), vocab) row-major. Uses the KV pool, so call it when no request is running.
  std::vector<float> scoreTokens(std::span<const int32_t> ids);

  int32_t freeKvBlocks() const;  // blocks not held by any request (for checks after aborts)
  KvCacheStats kvCacheStats() const;
  const ModelInfo& info() const;
  const Tokenizer& tokenizer() const;
  size_t vocabSize() const;

 private:
  struct Impl;
  explicit Engine(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace ember
