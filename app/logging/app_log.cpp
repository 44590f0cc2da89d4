#include "logging/app_log.h"

#include <QDir>
#include <QMessageLogContext>
#include <spdlog/sinks/rotating_file_sink.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

namespace ember::app::log {
namespace {

std::shared_ptr<spdlog::logger> g_logger;
QString g_path;
QtMessageHandler g_previousHandler = nullptr;

spdlog::logger& logger() {
  if (!g_logger) g_logger = spdlog::stderr_color_mt("ember");
  return *g_logger;
}

void qtMessageHandler(QtMsgType type, const QMessageLogContext& context, const QString& text) {
  const std::string where = context.file ? std::string(context.file) + ":" +
                                               std::to_string(context.line) + " "
                                         : std::string();
  const std::string line = "[qt] " + where + text.toStdString();
  switch (type) {
    case QtDebugMsg: logger().debug(line); break;
    case QtInfoMsg: logger().info(line); break;
    case QtWarningMsg: logger().warn(line); break;
    case QtCriticalMsg:
    case QtFatalMsg: logger().error(line); break;
  }
  if (type == QtFatalMsg && g_previousHandler) g_previousHandler(type, context, text);
}

}  // namespace

void init(const QString& folder) {
  if (g_path.size()) return;
  QDir().mkpath(folder);
  g_path = QDir(folder).filePath(QStringLiteral("ember.log"));
  try {
    auto file = std::make_shared<spdlog::sinks::rotating_file_sink_mt>(
        g_path.toStdString(), 5 * 1024 * 1024, 3);  // 5 MB, three old files kept
    auto console = std::make_shared<spdlog::sinks::stderr_color_sink_mt>();
    console->set_level(spdlog::level::warn);
    spdlog::drop("ember");
    g_logger = std::make_shared<spdlog::logger>("ember", spdlog::sinks_init_list{file, console});
    g_logger->set_level(spdlog::level::debug);
    g_logger->flush_on(spdlog::level::info);
  } catch (const spdlog::spdlog_ex& e) {
    logger().warn("cannot write the log file {}: {}", g_path.toStdString(), e.what());
    g_path.clear();
  }
  g_previousHandler = qInstallMessageHandler(qtMessageHandler);
  logger().info("log started");
}

void shutdown() {
  qInstallMessageHandler(g_previousHandler);
  if (g_logger) g_logger->flush();
}

QString filePath() { return g_path; }

void info(const QString& message) { logger().info(message.toStdString()); }
void warn(const QString& message) { logger().warn(message.toStdString()); }
void error(const QString& message) { logger().error(message.toStdString()); }

void request(const RequestTimings& t) {
  logger().info(
      "request {} {}: queue {:.1f} ms, tokenize {:.1f} ms, prefill {:.1f} ms, ttft {:.1f} ms, "
      "total {:.1f} ms, decode {:.1f} tok/s, prompt {} tokens, generated {} tokens",
      t.requestId.toStdString(), t.outcome.toStdString(), t.queueWaitMs, t.tokenizeMs,
      t.prefillMs, t.ttftMs, t.totalMs, t.decodeTokensPerSecond, t.promptTokens,
      t.generatedTokens);
}

}  // namespace ember::app::log
