#pragma once
// Which bytes of a string came from message content. Strings built from a message's text carry
// spans that follow them through concatenation, trimming, macros and blocks into the rendered
// prompt, so the prompt builder knows exactly which output bytes the user typed (and encodes
// them as plain text) without searching the output for them.
#include <cstddef>
#include <cstdint>
#include <vector>

namespace ember::chat {

struct ContentSpan {
  size_t begin = 0;     // byte range [begin, end) of the string
  size_t end = 0;
  uint32_t source = 0;  // index of the message the bytes came from
};
using ContentSpans = std::vector<ContentSpan>;  // sorted, not overlapping

// Appends `from` shifted by `offset` to `into` (whose spans all end at or before `offset`),
// joining a span that continues the last one from the same message.
void appendSpans(ContentSpans& into, const ContentSpans& from, size_t offset);
// The spans of bytes [begin, end) of a string, relative to `begin`.
ContentSpans sliceSpans(const ContentSpans& from, size_t begin, size_t end);

}  // namespace ember::chat
