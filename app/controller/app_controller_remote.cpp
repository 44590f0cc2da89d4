// AppController: remote models. The picker lists the models of every server in Settings →
// Connections (asked again on each rescan, off the GUI thread); choosing one sends the chats'
// new answers to that server through RemoteChat, whose signals are the worker's, so the answers
// stream into the same bubbles and are stored with the same stats, the device being
// "remote: <server> (<model>)" and the server's own timings kept beside the measured ones.
#include <QPointer>

#include "controller/app_controller.h"
#include "logging/app_log.h"

namespace ember::app {

void AppController::connectRemoteChat() {
  connect(&remoteChat_, &RemoteChat::pieceReady, this, &AppController::onPiece);
  connect(&remoteChat_, &RemoteChat::reasoningPieceReady, this, &AppController::onReasoningPiece);
  connect(&remoteChat_, &RemoteChat::promptProgress, this, &AppController::onProgress);
  connect(&remoteChat_, &RemoteChat::finished, this, &AppController::onFinished);
  connect(&remoteChat_, &RemoteChat::failed, this, &AppController::onFailed);
  // Each answered model list rebuilds the picker's remote rows.
  connect(connections_.get(), &ConnectionsModel::tested, this, [this] {
    QList<RemoteModelEntry> entries;
    for (int row = 0; row < connections_->rowCount(); ++row) {
      const Connection& c = connections_->at(row);
      if (!c.reachable) continue;
      for (const QString& model : c.models)
        entries.append({c.id, c.name, c.baseUrl, model, 0});
    }
    models_.setRemoteModels(entries);
  });
}

void AppController::refreshRemoteModels() {
  connections_->reload();
  for (int row = 0; row < connections_->rowCount(); ++row) connections_->test(row);
}

void AppController::useRemoteModel(int row) {
  const RemoteModelEntry* found = models_.remoteAt(row);
  if (!found) return;
  const RemoteModelEntry entry = *found;
  QPointer<AppController> self(this);
  connections_->loadKey(entry.connectionId, [self, entry](QString key, QString error) {
    if (!self) return;
    if (!error.isEmpty()) {
      self->setNotice(tr("The key of %1 could not be read: %2").arg(entry.server, error));
      return;
    }
    self->remote_ = RemoteTarget{entry.server, entry.baseUrl, key, entry.model};
    log::info(QStringLiteral("using remote model %1 of %2 (%3)")
                  .arg(entry.model, entry.server, entry.baseUrl));
    emit self->modelChanged();
    self->sendQueuedIfReady();
  });
}

QString AppController::answerModel() const { return remote_ ? remote_->model : modelPath_; }

}  // namespace ember::app
