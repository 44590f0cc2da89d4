#include "controller/ui_test_hook.h"

#include <QCoreApplication>
#include <QDir>
#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>
#include <QQmlApplicationEngine>
#include <QQuickItem>
#include <QQuickWindow>
#include <QTimer>

#include "controller/app_controller.h"
#include "logging/app_log.h"

namespace ember::app {
namespace {

// The visual tree, depth first (delegates of a ListView are visual children of its contentItem,
// not necessarily QObject children, so findChildren() would miss them).
void collect(QQuickItem* item, const QStringList& names, QList<QQuickItem*>* out) {
  if (names.contains(item->objectName())) out->append(item);
  for (QQuickItem* child : item->childItems()) collect(child, names, out);
}
void collect(QQuickItem* item, const QString& name, QList<QQuickItem*>* out) {
  collect(item, QStringList{name}, out);
}

// The text a bubble shows, as plain text: its visible parts (prose, code boxes) in order.
QString bubblePlainText(QQuickWindow* window, qint64 messageId) {
  QList<QQuickItem*> bubbles;
  collect(window->contentItem(), QStringLiteral("bubble"), &bubbles);
  for (QQuickItem* bubble : bubbles) {
    if (bubble->property("messageId").toLongLong() != messageId) continue;
    QList<QQuickItem*> parts;
    collect(bubble, QStringList{QStringLiteral("bubbleText"), QStringLiteral("codeText")}, &parts);
    QStringList texts;
    for (QQuickItem* part : parts) {
      if (!part->isVisible()) continue;
      QString plain;
      QMetaObject::invokeMethod(part, "getText", Q_RETURN_ARG(QString, plain), Q_ARG(int, 0),
                                Q_ARG(int, part->property("length").toInt()));
      texts << plain;
    }
    return texts.join(QLatin1Char('\n'));
  }
  return {};
}

QQuickItem* lastVisible(QQuickWindow* window, const QString& name) {
  QList<QQuickItem*> found;
  collect(window->contentItem(), name, &found);
  QQuickItem* best = nullptr;
  for (QQuickItem* item : found)  // the lowest one on screen is the newest bubble
    if (item->isVisible() && (!best || item->mapToScene({0, 0}).y() > best->mapToScene({0, 0}).y()))
      best = item;
  return best;
}

}  // namespace

UiTestHook* UiTestHook::installIfRequested(AppController* controller,
                                           QQmlApplicationEngine* engine) {
  const QString text = qEnvironmentVariable("EMBER_TEST_AUTOSEND");
  if (text.isEmpty()) return nullptr;
  QString dir = qEnvironmentVariable("EMBER_TEST_OUTPUT_DIR");
  if (dir.isEmpty()) dir = QDir::currentPath();
  return new UiTestHook(controller, engine, text, dir);
}

UiTestHook::UiTestHook(AppController* controller, QQmlApplicationEngine* engine, QString text,
                       QString outputDir)
    : QObject(controller), controller_(controller), engine_(engine), text_(std::move(text)),
      outputDir_(std::move(outputDir)),
      secondText_(qEnvironmentVariable("EMBER_TEST_AUTOSEND_SECOND")) {
  connect(controller_, &AppController::modelChanged, this, &UiTestHook::onModelChanged);
  connect(controller_, &AppController::answerFinished, this, &UiTestHook::onAnswerFinished);
  connect(controller_, &AppController::pieceReceived, this, &UiTestHook::onPiece);
  QTimer::singleShot(180000, this, [this] { fail(QStringLiteral("no answer within 180 s")); });
  QTimer::singleShot(0, this, &UiTestHook::onModelChanged);  // the model may be loaded already
}

namespace {
// A new chat with the text sent in it; returns the answer's id, or 0 when send() refused it.
qint64 sendInNewChat(AppController* controller, const QString& text) {
  controller->newConversation();
  // A bound on the answer's length keeps the test's run time bounded on a busy machine.
  const QString maxTokens = qEnvironmentVariable("EMBER_TEST_MAX_TOKENS");
  if (!maxTokens.isEmpty() && !controller->setSetting(QStringLiteral("maxTokens"), maxTokens))
    return 0;
  return controller->send(text) ? controller->messages()->lastId() : 0;
}
}  // namespace

void UiTestHook::onModelChanged() {
  if (sent_) return;
  if (!controller_->modelError().isEmpty()) return fail(controller_->modelError());
  if (!controller_->modelLoaded()) return;
  sent_ = true;
  firstAnswer_ = sendInNewChat(controller_, text_);
  firstConversation_ = controller_->currentConversationId();
  if (firstAnswer_ == 0) fail(QStringLiteral("send() refused the message"));
}

void UiTestHook::onPiece(qint64, qint64 messageId) {
  if (secondText_.isEmpty()) return;
  if (messageId == firstAnswer_ && ++firstPieces_ == 3 && secondAnswer_ == 0) {
    secondAnswer_ = sendInNewChat(controller_, secondText_);
    secondConversation_ = controller_->currentConversationId();
    if (secondAnswer_ == 0) fail(QStringLiteral("send() refused the second message"));
  } else if (messageId == secondAnswer_ && ++secondPieces_ == 16 && !shotScheduled_) {
    shotScheduled_ = true;
    QTimer::singleShot(250, this, &UiTestHook::takeConcurrentShot);
  }
}

void UiTestHook::takeConcurrentShot() {
  auto* window = engine_->rootObjects().isEmpty()
                     ? nullptr
                     : qobject_cast<QQuickWindow*>(engine_->rootObjects().first());
  if (!window) return fail(QStringLiteral("no window"));
  const QString shot = QDir(outputDir_).filePath(QStringLiteral("concurrent.png"));
  QDir().mkpath(outputDir_);
  concurrent_ = {{"firstGenerating", controller_->isGenerating(firstConversation_)},
                 {"secondGenerating", controller_->isGenerating(secondConversation_)},
                 {"shownConversation", controller_->currentConversationId()},
                 {"secondConversation", secondConversation_},
                 {"screenshot", window->grabWindow().save(shot) ? shot : QString()}};
  if (finished_.contains(firstAnswer_) && finished_.contains(secondAnswer_))
    onAnswerFinished(secondAnswer_);  // both ended while the picture was due: report now
}

void UiTestHook::onAnswerFinished(qint64 messageId) {
  if (!finished_.contains(messageId)) finished_ << messageId;
  if (!secondText_.isEmpty()) {
    // The report waits for both answers and for the picture of both streaming.
    if (!finished_.contains(firstAnswer_) || !finished_.contains(secondAnswer_)) return;
    if (!shotScheduled_) {
      shotScheduled_ = true;  // too late to show both streaming; the report says so
      takeConcurrentShot();
      return;
    }
    if (concurrent_.isEmpty()) return;  // the picture is due and reports when taken
    messageId = secondAnswer_;
  }
  // Give the scene a few frames to lay out the final text and the stats line.
  QTimer::singleShot(800, this, [this, messageId] { writeReportAndQuit(messageId); });
}

void UiTestHook::writeReportAndQuit(qint64 messageId) {
  auto* window = engine_->rootObjects().isEmpty()
                     ? nullptr
                     : qobject_cast<QQuickWindow*>(engine_->rootObjects().first());
  if (!window) return fail(QStringLiteral("no window"));
  QQuickItem* stats = lastVisible(window, QStringLiteral("statsLine"));
  const int row = controller_->messageRow(messageId);
  QJsonObject report{
      {"messageId", messageId},
      {"modelText", row >= 0 ? controller_->messages()->row(row)->text : QString()},
      {"bubbleText", bubblePlainText(window, messageId)},
      {"statsLine", stats ? stats->property("text").toString() : QString()},
      {"statsVisible", stats != nullptr},
      {"windowTitle", window->title()},
  };
  if (!concurrent_.isEmpty()) report.insert("concurrent", concurrent_);
  QDir().mkpath(outputDir_);
  const QString shot = QDir(outputDir_).filePath(QStringLiteral("screenshot.png"));
  report.insert("screenshot", window->grabWindow().save(shot) ? shot : QString());
  QFile file(QDir(outputDir_).filePath(QStringLiteral("report.json")));
  if (!file.open(QIODevice::WriteOnly)) return fail(QStringLiteral("cannot write the report"));
  file.write(QJsonDocument(report).toJson());
  file.close();
  log::info(QStringLiteral("ui test hook: report written to %1").arg(file.fileName()));
  if (qEnvironmentVariableIsEmpty("EMBER_TEST_SHOW_PANELS")) return QCoreApplication::exit(0);
  // A second picture with the settings panel and the answer's details open.
  QMetaObject::invokeMethod(window, "showPanels", Q_ARG(QVariant, QVariant(messageId)));
  QTimer::singleShot(800, this, [this, window] {
    window->grabWindow().save(QDir(outputDir_).filePath(QStringLiteral("panels.png")));
    // A third one with the model picker open.
    QMetaObject::invokeMethod(window, "showModelPicker");
    QTimer::singleShot(800, this, [this, window] {
      window->grabWindow().save(QDir(outputDir_).filePath(QStringLiteral("models.png")));
      QCoreApplication::exit(0);
    });
  });
}

void UiTestHook::fail(const QString& why) {
  log::error(QStringLiteral("ui test hook: %1").arg(why));
  QCoreApplication::exit(3);
}

}  // namespace ember::app
