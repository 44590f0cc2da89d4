#include "remote_protocol.h"

#include <ctime>

#include <nlohmann/json.hpp>

#include "ember/error.h"

namespace ember::openai {

namespace {

using Json = nlohmann::ordered_json;

void addSampling(const SamplingParams& s, bool ignoreEos, Json& body) {
  const SamplingParams defaults;
  body["temperature"] = s.temperature;
  body["top_p"] = s.topP;
  if (s.topK != defaults.topK) body["top_k"] = s.topK;
  if (s.minP != defaults.minP) body["min_p"] = s.minP;
  if (s.repeatPenalty != 1.0f) {
    body["repeat_penalty"] = s.repeatPenalty;      // llama.cpp
    body["repetition_penalty"] = s.repeatPenalty;  // vLLM
  }
  if (s.frequencyPenalty != 0.0f) body["frequency_penalty"] = s.frequencyPenalty;
  if (s.presencePenalty != 0.0f) body["presence_penalty"] = s.presencePenalty;
  if (s.seed) body["seed"] = *s.seed;
  if (s.maxTokens > 0) body["max_tokens"] = s.maxTokens;
  if (!s.stop.empty()) body["stop"] = s.stop;
  if (ignoreEos) body["ignore_eos"] = true;  // llama.cpp and vLLM both read it
}

}  // namespace

EncodedRequest encodeRequest(const GenerationRequest& request, const std::string& model) {
  if (request.logitsObserver)
    throw Error("a remote server does not send next-token logits; run the model locally");
  if (request.logprobs)  // not forwarded yet: refused rather than answered without them
    throw Error("logprobs are not forwarded to a remote server; run the model locally");
  Json body;
  body["model"] = model;
  EncodedRequest out;
  if (request.prompt || request.promptTokens) {
    out.path = "/completions";
    if (request.promptTokens)
      body["prompt"] = *request.promptTokens;
    else
      body["prompt"] = *request.prompt;
  } else if (request.messages.is_array() && !request.messages.empty()) {
    out.path = "/chat/completions";
    body["messages"] = request.messages;
    if (!request.tools.is_null()) body["tools"] = request.tools;
  } else {
    throw Error("the request has no messages and no prompt");
  }
  addSampling(request.sampling, request.ignoreEndOfGeneration, body);
  body["stream"] = true;
  body["stream_options"] = {{"include_usage", true}};
  out.body = body.dump();
  return out;
}

std::string errorBodyMessage(std::string_view body) {
  const Json j = Json::parse(body, nullptr, /*allow_exceptions=*/false);
  auto text = [](const Json& v) -> std::string {
    if (v.is_string()) return v.get<std::string>();
    return v.dump();
  };
  if (j.is_object()) {
    if (j.contains("error")) {
      const Json& e = j["error"];
      if (e.is_object() && e.contains("message")) return text(e["message"]);
      return text(e);
    }
    if (j.contains("message")) return text(j["message"]);
    if (j.contains("detail")) {
      const Json& d = j["detail"];
      if (d.is_array() && !d.empty() && d[0].is_object() && d[0].contains("msg"))
        return text(d[0]["msg"]);
      return text(d);
    }
  }
  std::string raw(body.substr(0, 300));
  while (!raw.empty() && (raw.back() == '\n' || raw.back() == '\r' || raw.back() == ' '))
    raw.pop_back();
  return raw.empty() ? "(empty body)" : raw;
}

std::optional<double> parseRetryAfter(std::string_view value,
                                      std::chrono::system_clock::time_point now) {
  while (!value.empty() && value.front() == ' ') value.remove_prefix(1);
  while (!value.empty() && (value.back() == ' ' || value.back() == '\r' || value.back() == '\n'))
    value.remove_suffix(1);
  if (value.empty()) return std::nullopt;
  if (value.find_first_not_of("0123456789") == std::string_view::npos) {
    if (value.size() > 9) return std::nullopt;
    return static_cast<double>(std::stoll(std::string(value)));
  }
  // IMF-fixdate, e.g. "Wed, 21 Oct 2015 07:28:00 GMT".
  std::tm tm{};
  const std::string text(value);
  const char* end = strptime(text.c_str(), "%a, %d %b %Y %H:%M:%S GMT", &tm);
  if (!end || *end != '\0') return std::nullopt;
  const auto at = std::chrono::system_clock::from_time_t(timegm(&tm));
  const double seconds = std::chrono::duration<double>(at - now).count();
  return seconds > 0 ? seconds : 0.0;
}

std::vector<GeneratorModel> parseModelList(std::string_view body, const std::string& serverName) {
  const Json j = Json::parse(body, nullptr, false);
  if (!j.is_object() || !j.contains("data") || !j["data"].is_array())
    throw Error(serverName + " answered /models with something other than a model list: " +
                errorBodyMessage(body));
  std::vector<GeneratorModel> models;
  for (const Json& m : j["data"]) {
    if (!m.is_object() || !m.contains("id") || !m["id"].is_string()) continue;
    GeneratorModel model;
    model.id = m["id"].get<std::string>();
    model.ownedBy = serverName;
    if (m.contains("max_model_len") && m["max_model_len"].is_number_integer())
      model.contextLength = m["max_model_len"].get<int32_t>();
    else if (m.contains("meta") && m["meta"].is_object() && m["meta"].contains("n_ctx_train") &&
             m["meta"]["n_ctx_train"].is_number_integer())
      model.contextLength = m["meta"]["n_ctx_train"].get<int32_t>();
    models.push_back(std::move(model));
  }
  return models;
}

}  // namespace ember::openai
