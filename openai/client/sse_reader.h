#pragma once
// Server-sent events, framed as the WHATWG HTML standard describes the event-stream format:
// lines end in LF, CR or CRLF (a frame may split anywhere, also between CR and LF), a line
// starting with ':' is a comment, `field: value` drops one space after the colon, `data` lines
// of one event are joined with '\n', and a blank line dispatches the event. A leading UTF-8 BOM
// is skipped. An event without its closing blank line at the end of the stream is not dispatched.
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace ember::openai {

struct SseEvent {
  std::string type;  // the `event:` field; empty means "message"
  std::string data;
};

class SseReader {
 public:
  // A line longer than maxLineBytes (a server that never ends its line) is an error, not an
  // unbounded buffer.
  explicit SseReader(size_t maxLineBytes = 8u << 20) : maxLineBytes_(maxLineBytes) {}

  // Consumes the next bytes of the stream and appends every event they complete to `out`.
  // Throws ember::Error when a line exceeds the limit.
  void feed(std::string_view bytes, std::vector<SseEvent>& out);

  // True while part of an event (or of a line) has been read but not dispatched.
  bool midEvent() const { return !line_.empty() || hasData_ || !type_.empty(); }

 private:
  void processLine(std::vector<SseEvent>& out);

  size_t maxLineBytes_;
  std::string line_;
  std::string data_;
  std::string type_;
  bool hasData_ = false;
  bool lastWasCr_ = false;   // a CR ended the previous line: a following LF belongs to it
  size_t bomBytesSeen_ = 0;  // of the 3-byte UTF-8 BOM at the very start
  bool pastStart_ = false;
};

}  // namespace ember::openai
