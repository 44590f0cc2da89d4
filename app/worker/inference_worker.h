#pragma once
// InferenceWorker: the Qt face of an EngineHost (the engine on its own thread). It lives on its
// own QThread (the Qt worker-object pattern) so that a model load never blocks the GUI; the GUI
// thread talks to it only through queued signals/slots, in both directions, and it emits values
// only (request keys, text pieces, stats), never pointers into GUI objects.
//
// The host steps the engine; an abort() or a new submit is applied before its next step. Several
// requests run at once (EngineOptions::maxSequences). Other clients (the local API server) submit
// to the same host(), so their requests are batched with the chats' and share the prefix cache.
//
// Lifetime: see InferenceThread, which creates the worker on its thread and, on destruction,
// raises the stop flag, quits the thread and waits for it.
#include <QElapsedTimer>
#include <QHash>
#include <QObject>
#include <atomic>
#include <memory>
#include <mutex>

#include "ember/engine_host.h"

#include "worker/worker_types.h"

namespace ember::app {

class InferenceWorker : public QObject {
  Q_OBJECT
 public:
  explicit InferenceWorker(QObject* parent = nullptr);
  ~InferenceWorker() override;

  // Set from any thread: no more signals about requests (used at shutdown).
  void requestStop() { stopRequested_.store(true); }
  // The engine's host, thread-safe, for other clients of the same engine.
  EngineHost& host() { return *host_; }

 public slots:
  // Replaces the current model (requests still running on it fail with a message first).
  void loadModel(const ember::EngineOptions& options);
  // The same, stopped (loadCancelled) when the caller calls control->cancel() from its thread,
  // even before this slot runs. The worker sets control->onProgress (loadFraction signals).
  void loadModelWith(const ember::EngineOptions& options,
                     const std::shared_ptr<ember::LoadControl>& control);
  void submit(const ember::app::WorkerRequest& request);
  void abort(const QString& key);  // finishes it as cancelled at the next step
  void abortAll();
  // Counts the prompt the request would take (the context meter); answered with tokensCounted
  // carrying the same `generation`. Runs between steps, off the GUI thread.
  void countTokens(quint64 generation, const ember::app::WorkerRequest& request);

 signals:
  void loadProgress(const QString& stage);
  // The load of `path` is `fraction` (0..1) done: sent each time it passes a whole percent
  // (increasing), 1 just before loaded().
  void loadFraction(const QString& path, double fraction);
  void loaded(const ember::app::LoadedModel& model);
  void loadFailed(const QString& path, const QString& message);
  // cancelLoad() stopped the load of `path`; no model is loaded now.
  void loadCancelled(const QString& path);
  // The first piece also tells when the request started to produce text.
  void pieceReady(const QString& key, const QString& text, double msSinceSubmit);
  // A piece the engine marked as the model's reasoning (RequestEvent::reasoning).
  void reasoningPieceReady(const QString& key, const QString& text, double msSinceSubmit);
  // The prompt is being read: `done` of `total` tokens in the cache (`cached` of them reused),
  // or, with `waiting`, the request is queued behind others.
  void promptProgress(const QString& key, int done, int total, int cached, bool waiting,
                      double msSinceSubmit);
  void tokensCounted(quint64 generation, const ember::PromptTokenCount& count,
                     const QString& error);
  void finished(const QString& key, const ember::RequestStats& stats);
  void failed(const QString& key, const QString& message);

 private:
  struct Running {
    RequestId id = 0;
    QElapsedTimer sinceSubmit;
  };
  void onEvent(const QString& key, const RequestEvent& event);


  std::unique_ptr<EngineHost> host_;

  std::mutex runningMutex_;  // running_ is read by the host's thread (events) and this one
  QHash<QString, Running> running_;
  std::atomic<bool> stopRequested_{false};
};

// Owns the thread and the worker on it. Signals to the worker are connected by the caller with
// Qt::QueuedConnection (automatic connections across threads are queued too).
class InferenceThread : public QObject {
  Q_OBJECT
 public:
  explicit InferenceThread(QObject* parent = nullptr);
  ~InferenceThread() override;  // stop flag, quit(), wait(); the worker is deleted on its thread
  InferenceWorker* worker() const { return worker_; }

 private:
  class QThread* thread_ = nullptr;
  InferenceWorker* worker_ = nullptr;
};

void registerWorkerMetaTypes();

}  // namespace ember::app
