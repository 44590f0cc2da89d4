#include "codec/response_codec.h"

#include <numeric>

#include "codec/fields.h"
#include "codec/logprobs_codec.h"

namespace ember::openai {

std::optional<std::string> finishReasonWire(FinishReason reason) {
  switch (reason) {
    case FinishReason::Eos:
    case FinishReason::Stop: return "stop";
    case FinishReason::Length: return "length";
    default: return std::nullopt;
  }
}

ojson usageJson(const std::vector<ChoiceResult>& choices) {
  int64_t prompt = 0, cached = 0, completion = 0;
  if (!choices.empty()) {
    prompt = choices[0].stats.promptTokens;
    cached = choices[0].stats.cachedPromptTokens;
  }
  for (const ChoiceResult& c : choices) completion += c.stats.generatedTokens;
  ojson usage;
  usage[field::kPromptTokens] = prompt;
  usage[field::kCompletionTokens] = completion;
  usage[field::kTotalTokens] = prompt + completion;
  usage[field::kPromptTokensDetails] = {{field::kCachedTokens, cached}};
  return usage;
}

ojson timingsJson(const RequestStats& s) {
  const double predictedMs =
      std::accumulate(s.interTokenMs.begin(), s.interTokenMs.end(), 0.0);
  ojson t;
  t["prompt_n"] = s.promptTokens - s.cachedPromptTokens;
  t["prompt_ms"] = s.prefillMs;
  t["prompt_per_second"] = s.prefillTokensPerSecond;
  t["predicted_n"] = s.generatedTokens;
  t["predicted_ms"] = predictedMs;
  t["predicted_per_second"] = s.decodeTokensPerSecond;
  t["cache_n"] = s.cachedPromptTokens;
  t["queue_ms"] = s.queueWaitMs;
  t["tokenize_ms"] = s.tokenizeMs;
  t["ttft_ms"] = s.ttftMs;
  t["itl_p50_ms"] = percentile(s.interTokenMs, 50);
  t["itl_p95_ms"] = percentile(s.interTokenMs, 95);
  t["total_ms"] = s.totalMs;
  return t;
}

namespace {

ojson header(const ResponseMeta& meta, const char* object) {
  ojson j;
  j[field::kId] = meta.id;
  j[field::kObject] = object;
  j[field::kCreated] = meta.created;
  j[field::kModel] = meta.model;
  j[field::kSystemFingerprint] = "ember";
  return j;
}

ojson wireFinish(const std::optional<std::string>& reason) {
  return reason ? ojson(*reason) : ojson(nullptr);
}

}  // namespace

ojson chatCompletionJson(const ResponseMeta& meta, const std::vector<ChoiceResult>& choices) {
  ojson j = header(meta, field::kChatCompletion);
  ojson list = ojson::array();
  for (size_t i = 0; i < choices.size(); ++i) {
    ojson c;
    c[field::kIndex] = i;
    c[field::kMessage] = {{field::kRole, "assistant"}, {field::kContent, choices[i].text},
                          {"refusal", nullptr}};
    c[field::kLogprobs] = meta.logprobs ? chatLogprobsJson(choices[i].logprobs) : ojson(nullptr);
    c[field::kFinishReason] = wireFinish(finishReasonWire(choices[i].stats.finishReason));
    list.push_back(std::move(c));
  }
  j[field::kChoices] = std::move(list);
  j[field::kUsage] = usageJson(choices);
  if (!choices.empty()) j[field::kTimings] = timingsJson(choices[0].stats);
  return j;
}

ojson completionJson(const ResponseMeta& meta, const std::vector<ChoiceResult>& choices) {
  ojson j = header(meta, field::kTextCompletion);
  ojson list = ojson::array();
  for (size_t i = 0; i < choices.size(); ++i) {
    ojson c;
    c[field::kIndex] = i;
    c[field::kText] = choices[i].text;
    c[field::kLogprobs] =
        meta.logprobs ? completionLogprobsJson(choices[i].logprobs, 0) : ojson(nullptr);
    c[field::kFinishReason] = wireFinish(finishReasonWire(choices[i].stats.finishReason));
    list.push_back(std::move(c));
  }
  j[field::kChoices] = std::move(list);
  j[field::kUsage] = usageJson(choices);
  if (!choices.empty()) j[field::kTimings] = timingsJson(choices[0].stats);
  return j;
}

ojson chatChunkJson(const ResponseMeta& meta, int index, bool withRole,
                    const std::optional<std::string>& content,
                    const std::optional<std::string>& finishReason,
                    const std::vector<TokenLogprob>* logprobs) {
  static const std::vector<TokenLogprob> kNone;
  ojson j = header(meta, field::kChatCompletionChunk);
  ojson delta = ojson::object();
  if (withRole) delta[field::kRole] = "assistant";
  if (content) delta[field::kContent] = *content;
  ojson c;
  c[field::kIndex] = index;
  c[field::kDelta] = std::move(delta);
  c[field::kLogprobs] =
      meta.logprobs ? chatLogprobsJson(logprobs ? *logprobs : kNone) : ojson(nullptr);
  c[field::kFinishReason] = wireFinish(finishReason);
  j[field::kChoices] = ojson::array({std::move(c)});
  return j;
}

ojson completionChunkJson(const ResponseMeta& meta, int index, const std::string& text,
                          const std::optional<std::string>& finishReason,
                          const std::vector<TokenLogprob>* logprobs, int64_t textOffset) {
  static const std::vector<TokenLogprob> kNone;
  ojson j = header(meta, field::kTextCompletion);
  ojson c;
  c[field::kIndex] = index;
  c[field::kText] = text;
  c[field::kLogprobs] = meta.logprobs
                            ? completionLogprobsJson(logprobs ? *logprobs : kNone, textOffset)
                            : ojson(nullptr);
  c[field::kFinishReason] = wireFinish(finishReason);
  j[field::kChoices] = ojson::array({std::move(c)});
  return j;
}

ojson usageChunkJson(const ResponseMeta& meta, bool chat,
                     const std::vector<ChoiceResult>& choices) {
  ojson j = header(meta, chat ? field::kChatCompletionChunk : field::kTextCompletion);
  j[field::kChoices] = ojson::array();
  j[field::kUsage] = usageJson(choices);
  if (!choices.empty()) j[field::kTimings] = timingsJson(choices[0].stats);
  return j;
}

ojson modelJson(const GeneratorModel& model, int64_t created) {
  ojson m;
  m[field::kId] = model.id;
  m[field::kObject] = field::kModelObject;
  m[field::kCreated] = created;
  m[field::kOwnedBy] = model.ownedBy;
  if (model.contextLength > 0) m["context_length"] = model.contextLength;
  return m;
}

ojson modelsJson(const std::vector<GeneratorModel>& models, int64_t created) {
  ojson list = ojson::array();
  for (const GeneratorModel& m : models) list.push_back(modelJson(m, created));
  return {{field::kObject, field::kList}, {field::kData, std::move(list)}};
}

std::string encodeJson(const ojson& value) {
  return value.dump(-1, ' ', false, ojson::error_handler_t::replace);
}

std::string sseFrame(const ojson& value) {
  return std::string(field::kSseData) + encodeJson(value) + "\n\n";
}

std::string sseDone() { return std::string(field::kSseData) + field::kSseDone + "\n\n"; }

}  // namespace ember::openai
