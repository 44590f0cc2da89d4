// libFuzzer harness for the local API server's request parser (openai/codec): the input is an
// HTTP request body, parsed as JSON with the depth limit, then as a chat completion and as a
// completion request. Every input must end in a ParsedRequest or an ApiError (a 400 with a
// message), never another exception, a crash, a sanitizer report or deep recursion. A request
// that parses must hold what the API allows (choices 1..kMaxChoices, messages or a prompt).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "codec/api_error.h"
#include "codec/request_codec.h"

namespace {

void check(bool condition) {
  if (!condition) std::abort();  // libFuzzer reports the input
}

void parseAs(ember::openai::Endpoint endpoint, const nlohmann::json& body) {
  using namespace ember::openai;
  try {
    const ParsedRequest parsed = endpoint == Endpoint::ChatCompletions
                                     ? parseChatCompletionRequest(body)
                                     : parseCompletionRequest(body);
    check(parsed.endpoint == endpoint);
    check(parsed.n >= 1 && parsed.n <= kMaxChoices);
    check(parsed.generation.messages.size() <= kMaxMessages);
  } catch (const ApiError& error) {
    check(error.status() == 400);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace ember::openai;
  const std::string_view body(reinterpret_cast<const char*>(data), size);
  nlohmann::json parsed;
  try {
    parsed = parseJsonBody(body);
  } catch (const ApiError& error) {
    check(error.status() == 400);
    return 0;
  }
  parseAs(Endpoint::ChatCompletions, parsed);
  parseAs(Endpoint::Completions, parsed);
  return 0;
}
