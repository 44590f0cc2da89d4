#include "runtime/engine/harmony_splitter.h"

#include <algorithm>
#include <array>

namespace ember {
namespace {

constexpr std::string_view kStart = "<|start|>";
constexpr std::string_view kChannel = "<|channel|>";
constexpr std::string_view kMessage = "<|message|>";
constexpr std::string_view kEnd = "<|end|>";
constexpr std::string_view kReturn = "<|return|>";
constexpr std::string_view kCall = "<|call|>";
// Text a header may open with: a new message, its channel, or a recipient before the channel.
constexpr std::array<std::string_view, 3> kHeaderOpeners = {kStart, kChannel, " to="};
// What ends a message's content. <|start|> is there for a model that forgets <|end|>.
constexpr std::array<std::string_view, 4> kContentEnds = {kEnd, kReturn, kCall, kStart};
// A header longer than this without <|message|> is not a header (real ones are under 80 bytes).
constexpr size_t kMaxHeader = 256;

bool isSpace(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }

// Length of the longest suffix of `text` that is a proper prefix of `marker`.
size_t partialSuffix(std::string_view text, std::string_view marker) {
  for (size_t n = std::min(text.size(), marker.size() - 1); n > 0; --n) {
    if (marker.substr(0, n) == text.substr(text.size() - n)) return n;
  }
  return 0;
}

// The channel a header names: the word after <|channel|>, up to a space or the next marker.
std::string_view channelOf(std::string_view header) {
  const size_t at = header.find(kChannel);
  if (at == std::string_view::npos) return {};
  std::string_view rest = header.substr(at + kChannel.size());
  const size_t space = static_cast<size_t>(std::find_if(rest.begin(), rest.end(), isSpace) - rest.begin());
  return rest.substr(0, std::min(rest.find('<'), space));
}

}  // namespace

HarmonySplitter::HarmonySplitter(Start start)
    : state_(start == Start::Header ? State::Header : State::Content),
      reasoning_(start == Start::AnalysisContent) {}

bool HarmonySplitter::couldBeHeader() const {
  return std::any_of(kHeaderOpeners.begin(), kHeaderOpeners.end(), [&](std::string_view opener) {
    return held_.starts_with(opener) ||
           (held_.size() < opener.size() && opener.starts_with(held_));
  });
}

void HarmonySplitter::beginContent(std::string_view header) {
  reasoning_ = channelOf(header) == "analysis";
  separate_ = wrote_[reasoning_];
  state_ = State::Content;
}

void HarmonySplitter::emitContent(std::vector<Piece>& out, std::string_view text) {
  if (text.empty()) return;
  if (separate_) appendPiece(out, "\n\n", reasoning_);
  separate_ = false;
  wrote_[reasoning_] = true;
  appendPiece(out, text, reasoning_);
}

std::vector<ReasoningSplitter::Piece> HarmonySplitter::push(std::string_view text) {
  std::vector<Piece> out;
  held_ += text;
  for (;;) {
    switch (state_) {
      case State::Header: {
        const size_t message = held_.find(kMessage);
        if (message != std::string::npos && message <= kMaxHeader && couldBeHeader()) {
          beginContent(std::string_view(held_).substr(0, message));
          held_.erase(0, message + kMessage.size());
          continue;
        }
        if (couldBeHeader() && held_.size() <= kMaxHeader) return out;
        state_ = State::Plain;  // not harmony after all: hand everything on as it is
        continue;
      }
      case State::Content: {
        size_t end = std::string::npos;
        std::string_view marker;
        for (std::string_view m : kContentEnds) {
          const size_t at = held_.find(m);
          if (at < end) end = at, marker = m;
        }
        if (end != std::string::npos) {
          emitContent(out, std::string_view(held_).substr(0, end));
          // A new message's <|start|> stays: it opens the next header.
          held_.erase(0, end + (marker == kStart ? 0 : marker.size()));
          state_ = State::Header;
          continue;
        }
        size_t keep = 0;
        for (std::string_view m : kContentEnds) keep = std::max(keep, partialSuffix(held_, m));
        emitContent(out, std::string_view(held_).substr(0, held_.size() - keep));
        held_.erase(0, held_.size() - keep);
        return out;
      }
      case State::Plain:
        appendPiece(out, held_, false);
        held_.clear();
        return out;
    }
  }
}

std::vector<ReasoningSplitter::Piece> HarmonySplitter::flush() {
  std::vector<Piece> out;
  switch (state_) {
    case State::Content:
      emitContent(out, held_);
      break;
    case State::Header:
      // An unfinished header (the length limit cut the answer there) is protocol, not text;
      // anything else held is what the model wrote.
      if (!held_.starts_with(kStart) && !held_.starts_with(kChannel)) appendPiece(out, held_, false);
      break;
    case State::Plain:
      appendPiece(out, held_, false);
      break;
  }
  held_.clear();
  return out;
}

HarmonySplitter::Start harmonyStartAfter(std::string_view promptTail) {
  if (!promptTail.ends_with(kMessage)) return HarmonySplitter::Start::Header;
  promptTail.remove_suffix(kMessage.size());
  const size_t start = promptTail.rfind(kStart);
  const std::string_view header =
      promptTail.substr(start == std::string_view::npos ? 0 : start);
  return channelOf(header) == "analysis" ? HarmonySplitter::Start::AnalysisContent
                                         : HarmonySplitter::Start::AnswerContent;
}

}  // namespace ember
