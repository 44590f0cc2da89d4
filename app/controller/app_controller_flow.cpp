// AppController: the composer's flow around send (a message typed while an answer streams or
// the model loads waits in a one-message queue) and the window geometry kept between runs.
#include <QGuiApplication>
#include <QJsonArray>
#include <QScreen>

#include "controller/app_controller.h"

namespace ember::app {

QString AppController::sendOrQueue(const QString& text) {
  if (text.trimmed().isEmpty()) return tr("Type a message first.");
  const bool busy = generating() || load_.loading || !storeReady();
  if (!busy) {
    if (!composerBlockReason().isEmpty()) return composerBlockReason();
    return send(text) ? QString() : tr("The message could not be sent (see the notice above).");
  }
  if (queued_.conversationId == currentConversation_ && !queued_.text.isEmpty() &&
      (currentConversation_ != 0 || !storeReady()))
    return tr("A message is already waiting to be sent: wait for it, or cancel it.");
  if (!queued_.text.isEmpty() && queued_.conversationId != currentConversation_)
    return tr("A message waits in another chat: it goes first.");
  if (currentConversation_ == 0 && storeReady()) newConversation();
  queued_ = {currentConversation_, text};
  emit queuedMessageChanged();
  return {};
}

void AppController::cancelQueued() {
  if (queued_.text.isEmpty()) return;
  queued_ = {};
  emit queuedMessageChanged();
}

// Called when an answer ends and when a model has loaded: the waiting message goes out once its
// chat is the one shown and free (sending into a hidden chat would surprise the user).
void AppController::sendQueuedIfReady() {
  if (queued_.text.isEmpty() || queued_.conversationId != currentConversation_) return;
  if (!storeReady()) return;  // after the open (storeOpened sends it)
  if (generating() || !composerBlockReason().isEmpty()) return;
  const QString text = queued_.text;
  queued_ = {};
  emit queuedMessageChanged();
  send(text);
}

QVariantList AppController::savedWindowGeometry() const {
  QJsonArray saved;
  try {
    saved = appSetting(QStringLiteral("windowGeometry")).toArray();
  } catch (const std::exception&) {
    return {};
  }
  if (saved.size() != 4) return {};
  const QRect rect(saved[0].toInt(), saved[1].toInt(), saved[2].toInt(), saved[3].toInt());
  if (rect.width() <= 0 || rect.height() <= 0) return {};
  // Only where it is still on a screen (a monitor may have gone since); without a GUI (tests)
  // there are no screens to check against.
  if (!qobject_cast<QGuiApplication*>(QCoreApplication::instance()))
    return {rect.x(), rect.y(), rect.width(), rect.height()};
  for (const QScreen* screen : QGuiApplication::screens())
    if (screen->availableGeometry().intersects(rect))
      return {rect.x(), rect.y(), rect.width(), rect.height()};
  return {};
}

bool AppController::savedWindowMaximized() const {
  try {
    return appSetting(QStringLiteral("windowMaximized")).toBool();
  } catch (const std::exception&) {
    return false;
  }
}

void AppController::saveWindowGeometry(int x, int y, int width, int height, bool maximized) {
  guarded([&] {
    if (!maximized)
      saveAppSetting(QStringLiteral("windowGeometry"), QJsonArray{x, y, width, height});
    saveAppSetting(QStringLiteral("windowMaximized"), maximized);
  });
}

}  // namespace ember::app
