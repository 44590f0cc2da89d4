#pragma once
// Separates a model's reasoning section from its answer in the streamed text. Two formats:
// TagSplitter for a tag pair such as <think>...</think>, HarmonySplitter (harmony_splitter.h)
// for gpt-oss's message channels.
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "tokenizer/tokenizer.h"

namespace ember {

class ReasoningSplitter {
 public:
  struct Piece {
    std::string text;
    bool reasoning = false;
  };
  virtual ~ReasoningSplitter() = default;

  // The pieces that can be handed out now; text that may be the start of a marker is held back
  // until the next push or flush. Pieces are never empty and never split a UTF-8 character
  // that was whole in the input (markers are ASCII).
  virtual std::vector<Piece> push(std::string_view text) = 0;
  // Everything still held, as what it would be if no marker follows.
  virtual std::vector<Piece> flush() = 0;
  // Whether the text now arriving is reasoning.
  virtual bool inside() const = 0;

 protected:
  // Appends to the last piece when it is of the same kind; empty text adds nothing.
  static void appendPiece(std::vector<Piece>& out, std::string_view text, bool reasoning);
};

// A reasoning model that opens its answer with a tag pair such as <think>...</think> (or whose
// prompt already opened it, as DeepSeek-R1's template does): the text between the tags is
// reasoning, the tags themselves are dropped, and so is the whitespace right after each tag. The
// section is recognised only at the very start of the answer, so a tag quoted later in an answer
// stays plain text.
class TagSplitter final : public ReasoningSplitter {
 public:
  // `startsInside`: the prompt ends with the open tag, so the output begins as reasoning.
  TagSplitter(std::string openTag, std::string closeTag, bool startsInside);

  std::vector<Piece> push(std::string_view text) override;
  std::vector<Piece> flush() override;
  bool inside() const override { return state_ == State::Inside; }

 private:
  enum class State { Start, Inside, Answer };

  std::string open_, close_;
  State state_;
  bool skipWhitespace_;  // drop whitespace until the first other character
  std::string held_;
};

// The tag pair of a model's reasoning section: [THINK]/[/THINK] where the vocabulary has a
// "[THINK]" token (Magistral), Gemma 4's thought channel (<|channel>thought ... <channel|>)
// where it has those tokens, gpt-oss's harmony channels where it has <|channel|> and
// <|message|> (`harmony` set; open and close are then the analysis message's own markers, for
// the prompt check), otherwise <think>/</think> (Qwen3, DeepSeek-R1, SmolLM3, Phi-4 reasoning
// and most others).
struct ReasoningTags {
  std::string open, close;
  bool harmony = false;
};
ReasoningTags reasoningTagsFor(const Tokenizer& tokenizer);

// Whether a rendered prompt leaves the model inside the reasoning section: it ends with the
// open tag (trailing whitespace aside).
bool promptOpensReasoning(std::string_view promptTail, std::string_view openTag);

// The splitter for a chat request: the model's tags, starting inside the section when the
// rendered prompt's last tokens (special tokens spelled out) end with the open tag; for a
// harmony vocabulary, a HarmonySplitter started where the prompt leaves off.
std::unique_ptr<ReasoningSplitter> makeReasoningSplitter(const Tokenizer& tokenizer,
                                                         const std::vector<TokenId>& prompt);

}  // namespace ember
