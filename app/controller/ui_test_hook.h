#pragma once
// A hook for the end-to-end UI test, active only when EMBER_TEST_AUTOSEND is set: once the model
// is loaded it sends that text, waits for the answer to be committed, reads the last bubble's text
// and stats line from the QML items themselves, writes them to $EMBER_TEST_OUTPUT_DIR/report.json
// with a screenshot (screenshot.png), and quits. Exit code 0 when a report was written.
// EMBER_TEST_MAX_TOKENS bounds the answer; EMBER_TEST_SHOW_PANELS=1 adds panels.png with the
// settings panel and the answer's details open.
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
  void writeReportAndQuit(qint64 messageId);
  void fail(const QString& why);

  AppController* controller_;
  QQmlApplicationEngine* engine_;
  QString text_;
  QString outputDir_;
  bool sent_ = false;
};

}  // namespace ember::app
