#pragma once
// A hook for the end-to-end UI test, active only when EMBER_TEST_AUTOSEND is set: once the model
// is loaded it sends that text, waits for the answer to be committed, reads the last bubble's text
// and stats line from the QML items themselves, writes them to $EMBER_TEST_OUTPUT_DIR/report.json
// with a screenshot (screenshot.png), and quits. Exit code 0 when a report was written.
// EMBER_TEST_MAX_TOKENS bounds the answer; EMBER_TEST_SHOW_PANELS=1 adds panels.png with the
// settings panel and the answer's details open.
//
// EMBER_TEST_AUTOSEND_SECOND adds a second chat generating at the same time: once the first
// answer has streamed a few pieces, a new chat is opened and this text sent there; while both
// stream, concurrent.png is taken (the second chat shown, both marked in the sidebar) and the
// report's "concurrent" object says whether both were still generating then. The report is
// written when both answers are committed.
#include <QJsonObject>
#include <QList>
#include <QObject>
#include <QString>

class QQmlApplicationEngine;

namespace ember::app {

class AppController;

class UiTestHook : public QObject {
  Q_OBJECT
 public:
  // Returns null when the environment does not ask for it.
  static UiTestHook* installIfRequested(AppController* controller, QQmlApplicationEngine* engine);

 private:
  UiTestHook(AppController* controller, QQmlApplicationEngine* engine, QString text,
             QString outputDir);
  void onModelChanged();
  void onAnswerFinished(qint64 messageId);
  void onPiece(qint64 conversationId, qint64 messageId);
  void takeConcurrentShot();
  void writeReportAndQuit(qint64 messageId);
  void fail(const QString& why);

  AppController* controller_;
  QQmlApplicationEngine* engine_;
  QString text_;
  QString outputDir_;
  bool sent_ = false;
  // The concurrent run (EMBER_TEST_AUTOSEND_SECOND).
  QString secondText_;
  qint64 firstConversation_ = 0, firstAnswer_ = 0, secondConversation_ = 0, secondAnswer_ = 0;
  int firstPieces_ = 0, secondPieces_ = 0;
  bool shotScheduled_ = false;
  QList<qint64> finished_;
  QJsonObject concurrent_;  // what was seen when concurrent.png was taken
};

}  // namespace ember::app
