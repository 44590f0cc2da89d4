#include "ember/engine.h"

#include <algorithm>
#include <climits>
#include <deque>
#include <optional>
#include <string>
#include <unordered_map>

#include <unistd.h>

#include "backend/backend_factory.h"
#include "chat/template_resolver.h"
#include "ember/error.h"
#include "gguf/gguf_file.h"
#include "model/model_config.h"
#include "runtime/engine/host_kv_spill.h"
#include "runtime/engine/load_reporter.h"
#include "runtime/engine/memory_check.h"
#include "runtime/engine/model_runner.h"
#include "runtime/engine/prompt_builder.h"
#include "runtime/engine/request_lifecycle.h"
#include "runtime/engine/scheduler.h"
#include "runtime/engine/sequence_blocks.h"
#include "runtime/sampling/logprobs.h"

namespace ember {

namespace {

std::string modelFileLostMessage(const std::string& path) {
  return "the model file " + path + " was cut short or rewritten while in use (a download " +
         "over it?); load the model again";
}

// The host-RAM tier's budget for an EngineOptions::hostKvCacheBytes setting.
int64_t hostKvBudget(int64_t setting, const std::string& backendName) {
  if (setting >= 0) return setting;
  if (!backendName.starts_with("cuda")) return 0;
  const int64_t ram = static_cast<int64_t>(sysconf(_SC_PHYS_PAGES)) * sysconf(_SC_PAGESIZE);
  return std::min<int64_t>(int64_t(4) << 30, ram / 4);
}

}  // namespace

struct Engine::Impl {
  EngineOptions options;
  std::unique_ptr<gguf::GgufFile> file;
  std::unique_ptr<Tokenizer> tokenizer;
  std::optional<chat::ResolvedTemplate> chat;  // set at load (it has no empty state)
  std::unique_ptr<Backend> backend;
  std::unique_ptr<BlockManager> blocks;
  std::unique_ptr<HostKvSpill> spill;  // null: no host-RAM tier
  std::unique_ptr<ModelRunner> runner;
  std::unique_ptr<Scheduler> scheduler;
  ModelInfo info;

  RequestId nextId = 1;
  std::unordered_map<RequestId, std::unique_ptr<Sequence>> sequences;
  std::deque<Sequence*> waiting;
  std::vector<Sequence*> running;

