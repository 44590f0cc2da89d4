#pragma once
// The store operations the fault tests break, each run the way the app runs them (one call per
// user action, every call caught on its own as AppController::guarded does), with a record of
// which calls returned, for the checks afterwards.
#include <QFile>
#include <QString>
#include <QStringList>
#include <functional>
#include <optional>

#include "store/chat_store.h"

namespace ember::test::fault {

// What one run of a scenario did: the errors the store threw, and the ids and texts of what
// it reported as saved.
struct Outcome {
  QList<store::StoreError> errors;
  store::Id userMessage = 0;       // send: the question, when addMessage returned
  store::Id answer = 0;            // send/stream: the answer, when begin... returned
  QStringList savedCheckpoints;    // stream: texts whose checkpoint() returned
  QStringList attemptedTexts;      // stream: every text written or attempted
  bool reasoningSaved = false;
  bool finished = false;           // stream: finishAssistantMessage returned
};

inline void attempt(Outcome& outcome, const std::function<void()>& call) {
  try {
    call();
  } catch (const store::StoreError& error) {
    outcome.errors << error;
  }
}

// Removes a database and the files SQLite and the store keep beside it.
inline void removeDatabase(const QString& path) {
  for (const char* suffix : {"", "-wal", "-shm", "-journal", ".lock"})
    QFile::remove(path + QString::fromLatin1(suffix));
}

inline QString answerText(int part) {
  QString text = QStringLiteral("부분 답변 ");
  for (int i = 0; i <= part; ++i) text += QStringLiteral("part %1 of the streamed answer. ").arg(i);
  return text;
}
inline QString finalAnswer() { return answerText(3) + QStringLiteral("끝."); }
inline QString sentQuestion() { return QStringLiteral("A question sent while the disk fails: 왜?"); }

inline store::MessageStats finishedStats() {
  store::MessageStats stats;
  stats.finishReason = QStringLiteral("stop");
  stats.promptTokens = 9;
  stats.generatedTokens = 4;
  stats.model = QStringLiteral("m.gguf");
  stats.backend = QStringLiteral("cpu");
  stats.tokenTimesMs = {10, 20, 30, 40};
  return stats;
}

// The user sends a message: it is saved, then the empty answer is started.
inline Outcome runSend(store::ChatStore& store, store::Id conversation, store::Id parent) {
  Outcome outcome;
  attempt(outcome, [&] {
    outcome.userMessage = store.addMessage(conversation, parent, store::Role::User, sentQuestion());
  });
  if (outcome.userMessage != 0)
    attempt(outcome, [&] { outcome.answer = store.beginAssistantMessage(outcome.userMessage, "m"); });
  return outcome;
}

// An answer streams under `question`: three checkpoints, its reasoning, then the final text
// with its stats.
inline Outcome runStream(store::ChatStore& store, store::Id question) {
  Outcome outcome;
  attempt(outcome, [&] { outcome.answer = store.beginAssistantMessage(question, "m"); });
  if (outcome.answer == 0) return outcome;
  for (int part = 0; part < 3; ++part) {
    outcome.attemptedTexts << answerText(part);
    attempt(outcome, [&] {
      store.checkpoint(outcome.answer, answerText(part));
      outcome.savedCheckpoints << answerText(part);
    });
  }
  attempt(outcome, [&] {
    store.setReasoning(outcome.answer, QStringLiteral("생각 중"), 1234);
    outcome.reasoningSaved = true;
  });
  outcome.attemptedTexts << finalAnswer();
  attempt(outcome, [&] {
    store.finishAssistantMessage(outcome.answer, finalAnswer(), store::MessageStatus::Complete,
                                 finishedStats());
    outcome.finished = true;
  });
  return outcome;
}

}  // namespace ember::test::fault
