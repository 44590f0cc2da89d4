// libFuzzer harness for the server's SSE + JSON stream codec (openai/codec) read back by the
// client's event-stream reader (openai/client/sse_reader): the input is split at NUL bytes into
// pieces of model output (any bytes: newlines, "data: [DONE]", ill-formed UTF-8), each encoded
// as a chat stream chunk and framed, then the whole stream is fed to the reader in cuts chosen
// by the input. Invariants: exactly one event per frame plus [DONE] (no output can end a frame
// early or split one), each event's data is JSON whose content is the piece itself when the
// piece is valid UTF-8 (else valid UTF-8 with U+FFFD in place of the bad bytes). The raw input
// is also fed to a reader with a small line limit: events or ember::Error, nothing else.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "client/sse_reader.h"
#include "codec/response_codec.h"
#include "ember/error.h"

namespace {

void check(bool condition) {
  if (!condition) std::abort();
}

// RFC 3629: no overlong forms, no surrogates, nothing above U+10FFFF.
bool validUtf8(std::string_view s) {
  size_t i = 0;
  while (i < s.size()) {
    const auto c = static_cast<unsigned char>(s[i]);
    size_t n = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : (c >> 3) == 0x1E ? 4 : 0;
    if (n == 0 || i + n > s.size()) return false;
    uint32_t cp = n == 1 ? c : n == 2 ? (c & 0x1F) : n == 3 ? (c & 0x0F) : (c & 0x07);
    for (size_t k = 1; k < n; ++k) {
      const auto d = static_cast<unsigned char>(s[i + k]);
      if ((d >> 6) != 0x2) return false;
      cp = (cp << 6) | (d & 0x3F);
    }
    if ((n == 2 && cp < 0x80) || (n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) ||
        cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
      return false;
    i += n;
  }
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace ember::openai;
  const std::string_view input(reinterpret_cast<const char*>(data), size);

  std::vector<std::string> pieces;
  size_t start = 0;
  for (size_t i = 0; i <= input.size(); ++i)
    if (i == input.size() || input[i] == '\0') {
      pieces.emplace_back(input.substr(start, i - start));
      start = i + 1;
    }
  const ResponseMeta meta{"chatcmpl-fuzz", 1700000000, "fuzz-model"};
  std::string stream;
  for (size_t i = 0; i < pieces.size(); ++i)
    stream += sseFrame(chatChunkJson(meta, 0, i == 0, pieces[i], std::nullopt));
  stream += sseFrame(chatChunkJson(meta, 0, false, std::nullopt, std::string("stop")));
  stream += sseDone();

  // Cut the stream where the input's bytes say (1..64 bytes a read), as a socket would.
  SseReader reader;
  std::vector<SseEvent> events;
  size_t at = 0, cut = 0;
  while (at < stream.size()) {
    const size_t n = size > 0 ? 1 + static_cast<unsigned char>(input[cut++ % size]) % 64 : 4096;
    const std::string_view next = std::string_view(stream).substr(at, n);
    reader.feed(next, events);
    at += next.size();
  }
  check(!reader.midEvent());
  check(events.size() == pieces.size() + 2);
  check(events.back().data == "[DONE]");
  for (size_t i = 0; i < pieces.size(); ++i) {
    check(events[i].type.empty());
    const auto chunk = nlohmann::json::parse(events[i].data, nullptr, false);
    check(!chunk.is_discarded());
    const auto& delta = chunk.at("choices").at(0).at("delta");
    const std::string content = delta.at("content").get<std::string>();
    check(validUtf8(content));
    if (validUtf8(pieces[i])) check(content == pieces[i]);
    check((i == 0) == delta.contains("role"));
  }

  // The reader on raw bytes: events or a clear error for an overlong line.
  SseReader small(4096);
  std::vector<SseEvent> raw;
  try {
    small.feed(input, raw);
  } catch (const ember::Error&) {
  }
  return 0;
}
