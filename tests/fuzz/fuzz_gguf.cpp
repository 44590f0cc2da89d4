// libFuzzer harness: the GGUF reader over arbitrary bytes, then what the engine reads from a
// file that opened (the tokenizer metadata and the chat template choice). Any input must end
// in a parsed file or a GgufError / ember::Error, never a crash, a sanitizer report or a hang.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "chat/template_resolver.h"
#include "ember/error.h"
#include "gguf/gguf_file.h"
#include "tokenizer/tokenizer.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::unique_ptr<ember::gguf::GgufFile> file;
  try {
    file = ember::gguf::GgufFile::fromBuffer(std::vector<uint8_t>(data, data + size), "fuzz.gguf");
  } catch (const ember::Error&) {
    return 0;
  }
  // Every tensor view lies inside the image (the reader promises it).
  for (const auto& t : file->tensors()) {
    if (!t.data.empty()) {
      volatile uint8_t first = t.data.front();
      volatile uint8_t last = t.data.back();
      (void)first;
      (void)last;
    }
  }
  try {
    auto tokenizer = ember::Tokenizer::fromGguf(*file);
    (void)tokenizer->encode("Hello <|im_end|> world", true);
  } catch (const ember::Error&) {
  }
  try {
    auto chat = ember::chat::resolveChatTemplate(*file);
    ember::chat::Conversation conversation;
    conversation.messages = nlohmann::ordered_json::parse(R"([{"role":"user","content":"hi"}])");
    ember::chat::RenderOptions options;
    options.limits.maxOutputBytes = 1 << 20;
    options.limits.maxLoopIterations = 100000;
    options.limits.maxWorkBytes = 16u << 20;
    (void)chat.render(conversation, options);
  } catch (const ember::Error&) {
  }
  return 0;
}
