#include "sse_reader.h"

#include "ember/error.h"

namespace ember::openai {

namespace {
constexpr std::string_view kBom = "\xEF\xBB\xBF";
}

void SseReader::feed(std::string_view bytes, std::vector<SseEvent>& out) {
  for (const char c : bytes) {
    if (!pastStart_) {
      // The BOM may itself arrive split over frames; anything else ends the check.
      if (c == kBom[bomBytesSeen_]) {
        if (++bomBytesSeen_ == kBom.size()) pastStart_ = true;
        continue;
      }
      pastStart_ = true;
      line_.append(kBom.substr(0, bomBytesSeen_));  // not a BOM after all: keep the bytes
    }
    if (c == '\n' && lastWasCr_) {
      lastWasCr_ = false;
      continue;
    }
    lastWasCr_ = (c == '\r');
    if (c == '\r' || c == '\n') {
      processLine(out);
      line_.clear();
      continue;
    }
    if (line_.size() >= maxLineBytes_)
      throw Error("the event stream has a line longer than " + std::to_string(maxLineBytes_) +
                  " bytes");
    line_.push_back(c);
  }
}

void SseReader::processLine(std::vector<SseEvent>& out) {
  if (line_.empty()) {  // blank line: dispatch
    if (hasData_) {
      if (!data_.empty() && data_.back() == '\n') data_.pop_back();
      out.push_back({std::move(type_), std::move(data_)});
    }
    data_.clear();
    type_.clear();
    hasData_ = false;
    return;
  }
  if (line_[0] == ':') return;  // comment (keep-alive)
  const std::string_view line = line_;
  const size_t colon = line.find(':');
  const std::string_view field = line.substr(0, colon);
  std::string_view value;
  if (colon != std::string_view::npos) {
    value = line.substr(colon + 1);
    if (!value.empty() && value[0] == ' ') value.remove_prefix(1);
  }
  if (field == "data") {
    data_.append(value);
    data_.push_back('\n');
    hasData_ = true;
  } else if (field == "event") {
    type_ = value;
  }
  // `id` and `retry` matter to browsers reconnecting; a completion stream is never resumed.
}

}  // namespace ember::openai
