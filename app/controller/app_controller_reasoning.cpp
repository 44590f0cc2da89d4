// AppController: an answer's reasoning section, kept apart from its text. It comes either
// flagged by the engine (RequestEvent::reasoning) or between the template's <think> tags
// (ThinkSplitter); the bubble shows it folded under "Thought for N s".
#include "controller/app_controller.h"

namespace ember::app {

void AppController::onReasoningPiece(const QString& key, const QString& text, double ms) {
  const auto it = active_.find(key);
  if (it == active_.end()) return;
  it->reasoningFlagged = true;
  it->tokenTimesMs << ms;
  it->live.onPiece(ms);
  QString piece = text;
  piece.remove(QStringLiteral("<think>")).remove(QStringLiteral("</think>"));
  if (it->reasoning.isEmpty()) {  // the blank lines that open the section are not shown
    qsizetype i = 0;
    while (i < piece.size() && piece.at(i).isSpace()) ++i;
    piece = piece.mid(i);
  }
  if (!piece.isEmpty()) addReasoning(*it, piece, ms);
  messages_.setLive(it->messageId, it->live.text(), it->live.fraction());
  checkpointIfDue(*it, ms);
  emit pieceReceived(it->conversationId, it->messageId, text);
}

// At most one checkpoint a second: enough to keep a crash's loss small, cheap for the disk. The
// reasoning so far goes in the same row update, with its time until now while it is still
// being written, so an answer cut short by a crash keeps both.
void AppController::checkpointIfDue(ActiveRequest& r, double ms) {
  if (r.sinceCheckpoint.elapsed() < 1000) return;
  const qint64 id = r.messageId;
  if (r.reasoning.isEmpty()) {
    guarded([&] { store_.checkpoint(id, r.text); });
  } else {
    const double reasoningMs =
        r.reasoningEndMs >= 0 ? r.reasoningMs() : std::max(0.0, ms - r.reasoningStartMs);
    guarded([&] { store_.checkpoint(id, r.text, r.reasoning, reasoningMs); });
  }
  r.sinceCheckpoint.restart();
}

void AppController::addReasoning(ActiveRequest& r, const QString& piece, double ms) {
  if (r.reasoningStartMs < 0) {
    r.reasoningStartMs = ms;
    messages_.setReasoningSeconds(r.messageId, -1);  // thinking
  }
  r.reasoning += piece;
  messages_.appendReasoning(r.messageId, piece);
}

void AppController::endReasoning(ActiveRequest& r, double ms) {
  if (r.reasoningStartMs < 0 || r.reasoningEndMs >= 0) return;
  r.reasoningEndMs = ms;
  messages_.setReasoningSeconds(r.messageId, r.reasoningMs() / 1000.0);
}

void AppController::addAnswerText(ActiveRequest& r, const QString& piece) {
  r.text += piece;
  messages_.appendText(r.messageId, piece);  // only when its conversation is the one shown
}

}  // namespace ember::app
