// AppController: remote models. The picker lists the models of every server in Settings →
// Connections (asked again on each rescan, off the GUI thread), with a line per server that is
// being asked or did not answer; choosing one sends the chats' new answers to that server through
// RemoteChat, whose signals are the worker's, so the answers stream into the same bubbles and are
// stored with the same stats, the device being "remote: <server> (<model>)" and the server's own
// timings kept beside the measured ones. The choice is remembered for the next start, and each
// chat remembers the remote model that answered it, taken up again when the chat is opened.
#include <QJsonObject>
#include <QPointer>

#include "controller/app_controller.h"
#include "logging/app_log.h"

namespace ember::app {
namespace {

constexpr auto kLastRemoteModel = "lastRemoteModel";  // app setting: {connection, server, model}

QString conversationModelKey(qint64 conversationId) {
  return QStringLiteral("remoteModelOf/%1").arg(conversationId);
}

QJsonObject choiceJson(const RemoteTarget& target) {
  return {{"connection", target.connectionId}, {"server", target.server}, {"model", target.model}};
}

int contextOf(const Connection& c, const QString& model) {
  const qsizetype i = c.models.indexOf(model);
  return i >= 0 && i < c.modelContexts.size() ? c.modelContexts[i] : 0;
}

}  // namespace

void AppController::connectRemoteChat() {
  connect(&remoteChat_, &RemoteChat::pieceReady, this, &AppController::onPiece);
  connect(&remoteChat_, &RemoteChat::reasoningPieceReady, this, &AppController::onReasoningPiece);
  connect(&remoteChat_, &RemoteChat::promptProgress, this, &AppController::onProgress);
  connect(&remoteChat_, &RemoteChat::finished, this, &AppController::onFinished);
  connect(&remoteChat_, &RemoteChat::failed, this, &AppController::onFailed);
  connect(connections_.get(), &ConnectionsModel::tested, this, &AppController::onConnectionsTested);
  // "asking <server>…" appears when a test starts, and goes when the list is read again.
  connect(connections_.get(), &QAbstractItemModel::dataChanged, this,
          &AppController::updateRemoteServerLines);
  connect(connections_.get(), &QAbstractItemModel::modelReset, this,
          &AppController::updateRemoteServerLines);
}

// Each answered model list rebuilds the picker's remote rows; the model in use learns its
// context length, or the user learns that its server is gone.
void AppController::onConnectionsTested() {
  QList<RemoteModelEntry> entries;
  for (int row = 0; row < connections_->rowCount(); ++row) {
    const Connection& c = connections_->at(row);
    if (!c.reachable) continue;
    for (const QString& model : c.models)
      entries.append({c.id, c.name, c.baseUrl, model, contextOf(c, model)});
  }
  models_.setRemoteModels(entries);
  updateRemoteServerLines();
  if (!remote_) return;
  const int row = connections_->rowOf(remote_->connectionId);
  if (row < 0) {
    setNotice(tr("%1 is no longer in Settings → Connections: choose another model for new answers.")
                  .arg(remote_->server));
    return;
  }
  const Connection& c = connections_->at(row);
  if (!c.tested || c.testing) return;
  if (!c.reachable) {
    setNotice(tr("%1 did not answer (%2): answers on %3 fail until it is back, or choose another "
                 "model.").arg(c.name, c.status, remote_->model));
  } else if (!c.models.contains(remote_->model)) {
    setNotice(tr("%1 no longer offers %2: choose another model.").arg(c.name, remote_->model));
  } else if (const int context = contextOf(c, remote_->model); context != remote_->contextLength) {
    remote_->contextLength = context;
    emit modelChanged();  // the context meter shows it
  }
}

void AppController::updateRemoteServerLines() {
  QStringList lines;
  for (int row = 0; row < connections_->rowCount(); ++row) {
    const Connection& c = connections_->at(row);
    if (c.testing)
      lines << tr("asking %1…").arg(c.name);
    else if (c.tested && !c.reachable)
      lines << tr("%1 did not answer: %2").arg(c.name, c.status);
    else if (c.tested && c.models.isEmpty())
      lines << tr("%1 offers no models").arg(c.name);
  }
  if (lines == remoteServerLines_) return;
  remoteServerLines_ = lines;
  emit remoteServersChanged();
}

void AppController::refreshRemoteModels() {
  connections_->reload();
  for (int row = 0; row < connections_->rowCount(); ++row) connections_->test(row);
}

void AppController::useRemoteModel(int row) {
  if (const RemoteModelEntry* found = models_.remoteAt(row))
    chooseRemote(found->connectionId, found->server, found->model);
}

bool AppController::chooseRemote(const QString& connectionId, const QString& server,
                                 const QString& model) {
  const int row = connections_->rowOf(connectionId);
  if (row < 0) {
    setNotice(tr("%1 on %2 was in use, but %2 is no longer in Settings → Connections: choose a "
                 "model.").arg(model, server));
    return false;
  }
  const Connection& c = connections_->at(row);
  const RemoteTarget target{c.id, c.name, c.baseUrl, {}, model, contextOf(c, model)};
  QPointer<AppController> self(this);
  connections_->loadKey(connectionId, [self, target](QString key, QString error) {
    if (!self) return;
    if (!error.isEmpty()) {
      self->setNotice(tr("The key of %1 could not be read: %2").arg(target.server, error));
      return;
    }
    self->remote_ = target;
    self->remote_->apiKey = key;
    // A test may have answered while the key was read.
    if (const int now = self->connections_->rowOf(target.connectionId); now >= 0)
      if (const int context = contextOf(self->connections_->at(now), target.model); context > 0)
        self->remote_->contextLength = context;
    self->guarded([&] { self->saveAppSetting(kLastRemoteModel, choiceJson(target)); });
    log::info(QStringLiteral("using remote model %1 of %2 (%3)")
                  .arg(target.model, target.server, target.baseUrl));
    emit self->modelChanged();
    self->sendQueuedIfReady();
  });
  return true;
}

bool AppController::restoreRemoteModel() {
  QJsonObject last;
  guarded([&] { last = appSetting(kLastRemoteModel).toObject(); });
  if (last.isEmpty()) return false;
  connections_->reload();
  if (!chooseRemote(last.value("connection").toString(), last.value("server").toString(),
                    last.value("model").toString())) {
    guarded([&] { saveAppSetting(kLastRemoteModel, QJsonValue()); });
    return false;
  }
  refreshRemoteModels();  // is it still there, and how long is its context?
  return true;
}

void AppController::rememberAnswerModel(qint64 conversationId) {
  guarded([&] {
    saveAppSetting(conversationModelKey(conversationId),
                         remote_ ? QJsonValue(choiceJson(*remote_)) : QJsonValue());
  });
}

void AppController::followConversationModel(qint64 conversationId) {
  QJsonObject used;
  guarded([&] { used = appSetting(conversationModelKey(conversationId)).toObject(); });
  if (used.isEmpty()) return;  // answered by a local model (or not yet)
  const QString connection = used.value("connection").toString();
  const QString model = used.value("model").toString();
  if (remote_ && remote_->connectionId == connection && remote_->model == model) return;
  if (chooseRemote(connection, used.value("server").toString(), model)) refreshRemoteModels();
}

QString AppController::answerModel() const { return remote_ ? remote_->model : load_.path; }

}  // namespace ember::app
