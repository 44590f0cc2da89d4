#include "connections/remote_chat.h"

#include <QPointer>
#include <exception>

namespace ember::app {

QString remoteDeviceLabel(const QString& server, const QString& model) {
  return QStringLiteral("remote: %1 (%2)").arg(server, model);
}

RemoteChat::RemoteChat(QObject* parent) : QObject(parent) {}

RemoteChat::~RemoteChat() {
  *alive_ = false;  // events still queued are dropped
  running_.clear();
  generators_.clear();  // each one cancels what is open and joins its thread
}

std::shared_ptr<openai::RemoteGenerator> RemoteChat::generatorFor(const RemoteTarget& target) {
  const QString id = target.baseUrl + QLatin1Char('\n') + target.apiKey;
  if (auto it = generators_.constFind(id); it != generators_.cend()) return *it;
  openai::RemoteServerOptions o;
  o.name = target.server.toStdString();
  o.baseUrl = target.baseUrl.toStdString();
  o.apiKey = target.apiKey.toStdString();
  auto generator = std::make_shared<openai::RemoteGenerator>(std::move(o));
  generators_.insert(id, generator);
  return generator;
}

void RemoteChat::submit(const WorkerRequest& request, const RemoteTarget& target) {
  const QString key = request.key;
  if (running_.contains(key)) {
    emit failed(key, tr("A request with this key is already running."));
    return;
  }
  GenerationRequest generation;
  generation.messages = request.messages;
  generation.sampling = request.sampling;
  generation.model = target.model.toStdString();
  Running entry;
  entry.generator = generatorFor(target);
  entry.sinceSubmit.start();
  running_.insert(key, entry);
  // Events arrive on the generator's thread; they are handed to this object's thread in order.
  QPointer<RemoteChat> self(this);
  std::shared_ptr<bool> alive = alive_;
  try {
    const RequestId id = entry.generator->submit(
        std::move(generation), [self, alive, key](const RequestEvent& e) {
          if (!*alive) return;
          // The event's stats pointer is valid only during this call: the stats travel by value.
          std::shared_ptr<const RequestStats> stats =
              e.stats ? std::make_shared<const RequestStats>(*e.stats) : nullptr;
          QMetaObject::invokeMethod(
              self.data(), [self, alive, key, e, stats] {
                RequestEvent event = e;
                event.stats = stats.get();
                if (*alive && self) self->onEvent(key, event);
              },
              Qt::QueuedConnection);
        });
    if (running_.contains(key)) running_[key].id = id;
  } catch (const std::exception& e) {  // a request the client refuses (logits observer)
    running_.remove(key);
    emit failed(key, QString::fromUtf8(e.what()));
  }
}

void RemoteChat::onEvent(const QString& key, const RequestEvent& event) {
  const auto it = running_.constFind(key);
  if (it == running_.cend()) return;
  const double ms = double(it->sinceSubmit.nsecsElapsed()) / 1e6;
  switch (event.kind) {
    case RequestEvent::Kind::Text:
      if (event.reasoning)
        emit reasoningPieceReady(key, QString::fromStdString(event.text), ms);
      else
        emit pieceReady(key, QString::fromStdString(event.text), ms);
      return;
    case RequestEvent::Kind::Progress:
      emit promptProgress(key, event.promptDone, event.promptTokens, event.cachedPromptTokens,
                          event.waiting, ms);
      return;
    case RequestEvent::Kind::Finished: {
      running_.remove(key);
      const RequestStats stats = event.stats ? *event.stats : RequestStats{};
      if (stats.finishReason == FinishReason::Error)
        emit failed(key, QString::fromStdString(stats.error));
      else
        emit finished(key, stats);
      return;
    }
  }
}

void RemoteChat::abort(const QString& key) {
  const auto it = running_.constFind(key);
  if (it != running_.cend() && it->id) it->generator->abort(it->id);
}

}  // namespace ember::app
