#pragma once
// gpt-oss's harmony format, split into reasoning and answer. The model writes messages, each
//   [<|start|>ROLE] HEADER <|message|> CONTENT <|end|>            (more messages follow)
//                                              <|return|> | <|call|>  (generation ends)
// where HEADER holds <|channel|>NAME and, for a tool call, a recipient (" to=functions.f") and a
// content type ("<|constrain|>json" or a bare "json"), in either order. The chat template's
// generation prompt ends with "<|start|>assistant", so the answer opens on a header. Content of
// the "analysis" channel is reasoning; "final" is the answer, and so is "commentary" (the
// preambles a model writes to the user, and tool calls, which Ember does not run); headers and
// markers are dropped. Content is passed on byte for byte, and two messages of the same kind are
// joined with a blank line. Output that does not open on a header is passed through as answer text,
// markers included, so nothing a model writes is lost.
#include <string>
#include <string_view>
#include <vector>

#include "runtime/engine/reasoning_splitter.h"

namespace ember {

class HarmonySplitter final : public ReasoningSplitter {
 public:
  // Where the prompt left the model: about to write a header, or inside a message's content
  // (the prompt ended with "<|message|>" of an analysis or of another channel).
  enum class Start { Header, AnalysisContent, AnswerContent };
  explicit HarmonySplitter(Start start = Start::Header);

  std::vector<Piece> push(std::string_view text) override;
  std::vector<Piece> flush() override;
  bool inside() const override { return state_ == State::Content && reasoning_; }

 private:
  enum class State { Header, Content, Plain };
  // Whether `held_` may still become a header: it starts with a header's first marker, or is a
  // prefix of one.
  bool couldBeHeader() const;
  void beginContent(std::string_view header);
  void emitContent(std::vector<Piece>& out, std::string_view text);

  State state_;
  bool reasoning_ = false;     // the kind of the content now arriving
  bool wrote_[2] = {};         // [answer, reasoning]: a message of that kind had text
  bool separate_ = false;      // a blank line goes before this message's first text
  std::string held_;
};

// The start for a prompt whose last tokens (special tokens spelled out) are `promptTail`.
HarmonySplitter::Start harmonyStartAfter(std::string_view promptTail);

}  // namespace ember
