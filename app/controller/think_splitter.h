#pragma once
// Splits a streamed answer into the model's reasoning and the answer proper, for models whose
// template writes the reasoning between <think> and </think> at the start of the answer. Pieces
// arrive cut anywhere (a tag can span pieces), so a possible tag start is held back until the
// next piece decides it. Text flagged as reasoning by the engine (RequestEvent::reasoning) does
// not go through here; after such text the splitter is told the answer has begun.
#include <QString>

namespace ember::app {

class ThinkSplitter {
 public:
  struct Split {
    QString reasoning;
    QString answer;
  };
  Split push(const QString& piece);
  Split flush();  // what is held back, at the end of the answer
  void answerBegan() { state_ = State::Answer; }
  bool thinking() const { return state_ == State::Thinking; }

 private:
  // AfterThink: the section closed; the blank lines before the answer are dropped.
  enum class State { Start, Thinking, AfterThink, Answer };
  State state_ = State::Start;
  QString pending_;  // text not yet handed out (a tag may be starting)
  bool reasoningBegan_ = false;  // leading blank lines of the section are dropped until then
};

}  // namespace ember::app
