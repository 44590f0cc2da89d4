#pragma once
// The OpenAI wire format's names, in one place: the server's codec writes them, the remote
// client reads them. Values are the spellings of the OpenAI API reference.
namespace ember::openai::field {

// Requests.
inline constexpr const char* kModel = "model";
inline constexpr const char* kMessages = "messages";
inline constexpr const char* kRole = "role";
inline constexpr const char* kContent = "content";
inline constexpr const char* kPrompt = "prompt";
inline constexpr const char* kStream = "stream";
inline constexpr const char* kStreamOptions = "stream_options";
inline constexpr const char* kIncludeUsage = "include_usage";
inline constexpr const char* kTemperature = "temperature";
inline constexpr const char* kTopP = "top_p";
inline constexpr const char* kTopK = "top_k";
inline constexpr const char* kMinP = "min_p";
inline constexpr const char* kMaxTokens = "max_tokens";
inline constexpr const char* kMaxCompletionTokens = "max_completion_tokens";
inline constexpr const char* kStop = "stop";
inline constexpr const char* kSeed = "seed";
inline constexpr const char* kFrequencyPenalty = "frequency_penalty";
inline constexpr const char* kPresencePenalty = "presence_penalty";
inline constexpr const char* kRepeatPenalty = "repeat_penalty";
inline constexpr const char* kN = "n";
// Not in the OpenAI spec: llama.cpp's server and vLLM read it (generate max_tokens regardless of
// end-of-generation tokens), and Ember's RemoteGenerator sends it, so an Ember upstream honours it.
inline constexpr const char* kIgnoreEos = "ignore_eos";
inline constexpr const char* kLogprobs = "logprobs";
inline constexpr const char* kTopLogprobs = "top_logprobs";
inline constexpr const char* kTools = "tools";
inline constexpr const char* kToolChoice = "tool_choice";
inline constexpr const char* kResponseFormat = "response_format";
inline constexpr const char* kLogitBias = "logit_bias";
inline constexpr const char* kEcho = "echo";
inline constexpr const char* kSuffix = "suffix";
inline constexpr const char* kBestOf = "best_of";

// Responses.
inline constexpr const char* kId = "id";
inline constexpr const char* kObject = "object";
inline constexpr const char* kCreated = "created";
inline constexpr const char* kChoices = "choices";
inline constexpr const char* kIndex = "index";
inline constexpr const char* kMessage = "message";
inline constexpr const char* kDelta = "delta";
inline constexpr const char* kText = "text";
inline constexpr const char* kFinishReason = "finish_reason";
inline constexpr const char* kUsage = "usage";
inline constexpr const char* kPromptTokens = "prompt_tokens";
inline constexpr const char* kCompletionTokens = "completion_tokens";
inline constexpr const char* kTotalTokens = "total_tokens";
inline constexpr const char* kPromptTokensDetails = "prompt_tokens_details";
inline constexpr const char* kCachedTokens = "cached_tokens";
inline constexpr const char* kTimings = "timings";
inline constexpr const char* kSystemFingerprint = "system_fingerprint";
inline constexpr const char* kData = "data";
inline constexpr const char* kOwnedBy = "owned_by";
inline constexpr const char* kReasoningContent = "reasoning_content";

// Errors: {"error": {"message", "type", "param", "code"}}.
inline constexpr const char* kError = "error";
inline constexpr const char* kErrorMessage = "message";
inline constexpr const char* kErrorType = "type";
inline constexpr const char* kErrorParam = "param";
inline constexpr const char* kErrorCode = "code";

// Object kinds and SSE.
inline constexpr const char* kChatCompletion = "chat.completion";
inline constexpr const char* kChatCompletionChunk = "chat.completion.chunk";
inline constexpr const char* kTextCompletion = "text_completion";
inline constexpr const char* kList = "list";
inline constexpr const char* kModelObject = "model";
inline constexpr const char* kSseData = "data: ";
inline constexpr const char* kSseDone = "[DONE]";

}  // namespace ember::openai::field
