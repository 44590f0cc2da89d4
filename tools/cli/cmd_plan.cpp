// ember-cli plan --model M [--context N] [--sequences S] [--available-bytes B] [--backend B]
//                [--json]
// "Will it fit": the memory the model needs for the context and concurrency (weights + KV cache
// + workspace) against free memory: by default free device memory when a CUDA device is used,
// else available system RAM (/proc/meminfo). Exit status 0 when it fits, 3 when it does not.
#include <algorithm>
#include <charconv>
#include <cstdio>

#include <nlohmann/json.hpp>

#include "cli_args.h"
#include "ember/devices.h"
#include "ember/engine.h"
#include "ember/error.h"
#include "ember/memory_plan.h"
#include "ember/model_file.h"

namespace ember::cli {
namespace {

template <class T>
T positiveNumber(const std::string& name, const std::string& text) {
  T value{};
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || ptr != text.data() + text.size() || value <= 0)
    throw Error("option " + name + ": '" + text + "' is not a positive whole number");
  return value;
}

// Free memory where the model would load (ember/devices.h): the CUDA device's, else RAM's.
FreeMemory freeMemoryFor(const std::string& backend) {
  if (backend == "cuda" && !cudaUnavailableReason().empty())
    throw Error("--backend cuda: " + cudaUnavailableReason());
  const std::optional<FreeMemory> free = deviceFreeMemory(backend);
  if (!free) throw Error("cannot read the free memory; pass --available-bytes");
  return *free;
}

}  // namespace

int runPlan(const Args& raw) {
  const ParsedArgs args(raw, {"--model", "--context", "--sequences", "--available-bytes", "--backend"},
                        {"--json"});
  const std::string backend = args.value("--backend").value_or("auto");
  if (backend != "auto" && backend != "cpu" && backend != "cuda")
    throw Error("--backend must be auto, cpu or cuda");
  const ModelFile file = inspectModelFile(args.required("--model"));
  if (!file.configured()) throw Error(file.configError);

  MemoryPlanInput input;
  input.contextLength = std::min(file.configContext, EngineOptions::kDefaultContext);
  if (auto v = args.value("--context")) input.contextLength = positiveNumber<int32_t>("--context", *v);
  input.sequences = EngineOptions{}.maxSequences;
  if (auto v = args.value("--sequences")) input.sequences = positiveNumber<int32_t>("--sequences", *v);
  input.weightBytes = file.weightBytes;
  input.kvBytesPerToken = file.kvBytesPerToken;
  input.workspaceBytes = file.workspaceBytes(EngineOptions{}.stepTokenBudget, input.sequences);
  FreeMemory free;
  if (auto v = args.value("--available-bytes"))
    free = {positiveNumber<uint64_t>("--available-bytes", *v), "--available-bytes"};
  else
    free = freeMemoryFor(backend);
  input.availableBytes = free.bytes;
  const MemoryPlan plan = planMemory(input);

  if (args.flag("--json")) {
    nlohmann::ordered_json j;
    j["model"] = file.path;
    j["context_length"] = input.contextLength;
    j["sequences"] = input.sequences;
    j["kv_bytes_per_token"] = input.kvBytesPerToken;
    j["weight_bytes"] = plan.weightBytes;
    j["kv_cache_bytes"] = plan.kvCacheBytes;
    j["workspace_bytes"] = plan.workspaceBytes;
    j["needed_bytes"] = plan.neededBytes;
    j["available_bytes"] = plan.availableBytes;
    j["available_from"] = free.where;
    j["fits"] = plan.fits;
    j["largest_context"] = plan.largestContext;
    j["sequences_at_context"] = plan.sequencesAtContext;
    j["message"] = plan.message;
    std::printf("%s\n", j.dump(2).c_str());
  } else {
    std::printf("%s\n", file.description.c_str());
    std::printf("KV cache: %llu bytes per token; free memory from %s\n",
                static_cast<unsigned long long>(input.kvBytesPerToken), free.where.c_str());
    std::printf("%s: %s\n", plan.fits ? "fits" : "does not fit", plan.message.c_str());
  }
  return plan.fits ? 0 : 3;
}

}  // namespace ember::cli
