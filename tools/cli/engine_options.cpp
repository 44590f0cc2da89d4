#include "engine_options.h"

#include <charconv>
#include <cstdio>

#include "ember/error.h"

namespace ember::cli {
namespace {

template <class T>
T parseNumber(const std::string& name, const std::string& text) {
  T value{};
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (ec != std::errc() || ptr != end)
    throw Error("option " + name + ": '" + text + "' is not a valid number");
  return value;
}

template <class T>
void maybe(const ParsedArgs& args, const std::string& name, T& field) {
  if (auto v = args.value(name)) field = parseNumber<T>(name, *v);
}

}  // namespace

const std::set<std::string>& modelValueOptions() {
  static const std::set<std::string> options = {
      "--model", "--threads", "--ctx", "--max-tokens", "--temperature", "--top-p", "--top-k",
      "--min-p", "--repeat-penalty", "--frequency-penalty", "--presence-penalty", "--seed",
      "--stop", "--backend", "--kernels"};
  return options;
}

EngineOptions engineOptionsFrom(const ParsedArgs& args) {
  EngineOptions o;
  o.modelPath = args.required("--model");
  maybe(args, "--threads", o.threads);
  maybe(args, "--ctx", o.contextLength);
  o.maxSequences = 1;
  if (auto backend = args.value("--backend")) o.backend = *backend;
  if (auto kernels = args.value("--kernels")) o.kernels = *kernels;
  return o;
}

SamplingParams samplingFrom(const ParsedArgs& args) {
  SamplingParams p;
  maybe(args, "--max-tokens", p.maxTokens);
  maybe(args, "--temperature", p.temperature);
  maybe(args, "--top-p", p.topP);
  maybe(args, "--top-k", p.topK);
  maybe(args, "--min-p", p.minP);
  maybe(args, "--repeat-penalty", p.repeatPenalty);
  maybe(args, "--frequency-penalty", p.frequencyPenalty);
  maybe(args, "--presence-penalty", p.presencePenalty);
  if (auto seed = args.value("--seed")) p.seed = parseSeed(*seed);
  if (auto stop = args.value("--stop")) p.stop.push_back(*stop);
  return p;
}

void loadMessages(const std::string& path, GenerationRequest& request) {
  nlohmann::ordered_json doc;
  try {
    doc = nlohmann::ordered_json::parse(readFile(path));
  } catch (const nlohmann::json::exception& e) {
    throw Error(path + " is not valid JSON: " + e.what());
  }
  if (doc.is_array()) {
    request.messages = doc;
  } else if (doc.is_object() && doc.contains("messages")) {
    request.messages = doc["messages"];
    if (doc.contains("tools")) request.tools = doc["tools"];
  } else {
    throw Error(path + " must hold a JSON array of messages or an object with \"messages\"");
  }
}

nlohmann::ordered_json statsJson(const RequestStats& s) {
  nlohmann::ordered_json j;
  j["finish_reason"] = std::string(finishReasonName(s.finishReason));
  if (!s.error.empty()) j["error"] = s.error;
  j["prompt_tokens"] = s.promptTokens;
  j["cached_prompt_tokens"] = s.cachedPromptTokens;
  j["preemptions"] = s.preemptions;
  j["generated_tokens"] = s.generatedTokens;
  j["dropped_turns"] = s.droppedTurns;
  if (!s.templateWarning.empty()) j["template_warning"] = s.templateWarning;
  if (!s.promptIds.empty()) j["prompt_ids"] = s.promptIds;
  j["queue_wait_ms"] = s.queueWaitMs;
  j["tokenize_ms"] = s.tokenizeMs;
  j["prefill_ms"] = s.prefillMs;
  j["prefill_tokens_per_s"] = s.prefillTokensPerSecond;
  j["ttft_ms"] = s.ttftMs;
  j["decode_tokens_per_s"] = s.decodeTokensPerSecond;
  j["itl_p50_ms"] = percentile(s.interTokenMs, 50);
  j["itl_p95_ms"] = percentile(s.interTokenMs, 95);
  j["itl_max_ms"] = percentile(s.interTokenMs, 100);
  j["inter_token_ms"] = s.interTokenMs;
  j["total_ms"] = s.totalMs;
  j["seed"] = s.seed;
  return j;
}

std::string statsLine(const RequestStats& s) {
  char line[512];
  std::snprintf(line, sizeof line,
                "[%s] prompt %d tok (%d reused) in %.0f ms (%.1f tok/s) | TTFT %.0f ms | %d tok at %.1f tok/s "
                "| ITL p50 %.1f ms p95 %.1f ms | seed %llu",
                std::string(finishReasonName(s.finishReason)).c_str(), s.promptTokens,
                s.cachedPromptTokens, s.prefillMs, s.prefillTokensPerSecond, s.ttftMs, s.generatedTokens,
                s.decodeTokensPerSecond, percentile(s.interTokenMs, 50),
                percentile(s.interTokenMs, 95), static_cast<unsigned long long>(s.seed));
  std::string out = line;
  if (s.droppedTurns > 0) out += " | " + std::to_string(s.droppedTurns) + " oldest messages left out";
  if (!s.templateWarning.empty()) out += " | warning: " + s.templateWarning;
  if (!s.error.empty()) out += " | error: " + s.error;
  return out;
}

}  // namespace ember::cli
