#pragma once
// RemoteChat: the app's chats on a remote model. The same signals as InferenceWorker (text
// pieces, reasoning pieces, prompt progress, finished with stats, failed with the reason), so
// the controller streams a remote answer into the same bubbles and stores the same stats. One
// RemoteGenerator per server (its own thread drives the transfers); events come back to this
// object's thread queued. A failed answer keeps the text that arrived: the controller has it from
// the pieces, and the message says why (cut stream, refused key, timeout, unreachable).
#include <QElapsedTimer>
#include <QHash>
#include <QObject>
#include <memory>

#include "client/remote_generator.h"
#include "worker/worker_types.h"

namespace ember::app {

// The server and model a chat uses.
struct RemoteTarget {
  QString connectionId;  // the Settings → Connections row it came from
  QString server;   // the connection's name
  QString baseUrl;  // http://host:8000/v1
  QString apiKey;   // empty: none
  QString model;    // the id from the server's /v1/models
  int contextLength = 0;  // as the server reported it; 0: it did not say
};

// "remote: <server> (<model>)": the device a remote answer's stats name.
QString remoteDeviceLabel(const QString& server, const QString& model);

class RemoteChat : public QObject {
  Q_OBJECT
 public:
  explicit RemoteChat(QObject* parent = nullptr);
  ~RemoteChat() override;  // open answers end as cancelled; no signal after this

  void submit(const WorkerRequest& request, const RemoteTarget& target);
  void abort(const QString& key);
  bool running(const QString& key) const { return running_.contains(key); }

 signals:
  void pieceReady(const QString& key, const QString& text, double msSinceSubmit);
  void reasoningPieceReady(const QString& key, const QString& text, double msSinceSubmit);
  void promptProgress(const QString& key, int done, int total, int cached, bool waiting,
                      double msSinceSubmit);
  void finished(const QString& key, const ember::RequestStats& stats);
  void failed(const QString& key, const QString& message);

 private:
  struct Running {
    std::shared_ptr<openai::RemoteGenerator> generator;
    RequestId id = 0;
    QElapsedTimer sinceSubmit;
  };
  std::shared_ptr<openai::RemoteGenerator> generatorFor(const RemoteTarget& target);
  void onEvent(const QString& key, const RequestEvent& event);

  QHash<QString, std::shared_ptr<openai::RemoteGenerator>> generators_;  // by url + key
  QHash<QString, Running> running_;
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
};

}  // namespace ember::app