  void finish(Sequence& s, FinishReason reason, const std::string& error = {});
  void applyAborts();
  void advance(Sequence& s, int32_t tokenCount, std::span<const float> logits);
  TokenLogprob describeLogprobs(std::span<const float> logits, TokenId token, int32_t topN) const;
};

// The sampled token's log-probability and its alternatives, with their bytes.
TokenLogprob Engine::Impl::describeLogprobs(std::span<const float> logits, TokenId token,
                                            int32_t topN) const {
  const sampling::PositionLogprobs at = sampling::logprobsAt(logits, token, topN);
  TokenLogprob out;
  out.token = token;
  out.text = tokenizer->tokenBytes(token, true);
  out.logprob = at.chosen;
  out.top.reserve(at.top.size());
  for (const sampling::RankedLogprob& r : at.top)
    out.top.push_back({r.id, tokenizer->tokenBytes(r.id, true), r.logprob});
  return out;
}

Engine::Engine(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Engine::~Engine() = default;

std::unique_ptr<Engine> Engine::load(const EngineOptions& options) {
  return load(options, nullptr);
}

std::unique_ptr<Engine> Engine::load(const EngineOptions& options, LoadControl* control) {
  LoadReporter progress(control);
  auto d = std::make_unique<Impl>();
  d->options = options;
  d->file = gguf::GgufFile::open(options.modelPath);
  const model::ModelConfig config = model::readModelConfig(*d->file);
  // Read ahead before the tokenizer is built (seconds for a 262k vocabulary): the bar moves
  // from the start, and an unsupported architecture is refused before anything is read.
  if (progress.active()) {
    const uint64_t dataOffset = std::min(d->file->dataOffset(), d->file->fileSize());
    readTensorData(options.modelPath, dataOffset, d->file->fileSize() - dataOffset, progress);
  }
  d->tokenizer = Tokenizer::fromGguf(*d->file);
  d->chat.emplace(chat::resolveChatTemplate(*d->file));
  progress.checkCancelled();
  std::string autoFallback;
  d->backend = makeBackend(*d->file, options.backend, options.threads, &autoFallback,
                           options.kernels, progress.prepareProgress());
  progress.checkCancelled();

  int32_t context = options.contextLength;
  if (context < 0) throw Error("context length must be positive");
  if (context == 0) context = std::min(config.contextLength, EngineOptions::kDefaultContext);
  if (context > config.contextLength)
    throw Error("context length " + std::to_string(context) + " is larger than the model's " +
                std::to_string(config.contextLength));
  if (options.blockSize < 1 || options.maxSequences < 1 || options.stepTokenBudget < 1 ||
      options.promptBudgetWhileDecoding < 1)
    throw Error("block size, sequences, step budget and prompt budget while decoding must be at "
                "least 1");
  d->options.contextLength = context;

  const int32_t blocksPerSequence = (context + options.blockSize - 1) / options.blockSize;
  KvCacheShape shape;
  shape.blockSize = options.blockSize;
  shape.blockCount = blocksPerSequence * options.maxSequences;
  shape.contextLength = context;
  if (options.kvCacheBytes < 0) throw Error("the KV cache budget cannot be negative");
  if (options.kvCacheBytes > 0) {
    const auto perBlock = static_cast<int64_t>(d->backend->kvBytesPerBlock(options.blockSize));
    const int64_t blocks = options.kvCacheBytes / perBlock;
    if (blocks < blocksPerSequence)
      throw Error("a KV cache of " + std::to_string(options.kvCacheBytes) +
                  " bytes holds " + std::to_string(blocks * options.blockSize) +
                  " tokens, less than one context of " + std::to_string(context) + " (" +
                  std::to_string(blocksPerSequence * perBlock) + " bytes)");
    shape.blockCount = static_cast<int32_t>(std::min<int64_t>(blocks, INT32_MAX / 2));
  }
  requireKvPoolFits(*d->backend, config,
                    {shape, d->backend->kvBytesPerBlock(shape.blockSize), context,
                     options.maxSequences, options.stepTokenBudget});
  d->backend->allocateKvCache(shape);
  d->blocks = std::make_unique<BlockManager>(shape.blockCount, options.blockSize,
                                             options.prefixCaching);
  const int64_t hostBytes = hostKvBudget(options.hostKvCacheBytes, d->backend->name());
  if (options.prefixCaching && hostBytes > 0) {
    d->spill = std::make_unique<HostKvSpill>(*d->backend, hostBytes);
    d->blocks->setSpill(d->spill.get());
  }
  d->runner = std::make_unique<ModelRunner>(*d->backend);
  d->scheduler = std::make_unique<Scheduler>(
      SchedulerLimits{options.maxSequences, options.stepTokenBudget, options.blockSize,
                      options.promptBudgetWhileDecoding});

  d->info.path = options.modelPath;
  d->info.architecture = config.architectureName;
  d->info.description = config.describe();
  d->info.trainedContext = config.contextLength;
  d->info.contextLength = context;
  d->info.backendName = d->backend->name();
  // "auto" on the CPU: say why (no driver, no device, the module missing or refused, a weight
  // type the CUDA kernels lack), where the user reads which backend runs.
  if (options.backend == "auto" && !d->info.backendName.starts_with("cuda")) {
    if (const std::string why = cudaNotUsedReason(autoFallback); !why.empty())
      d->info.backendName += "; CUDA not used: " + why;
  }
  d->info.chatTemplateName = d->chat->name;
  d->info.chatTemplateWarning = d->chat->warning;
  progress.done();
  return std::unique_ptr<Engine>(new Engine(std::move(d)));
}

RequestId Engine::addRequest(GenerationRequest request, EventSink sink) {
  Impl& d = *impl_;
  const auto begin = Clock::now();
  if (d.file->dataLost()) throw Error(modelFileLostMessage(d.file->path()));
  const int32_t context = d.options.contextLength;
  validate(request.sampling, d.backend->vocabSize(), context);
  auto s = std::make_unique<Sequence>();
  s->id = d.nextId++;
  s->sink = std::move(sink);
  const BuiltPrompt prompt =
      buildPrompt(request, *d.chat, *d.tokenizer, maxPromptTokens(request.sampling, context));
  s->tokens = prompt.tokens;
  s->promptLength = static_cast<int32_t>(prompt.tokens.size());
  s->maxNewTokens = request.sampling.maxTokens;
  s->ignoreEndOfGeneration = request.ignoreEndOfGeneration;
  s->logitsObserver = std::move(request.logitsObserver);
  if (request.logprobs) {
    if (request.topLogprobs < 0 || request.topLogprobs > kMaxTopLogprobs)
      throw Error("top_logprobs must be between 0 and " + std::to_string(kMaxTopLogprobs) +
                  ", got " + std::to_string(request.topLogprobs));
    s->topLogprobs = request.topLogprobs;
  }
  s->sampler = std::make_unique<Sampler>(request.sampling, d.backend->vocabSize());
  s->detokenizer = std::make_unique<IncrementalDetokenizer>(*d.tokenizer);
  s->stopMatcher = std::make_unique<StopMatcher>(request.sampling.stop);
  // Chat answers may open with a reasoning section; raw completions are text as it comes.
  if (!request.prompt && !request.promptTokens) {
    s->reasoning = makeReasoningSplitter(*d.tokenizer, prompt.tokens);
  }
  s->stats.droppedTurns = prompt.droppedTurns;
  s->stats.templateWarning = prompt.templateWarning;
  if (request.reportPromptIds) s->stats.promptIds = prompt.tokens;
  s->stats.promptTokens = s->promptLength;
  s->stats.seed = s->sampler->seedUsed();
  s->submitted = Clock::now();
  s->stats.tokenizeMs = millisecondsBetween(begin, s->submitted);
  const RequestId id = s->id;
  d.waiting.push_back(s.get());
  d.sequences.emplace(id, std::move(s));
  return id;
}

PromptTokenCount Engine::countPromptTokens(const GenerationRequest& request) const {
  const Impl& d = *impl_;
  PromptTokenCount count;
  count.contextLength = d.options.contextLength;
  validate(request.sampling, d.backend->vocabSize(), count.contextLength);
  count.maxPromptTokens = maxPromptTokens(request.sampling, count.contextLength);
  count.tokens = static_cast<int32_t>(
      buildPrompt(request, *d.chat, *d.tokenizer, INT32_MAX).tokens.size());
  if (count.tokens <= count.maxPromptTokens) return count;
  try {
    count.droppedTurns =
        buildPrompt(request, *d.chat, *d.tokenizer, count.maxPromptTokens).droppedTurns;
  } catch (const Error&) {
    count.fits = false;  // the last message alone is too long
  }
  return count;
}

void Engine::abort(RequestId id) {
  const auto it = impl_->sequences.find(id);
  if (it != impl_->sequences.end()) it->second->abortRequested = true;
}

bool Engine::hasWork() const { return !impl_->waiting.empty() || !impl_->running.empty(); }
int32_t Engine::runningRequests() const { return static_cast<int32_t>(impl_->running.size()); }
int32_t Engine::waitingRequests() const { return static_cast<int32_t>(impl_->waiting.size()); }

void Engine::Impl::finish(Sequence& s, FinishReason reason, const std::string& error) {
  releaseBlocks(s, *blocks);
  std::erase(running, &s);
  std::erase(waiting, &s);
  finishRequest(s, reason, error);
  sequences.erase(s.id);  // destroys s
}

void Engine::Impl::applyAborts() {
  std::vector<Sequence*> aborted;
  for (auto& [id, s] : sequences)
    if (s->abortRequested) aborted.push_back(s.get());
  for (Sequence* s : aborted) finish(*s, FinishReason::Cancelled);
}

void Engine::step() {
  Impl& d = *impl_;
  d.applyAborts();
  ScheduleOutcome outcome = d.scheduler->schedule(d.waiting, d.running, *d.blocks);
  for (Sequence* s : outcome.outOfBlocks) d.finish(*s, FinishReason::Length, {});
  // Requests left queued behind running ones say so once (again after a preemption).
  for (Sequence* s : d.waiting) {
    if (s->waitingReported || d.running.empty()) continue;
    s->waitingReported = true;
    emitProgress(*s, true);
  }
  const std::vector<ScheduledWork>& plan = outcome.plan;
  if (plan.empty()) return;

  const auto start = Clock::now();
  for (const ScheduledWork& w : plan) {
    Sequence& s = *w.sequence;
    s.waitingReported = false;
    if (!s.started) {
      s.started = start;
      s.stats.queueWaitMs = millisecondsBetween(s.submitted, start);
    }
    if (s.prefilling() && !s.prefillStart) {
      s.prefillStart = start;
      emitProgress(s, false);  // reading begins: 0 of M, or the reused prefix already done
    }
  }
  try {
    d.runner->execute(plan);
  } catch (const std::exception& e) {
    for (const ScheduledWork& w : plan) d.finish(*w.sequence, FinishReason::Error, e.what());
    return;
  }
  // The model file was cut short under the mapping: this step read zeros for some weights.
  if (d.file->dataLost()) {
    for (const ScheduledWork& w : plan)
      d.finish(*w.sequence, FinishReason::Error, modelFileLostMessage(d.file->path()));
    return;
  }
  for (size_t i = 0; i < plan.size(); ++i) {
    Sequence& s = *plan[i].sequence;
    try {
      d.advance(s, plan[i].tokenCount, d.runner->logitsFor(i));
    } catch (const std::exception& e) {
      d.finish(s, FinishReason::Error, e.what());
    }
  }
}

// After the forward pass: the tokens are in the cache; when logits came back, sample the next
// token and stream its text.
void Engine::Impl::advance(Sequence& s, int32_t tokenCount, std::span<const float> logits) {
  const bool wasPrefilling = s.prefilling();
  s.computed += tokenCount;
  commitComputedBlocks(s, *blocks);
  if (wasPrefilling) emitProgress(s, false);  // one per prompt chunk; the last says M of M
  if (logits.empty()) return;  // a prompt chunk that did not end the prompt
  const auto now = Clock::now();
  if (wasPrefilling && !s.prefillEnd) s.prefillEnd = now;
  if (s.logitsObserver) s.logitsObserver(logits);
  const TokenId token = s.sampler->sample(logits, s.tokens);
  const auto sampled = Clock::now();
  if (tokenizer->isEndOfGeneration(token) && !s.ignoreEndOfGeneration)
    return finish(s, FinishReason::Eos);
  if (s.topLogprobs >= 0) s.pendingLogprobs.push_back(describeLogprobs(logits, token, s.topLogprobs));
  s.tokens.push_back(token);
  if (!s.firstToken) s.firstToken = sampled;
  s.lastToken = sampled;
  const StopMatcher::Output out = s.stopMatcher->push(s.detokenizer->push(token));
  emitText(s, out.text);
  if (out.stopped) return finish(s, FinishReason::Stop);
  if (s.maxNewTokens > 0 && s.generated() >= s.maxNewTokens)
    return finish(s, FinishReason::Length);
  if (static_cast<int32_t>(s.tokens.size()) >= options.contextLength)
    return finish(s, FinishReason::Length);
}

std::vector<float> Engine::scoreTokens(std::span<const int32_t> ids) {
  Impl& d = *impl_;
  if (hasWork()) throw Error("scoreTokens needs an idle engine");
  if (ids.empty()) throw Error("no tokens to score");
  if (static_cast<int32_t>(ids.size()) > d.options.contextLength)
    throw Error(std::to_string(ids.size()) + " tokens do not fit the context of " +
                std::to_string(d.options.contextLength));
  for (int32_t id : ids)
    if (id < 0 || static_cast<size_t>(id) >= d.backend->vocabSize())
      throw Error("token id " + std::to_string(id) + " is outside the vocabulary");
  std::vector<int32_t> table;
  const int32_t needed =
      (static_cast<int32_t>(ids.size()) + d.options.blockSize - 1) / d.options.blockSize;
  for (int32_t i = 0; i < needed; ++i) {
    const auto block = d.blocks->allocate();
    if (!block) {
      for (int32_t b : table) d.blocks->release(b);
      throw Error("the KV cache has no room for " + std::to_string(ids.size()) + " tokens");
    }
    table.push_back(*block);
  }
  std::vector<float> logits;
  try {
    d.runner->scoreAll(ids, table, logits);
  } catch (...) {
    for (int32_t b : table) d.blocks->release(b);
    throw;
  }
  for (int32_t b : table) d.blocks->release(b);
  return logits;
}

int32_t Engine::freeKvBlocks() const {
  return impl_->blocks->blockCount() - impl_->blocks->stats().referencedBlocks;
}

KvCacheStats Engine::kvCacheStats() const {
  const BlockManagerStats st = impl_->blocks->stats();
  KvCacheStats out;
  out.blockSize = impl_->blocks->blockSize();
  out.totalBlocks = st.totalBlocks;
  out.referencedBlocks = st.referencedBlocks;
  out.cachedBlocks = st.cachedBlocks;
  out.hitBlocks = st.hitBlocks;
  out.evictedBlocks = st.evictedBlocks;
  out.spilledBlocks = st.spilledBlocks;
  out.restoredBlocks = st.restoredBlocks;
  out.hostBlocks = impl_->spill ? impl_->spill->blocksHeld() : 0;
  out.bytesPerBlock = impl_->backend->kvBytesPerBlock(out.blockSize);
  return out;
}
const ModelInfo& Engine::info() const { return impl_->info; }
const Tokenizer& Engine::tokenizer() const { return *impl_->tokenizer; }
size_t Engine::vocabSize() const { return impl_->backend->vocabSize(); }

}  // namespace ember
