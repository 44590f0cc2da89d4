#include "runtime/engine/reasoning_splitter.h"

#include "runtime/engine/harmony_splitter.h"

#include <algorithm>

namespace ember {
namespace {

bool isSpace(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }

// Length of the longest suffix of `text` that is a proper prefix of `tag`.
size_t partialTagSuffix(std::string_view text, std::string_view tag) {
  const size_t longest = std::min(text.size(), tag.size() - 1);
  for (size_t n = longest; n > 0; --n) {
    if (tag.substr(0, n) == text.substr(text.size() - n)) return n;
  }
  return 0;
}

}  // namespace

TagSplitter::TagSplitter(std::string openTag, std::string closeTag, bool startsInside)
    : open_(std::move(openTag)),
      close_(std::move(closeTag)),
      state_(startsInside ? State::Inside : State::Start),
      skipWhitespace_(startsInside) {}

void ReasoningSplitter::appendPiece(std::vector<Piece>& out, std::string_view text,
                                    bool reasoning) {
  if (text.empty()) return;
  if (!out.empty() && out.back().reasoning == reasoning) {
    out.back().text += text;
  } else {
    out.push_back({std::string(text), reasoning});
  }
}

std::vector<ReasoningSplitter::Piece> TagSplitter::push(std::string_view text) {
  std::vector<Piece> out;
  held_ += text;
  for (;;) {
    if (skipWhitespace_) {
      const size_t first = std::find_if_not(held_.begin(), held_.end(), isSpace) - held_.begin();
      held_.erase(0, first);
      if (held_.empty()) return out;
      skipWhitespace_ = false;
    }
    switch (state_) {
      case State::Start: {
        // Leading whitespace may come before the tag; it belongs to the answer if none follows.
        const size_t first = std::find_if_not(held_.begin(), held_.end(), isSpace) - held_.begin();
        const std::string_view rest = std::string_view(held_).substr(first);
        if (rest.size() < open_.size() && std::string_view(open_).starts_with(rest)) return out;
        if (rest.starts_with(open_)) {
          held_.erase(0, first + open_.size());
          state_ = State::Inside;
          skipWhitespace_ = true;
          continue;
        }
        state_ = State::Answer;
        continue;
      }
      case State::Inside: {
        const size_t close = held_.find(close_);
        if (close != std::string::npos) {
          appendPiece(out, std::string_view(held_).substr(0, close), true);
          held_.erase(0, close + close_.size());
          state_ = State::Answer;
          skipWhitespace_ = true;
          continue;
        }
        const size_t keep = partialTagSuffix(held_, close_);
        appendPiece(out, std::string_view(held_).substr(0, held_.size() - keep), true);
        held_.erase(0, held_.size() - keep);
        return out;
      }
      case State::Answer:
        appendPiece(out, held_, false);
        held_.clear();
        return out;
    }
  }
}

std::vector<ReasoningSplitter::Piece> TagSplitter::flush() {
  std::vector<Piece> out;
  appendPiece(out, held_, state_ == State::Inside);
  held_.clear();
  return out;
}

bool promptOpensReasoning(std::string_view promptTail, std::string_view openTag) {
  while (!promptTail.empty() && isSpace(promptTail.back())) promptTail.remove_suffix(1);
  return !openTag.empty() && promptTail.ends_with(openTag);
}

ReasoningTags reasoningTagsFor(const Tokenizer& tokenizer) {
  if (tokenizer.findToken("[THINK]")) return {"[THINK]", "[/THINK]"};
  // Gemma 4 thinks in a channel named "thought": <|channel>thought\n...<channel|>.
  if (tokenizer.findToken("<|channel>") && tokenizer.findToken("<channel|>")) {
    return {"<|channel>thought", "<channel|>"};
  }
  // gpt-oss (harmony): messages on channels. The vocabulary renders these markers as text
  // (gguf_vocabulary.cpp), so the splitter sees them.
  if (tokenizer.findToken("<|channel|>") && tokenizer.findToken("<|message|>"))
    return {"<|channel|>analysis<|message|>", "<|end|>", /*harmony=*/true};
  return {"<think>", "</think>"};
}

std::unique_ptr<ReasoningSplitter> makeReasoningSplitter(const Tokenizer& tokenizer,
                                                         const std::vector<TokenId>& prompt) {
  ReasoningTags tags = reasoningTagsFor(tokenizer);
  // A few tokens cover the open tag and whitespace after it.
  std::string tail;
  const size_t from = prompt.size() > 8 ? prompt.size() - 8 : 0;
  for (size_t i = from; i < prompt.size(); ++i) tail += tokenizer.tokenBytes(prompt[i], true);
  if (tags.harmony) return std::make_unique<HarmonySplitter>(harmonyStartAfter(tail));
  const bool inside = promptOpensReasoning(tail, tags.open);
  return std::make_unique<TagSplitter>(std::move(tags.open), std::move(tags.close), inside);
}

}  // namespace ember
