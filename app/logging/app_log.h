#pragma once
// The app's log: a rotating file (spdlog) under <data folder>/logs/ember.log, also receiving Qt's
// own messages (qDebug/qWarning/QML errors) through qInstallMessageHandler.
#include <QString>

namespace ember::app::log {

// Starts file logging in `folder` (created when missing). Safe to call once; before it (and if
// the folder cannot be written) messages go to stderr only.
void init(const QString& folder);
void shutdown();
QString filePath();

void info(const QString& message);
void warn(const QString& message);
void error(const QString& message);

// One line per finished request: id, outcome and the latency of each stage.
struct RequestTimings {
  QString requestId;
  QString outcome;  // finish reason, or "failed: ..."
  double queueWaitMs = 0, tokenizeMs = 0, prefillMs = 0, ttftMs = 0, totalMs = 0;
  double decodeTokensPerSecond = 0;
  qint64 promptTokens = 0, generatedTokens = 0;
};
void request(const RequestTimings& t);

}  // namespace ember::app::log
