#include "codec/request_codec.h"

#include <cmath>
#include <limits>
#include <optional>

#include "codec/fields.h"
#include "codec/logprobs_codec.h"
#include "ember/sampling_params.h"

namespace ember::openai {
namespace {

using json = nlohmann::json;

std::string describe(const json& v) {
  switch (v.type()) {
    case json::value_t::string: return "a string";
    case json::value_t::boolean: return "a boolean";
    case json::value_t::array: return "an array";
    case json::value_t::object: return "an object";
    case json::value_t::null: return "null";
    default: return "a number";
  }
}

const json* member(const json& body, const char* name) {
  const auto it = body.find(name);
  if (it == body.end() || it->is_null()) return nullptr;
  return &*it;
}

std::optional<double> readNumber(const json& body, const char* name, double lo, double hi) {
  const json* v = member(body, name);
  if (!v) return std::nullopt;
  if (!v->is_number())
    throw ApiError::invalid(std::string(name) + " must be a number, not " + describe(*v), name);
  const double x = v->get<double>();
  if (!std::isfinite(x) || x < lo || x > hi)
    throw ApiError::invalid(std::string(name) + " must be between " + json(lo).dump() + " and " +
                                json(hi).dump() + ", got " + v->dump(),
                            name);
  return x;
}

// An integer in [lo, hi]; 3.0 counts as 3, 1.5 is refused.
std::optional<int64_t> readInteger(const json& body, const char* name, int64_t lo, int64_t hi) {
  const json* v = member(body, name);
  if (!v) return std::nullopt;
  const std::string range = " between " + std::to_string(lo) + " and " + std::to_string(hi);
  if (v->is_number_unsigned() && v->get<uint64_t>() > static_cast<uint64_t>(hi))
    throw ApiError::invalid(std::string(name) + " must be" + range + ", got " + v->dump(), name);
  if (v->is_number_integer()) {
    const int64_t x = v->get<int64_t>();
    if (x < lo || x > hi)
      throw ApiError::invalid(std::string(name) + " must be" + range + ", got " + v->dump(), name);
    return x;
  }
  if (v->is_number_float()) {
    const double x = v->get<double>();
    if (std::isfinite(x) && x == std::floor(x) && x >= double(lo) && x <= double(hi))
      return static_cast<int64_t>(x);
  }
  throw ApiError::invalid(std::string(name) + " must be an integer" + range + ", got " +
                              (v->is_number() ? v->dump() : describe(*v)),
                          name);
}

std::optional<bool> readBool(const json& body, const char* name) {
  const json* v = member(body, name);
  if (!v) return std::nullopt;
  if (!v->is_boolean())
    throw ApiError::invalid(std::string(name) + " must be a boolean, not " + describe(*v), name);
  return v->get<bool>();
}

std::string readModel(const json& body) {
  const json* v = member(body, field::kModel);
  if (!v) throw ApiError::invalid("model is required", field::kModel);
  if (!v->is_string()) throw ApiError::invalid("model must be a string", field::kModel);
  return v->get<std::string>();
}

std::vector<std::string> readStop(const json& body) {
  const json* v = member(body, field::kStop);
  if (!v) return {};
  std::vector<std::string> stops;
  if (v->is_string()) {
    stops.push_back(v->get<std::string>());
  } else if (v->is_array()) {
    for (const json& s : *v) {
      if (!s.is_string()) throw ApiError::invalid("stop must hold strings", field::kStop);
      stops.push_back(s.get<std::string>());
    }
  } else {
    throw ApiError::invalid("stop must be a string or an array of strings", field::kStop);
  }
  if (stops.size() > kMaxStopStrings)
    throw ApiError::invalid("stop holds at most " + std::to_string(kMaxStopStrings) + " strings",
                            field::kStop);
  for (const std::string& s : stops) {
    if (s.empty()) throw ApiError::invalid("a stop string cannot be empty", field::kStop);
    if (s.size() > kMaxStopStringBytes)
      throw ApiError::invalid("a stop string is at most " + std::to_string(kMaxStopStringBytes) +
                                  " bytes",
                              field::kStop);
  }
  return stops;
}

// The OpenAI API's request fields that change nothing here (who the user is, storing, billing,
// hosted tools, audio, prediction, hints for other models): accepted and ignored, but only with
// the JSON type the API gives them, as the API itself answers `"user": 5` with a 400 naming it.
// Null means "not given", as for every other field.
enum Kind : unsigned { kString = 1, kBoolean = 2, kObject = 4, kArray = 8 };
struct IgnoredField {
  const char* name;
  unsigned kinds;
  bool chatOnly;
};
constexpr IgnoredField kIgnoredFields[] = {
    {"user", kString, false},
    {"store", kBoolean, true},
    {"metadata", kObject, true},
    {"service_tier", kString, true},
    {"verbosity", kString, true},
    {"reasoning_effort", kString, true},
    {"safety_identifier", kString, true},
    {"prompt_cache_key", kString, true},
    {"prompt_cache_options", kObject, true},
    {"prompt_cache_retention", kString, true},
    {"modalities", kArray, true},
    {"audio", kObject, true},
    {"prediction", kObject, true},
    {"moderation", kObject, true},
    {"web_search_options", kObject, true},
    {"parallel_tool_calls", kBoolean, true},
    {"functions", kArray, true},                 // deprecated: tools
    {"function_call", kString | kObject, true},  // deprecated: tool_choice
};

void checkIgnoredFieldTypes(const json& body, Endpoint endpoint) {
  for (const IgnoredField& f : kIgnoredFields) {
    if (f.chatOnly && endpoint != Endpoint::ChatCompletions) continue;
    const json* v = member(body, f.name);
    if (!v) continue;
    const unsigned kind = v->is_string()  ? kString
                          : v->is_boolean() ? kBoolean
                          : v->is_object()  ? kObject
                          : v->is_array()   ? kArray
                                            : 0u;
    if (kind & f.kinds) continue;
    std::string wanted;
    for (const auto& [bit, name] : {std::pair{kString, "a string"}, std::pair{kBoolean, "a boolean"},
                                    std::pair{kObject, "an object"}, std::pair{kArray, "an array"}})
      if (f.kinds & bit) wanted += (wanted.empty() ? "" : " or ") + std::string(name);
    throw ApiError::invalid(std::string(f.name) + " must be " + wanted + ", not " + describe(*v),
                            f.name);
  }
}

// Parameters Ember cannot honour: a 400 naming them rather than an answer that ignores them.
void refuseUnsupported(const json& body, Endpoint endpoint) {
  checkIgnoredFieldTypes(body, endpoint);
  if (endpoint == Endpoint::ChatCompletions) {  // the deprecated names of tools and tool_choice
    if (const json* functions = member(body, "functions"); functions && !functions->empty())
      throw ApiError::invalid("functions are not supported for this model's chat template",
                              "functions");
    if (const json* call = member(body, "function_call"); call && *call != "none")
      throw ApiError::invalid("function_call is not supported (no functions)", "function_call");
  }
  if (const json* tools = member(body, field::kTools); tools && !(tools->is_array() && tools->empty()))
    throw ApiError::invalid("tools are not supported for this model's chat template",
                            field::kTools);
  if (const json* choice = member(body, field::kToolChoice); choice && *choice != "none")
    throw ApiError::invalid("tool_choice is not supported (no tools)", field::kToolChoice);
  if (const json* format = member(body, field::kResponseFormat)) {
    if (!format->is_object() || format->value("type", json()) != "text")
      throw ApiError::invalid("only response_format {\"type\": \"text\"} is supported",
                              field::kResponseFormat);
  }
  if (const json* bias = member(body, field::kLogitBias); bias && !(bias->is_object() && bias->empty()))
    throw ApiError::invalid("logit_bias is not supported", field::kLogitBias);
  if (endpoint == Endpoint::Completions) {
    if (auto echo = readBool(body, field::kEcho); echo && *echo)
      throw ApiError::invalid("echo is not supported", field::kEcho);
    if (member(body, field::kSuffix))
      throw ApiError::invalid("suffix is not supported", field::kSuffix);
    if (auto bestOf = readInteger(body, field::kBestOf, 0, 20); bestOf && *bestOf > 1)
      throw ApiError::invalid("best_of is not supported", field::kBestOf);
  }
}

// Chat: logprobs (boolean) and top_logprobs (0..20, only with logprobs). Completions: logprobs
// (0..5), the number of alternatives, where 0 still reports the sampled tokens.
void readLogprobs(const json& body, ParsedRequest& out) {
  GenerationRequest& g = out.generation;
  if (out.endpoint == Endpoint::Completions) {
    if (auto n = readInteger(body, field::kLogprobs, 0, kMaxCompletionLogprobs)) {
      g.logprobs = true;
      g.topLogprobs = int32_t(*n);
    }
    if (member(body, field::kTopLogprobs))
      throw ApiError::invalid("top_logprobs is a chat parameter; completions take logprobs: N",
                              field::kTopLogprobs);
    return;
  }
  g.logprobs = readBool(body, field::kLogprobs).value_or(false);
  if (auto n = readInteger(body, field::kTopLogprobs, 0, kMaxTopLogprobs)) {
    if (!g.logprobs)
      throw ApiError::invalid("top_logprobs needs logprobs: true", field::kTopLogprobs);
    g.topLogprobs = int32_t(*n);
  }
}

// The fields both endpoints share: sampling, n, stream.
void readCommon(const json& body, ParsedRequest& out) {
  if (!body.is_object()) throw ApiError::invalid("the request body must be a JSON object", {});
  out.model = readModel(body);
  out.generation.model = out.model;
  refuseUnsupported(body, out.endpoint);
  SamplingParams& s = out.generation.sampling;
  if (auto v = readNumber(body, field::kTemperature, 0, 2)) s.temperature = float(*v);
  if (auto v = readNumber(body, field::kTopP, 0, 1)) s.topP = float(*v);
  if (auto v = readInteger(body, field::kTopK, 0, std::numeric_limits<int32_t>::max()))
    s.topK = int32_t(*v);
  if (auto v = readNumber(body, field::kMinP, 0, 1)) s.minP = float(*v);
  if (auto v = readNumber(body, field::kFrequencyPenalty, -2, 2)) s.frequencyPenalty = float(*v);
  if (auto v = readNumber(body, field::kPresencePenalty, -2, 2)) s.presencePenalty = float(*v);
  if (auto v = readNumber(body, field::kRepeatPenalty, 0, kMaxRepeatPenalty)) {
    if (*v <= 0) throw ApiError::invalid("repeat_penalty must be above 0", field::kRepeatPenalty);
    s.repeatPenalty = float(*v);
  }
  const int64_t kMaxTokensLimit = std::numeric_limits<int32_t>::max();
  if (auto v = readInteger(body, field::kMaxTokens, 1, kMaxTokensLimit)) s.maxTokens = *v;
  if (auto v = readInteger(body, field::kMaxCompletionTokens, 1, kMaxTokensLimit))
    s.maxTokens = *v;  // the newer name wins when both are given
  if (const json* seed = member(body, field::kSeed)) {
    if (seed->is_number_unsigned()) s.seed = seed->get<uint64_t>();
    else s.seed = static_cast<uint64_t>(*readInteger(body, field::kSeed, 0, INT64_MAX));
  }
  s.stop = readStop(body);
  readLogprobs(body, out);
  out.generation.ignoreEndOfGeneration = readBool(body, field::kIgnoreEos).value_or(false);
  if (auto v = readInteger(body, field::kN, 1, kMaxChoices)) out.n = int(*v);
  out.stream = readBool(body, field::kStream).value_or(false);
  if (const json* options = member(body, field::kStreamOptions)) {
    if (!out.stream)
      throw ApiError::invalid("stream_options is only allowed with stream: true",
                              field::kStreamOptions);
    if (!options->is_object())
      throw ApiError::invalid("stream_options must be an object", field::kStreamOptions);
    out.includeUsage = readBool(*options, field::kIncludeUsage).value_or(false);
  }
}

std::string messageText(const json& content, const std::string& where) {
  if (content.is_string()) return content.get<std::string>();
  if (content.is_array()) {
    std::string text;
    for (const json& part : content) {
      if (!part.is_object() || part.value("type", json()) != "text" ||
          !part.contains("text") || !part["text"].is_string())
        throw ApiError::invalid(where + " holds a part that is not text (this model reads text)",
                                where);
      if (!text.empty()) text += "\n";
      text += part["text"].get<std::string>();
    }
    return text;
  }
  throw ApiError::invalid(where + " must be a string or an array of text parts", where);
}

}  // namespace

json parseJsonBody(std::string_view body) {
  json parsed;
  try {
    // The parser itself is iterative; the callback refuses depth before any value is built.
    parsed = json::parse(body.begin(), body.end(), [](int depth, json::parse_event_t, json&) {
      if (depth > kMaxJsonDepth)
        throw ApiError::invalid("the JSON nests deeper than " + std::to_string(kMaxJsonDepth) +
                                    " levels",
                                {});
      return true;
    });
  } catch (const json::exception& e) {
    throw ApiError::invalid(std::string("the body is not valid JSON: ") + e.what(), {});
  }
  if (!parsed.is_object()) throw ApiError::invalid("the request body must be a JSON object", {});
  return parsed;
}

ParsedRequest parseChatCompletionRequest(const json& body) {
  ParsedRequest out;
  out.endpoint = Endpoint::ChatCompletions;
  readCommon(body, out);
  const json* messages = member(body, field::kMessages);
  if (!messages) throw ApiError::invalid("messages is required", field::kMessages);
  if (!messages->is_array() || messages->empty())
    throw ApiError::invalid("messages must be a non-empty array", field::kMessages);
  if (messages->size() > kMaxMessages)
    throw ApiError::invalid("messages holds at most " + std::to_string(kMaxMessages) + " items",
                            field::kMessages);
  auto& rendered = out.generation.messages;
  for (size_t i = 0; i < messages->size(); ++i) {
    const json& m = (*messages)[i];
    const std::string where = "messages[" + std::to_string(i) + "]";
    if (!m.is_object()) throw ApiError::invalid(where + " must be an object", where);
    const json* role = member(m, field::kRole);
    if (!role || !role->is_string())
      throw ApiError::invalid(where + ".role is required", where + ".role");
    std::string r = role->get<std::string>();
    if (r == "developer") r = "system";  // the newer name of the system role
    if (r != "system" && r != "user" && r != "assistant")
      throw ApiError::invalid(where + ".role \"" + role->get<std::string>() +
                                  "\" is not supported (system, developer, user, assistant)",
                              where + ".role");
    if (m.contains("tool_calls") && !m["tool_calls"].is_null())
      throw ApiError::invalid("tool calls are not supported", where + ".tool_calls");
    const json* content = member(m, field::kContent);
    std::string text;
    if (content) text = messageText(*content, where + ".content");
    else if (r != "assistant")
      throw ApiError::invalid(where + ".content is required", where + ".content");
    rendered.push_back({{field::kRole, r}, {field::kContent, text}});
  }
  return out;
}

ParsedRequest parseCompletionRequest(const json& body) {
  ParsedRequest out;
  out.endpoint = Endpoint::Completions;
  readCommon(body, out);
  const json* prompt = member(body, field::kPrompt);
  if (!prompt) throw ApiError::invalid("prompt is required", field::kPrompt);
  if (prompt->is_string()) {
    out.generation.prompt = prompt->get<std::string>();
  } else if (prompt->is_array() && prompt->size() == 1 && (*prompt)[0].is_string()) {
    out.generation.prompt = (*prompt)[0].get<std::string>();
  } else if (prompt->is_array() && !prompt->empty() && (*prompt)[0].is_number()) {
    std::vector<int32_t> ids;
    for (const json& id : *prompt) {
      if (!id.is_number_integer() || id.get<int64_t>() < 0 ||
          id.get<int64_t>() > std::numeric_limits<int32_t>::max())
        throw ApiError::invalid("prompt token ids must be integers from 0", field::kPrompt);
      ids.push_back(static_cast<int32_t>(id.get<int64_t>()));
    }
    out.generation.promptTokens = std::move(ids);
  } else {
    throw ApiError::invalid(
        "prompt must be a string, one string in an array, or an array of token ids",
        field::kPrompt);
  }
  if (out.generation.prompt && out.generation.prompt->empty())
    throw ApiError::invalid("prompt is empty", field::kPrompt);
  return out;
}

}  // namespace ember::openai
