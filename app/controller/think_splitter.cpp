#include "controller/think_splitter.h"

#include <algorithm>

namespace ember::app {
namespace {

const QString kOpen = QStringLiteral("<think>");
const QString kClose = QStringLiteral("</think>");

// Length of the longest end of `text` that is the start of `tag` (a tag cut by the piece).
qsizetype heldBack(const QString& text, const QString& tag) {
  for (qsizetype n = std::min(text.size(), tag.size() - 1); n > 0; --n)
    if (text.endsWith(QStringView(tag).left(n))) return n;
  return 0;
}

QString withoutLeadingBreaks(const QString& text) {
  qsizetype i = 0;
  while (i < text.size() && text.at(i).isSpace()) ++i;
  return text.mid(i);
}

}  // namespace

ThinkSplitter::Split ThinkSplitter::push(const QString& piece) {
  Split out;
  if (state_ == State::Answer) {
    out.answer = piece;
    return out;
  }
  if (state_ == State::AfterThink) {
    out.answer = withoutLeadingBreaks(piece);
    if (!out.answer.isEmpty()) state_ = State::Answer;
    return out;
  }
  pending_ += piece;
  if (state_ == State::Start) {
    const QString lead = withoutLeadingBreaks(pending_);
    if (lead.isEmpty() || (lead.size() < kOpen.size() && kOpen.startsWith(lead)))
      return out;  // nothing yet, or maybe the opening tag: wait
    if (!lead.startsWith(kOpen)) {
      state_ = State::Answer;
      out.answer = pending_;
      pending_.clear();
      return out;
    }
    state_ = State::Thinking;
    pending_ = withoutLeadingBreaks(lead.mid(kOpen.size()));
  }
  // Thinking: up to the closing tag is reasoning, after it the answer.
  if (!reasoningBegan_) pending_ = withoutLeadingBreaks(pending_);
  const qsizetype close = pending_.indexOf(kClose);
  if (close >= 0) {
    out.reasoning = pending_.left(close);
    out.answer = withoutLeadingBreaks(pending_.mid(close + kClose.size()));
    state_ = out.answer.isEmpty() ? State::AfterThink : State::Answer;
    pending_.clear();
    return out;
  }
  const qsizetype keep = heldBack(pending_, kClose);
  out.reasoning = pending_.left(pending_.size() - keep);
  pending_ = pending_.right(keep);
  if (!out.reasoning.isEmpty()) reasoningBegan_ = true;
  return out;
}

ThinkSplitter::Split ThinkSplitter::flush() {
  Split out;
  if (state_ == State::Thinking) out.reasoning = pending_;
  else out.answer = pending_;
  pending_.clear();
  return out;
}

}  // namespace ember::app
