#pragma once
// InferenceWorker owns the Engine and lives on its own QThread (the Qt worker-object pattern).
// The GUI thread talks to it only through queued signals/slots, in both directions, and it emits
// values only (request keys, text pieces, stats), never pointers into GUI objects.
//
// Generation is driven by a zero-interval timer: one Engine::step() per timer tick, so the event
// loop runs between steps and an abort() (or a new submit) queued by the GUI is applied before the
// next step. Several requests run at once (EngineOptions::maxSequences).
//
// Lifetime: see InferenceThread, which creates the worker on its thread and, on destruction,
// raises the stop flag, quits the thread and waits for it.
#include <QElapsedTimer>
#include <QHash>
#include <QObject>
#include <QTimer>
#include <atomic>
#include <memory>

#include "worker/worker_types.h"

namespace ember::app {

class InferenceWorker : public QObject {
  Q_OBJECT
 public:
  explicit InferenceWorker(QObject* parent = nullptr);
  ~InferenceWorker() override;

  // Set from any thread: the step loop stops before its next step (used at shutdown).
  void requestStop() { stopRequested_.store(true); }

 public slots:
  // Replaces the current model (requests still running on it fail with a message first).
  void loadModel(const ember::EngineOptions& options);
  void submit(const ember::app::WorkerRequest& request);
  void abort(const QString& key);  // finishes it as cancelled at the next step
  void abortAll();
  // Counts the prompt the request would take (the context meter); answered with tokensCounted
  // carrying the same `generation`. Runs between steps, off the GUI thread.
  void countTokens(quint64 generation, const ember::app::WorkerRequest& request);

 signals:
  void loadProgress(const QString& stage);
  void loaded(const ember::app::LoadedModel& model);
  void loadFailed(const QString& path, const QString& message);
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
  void stepOnce();
  void failAllRunning(const QString& message);

  std::unique_ptr<Engine> engine_;
  QTimer* stepTimer_ = nullptr;
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
