#include "worker/inference_worker.h"

#include <QThread>
#include <exception>

#include "ember/error.h"

namespace ember::app {

void registerWorkerMetaTypes() {
  qRegisterMetaType<WorkerRequest>();
  qRegisterMetaType<LoadedModel>();
  qRegisterMetaType<EngineOptions>();
  qRegisterMetaType<RequestStats>();
  qRegisterMetaType<PromptTokenCount>();
}

InferenceWorker::InferenceWorker(QObject* parent) : QObject(parent) {
  stepTimer_ = new QTimer(this);
  stepTimer_->setInterval(0);  // one step per pass of the event loop
  connect(stepTimer_, &QTimer::timeout, this, &InferenceWorker::stepOnce);
}

InferenceWorker::~InferenceWorker() = default;

void InferenceWorker::loadModel(const EngineOptions& options) {
  const QString path = QString::fromStdString(options.modelPath);
  failAllRunning(tr("The model was changed before the answer finished."));
  stepTimer_->stop();
  engine_.reset();  // frees the old weights and KV pool before the new ones are mapped
  emit loadProgress(tr("Loading %1").arg(path));
  try {
    engine_ = Engine::load(options);
  } catch (const std::exception& e) {  // ember::Error and allocation failures alike
    engine_.reset();
    emit loadFailed(path, QString::fromUtf8(e.what()));
    return;
  }
  LoadedModel model;
  model.info = engine_->info();
  model.vocabSize = static_cast<qint64>(engine_->vocabSize());
  emit loaded(model);
}

void InferenceWorker::submit(const WorkerRequest& request) {
  const QString key = request.key;
  if (!engine_) {
    emit failed(key, tr("No model is loaded."));
    return;
  }
  if (running_.contains(key)) {
    emit failed(key, tr("A request with this key is already running."));
    return;
  }
  GenerationRequest generation;
  generation.messages = request.messages;
  generation.sampling = request.sampling;
  Running entry;
  entry.sinceSubmit.start();
  running_.insert(key, entry);
  // The sink runs on this thread, inside addRequest/step; it turns events into queued signals.
  auto sink = [this, key](const RequestEvent& event) {
    const auto it = running_.constFind(key);
    if (it == running_.cend()) return;  // already reported (failed or replaced)
    const double ms = double(it->sinceSubmit.nsecsElapsed()) / 1e6;
    if (event.kind == RequestEvent::Kind::Text) {
      if (event.reasoning)
        emit reasoningPieceReady(key, QString::fromStdString(event.text), ms);
      else
        emit pieceReady(key, QString::fromStdString(event.text), ms);
      return;
    }
    if (event.kind == RequestEvent::Kind::Progress) {
      emit promptProgress(key, event.promptDone, event.promptTokens, event.cachedPromptTokens,
                          event.waiting, ms);
      return;
    }
    if (event.kind != RequestEvent::Kind::Finished) return;
    running_.remove(key);
    const RequestStats stats = event.stats ? *event.stats : RequestStats{};
    if (stats.finishReason == FinishReason::Error)
      emit failed(key, QString::fromStdString(stats.error));
    else
      emit finished(key, stats);
  };
  try {
    const RequestId id = engine_->addRequest(std::move(generation), sink);
    if (running_.contains(key)) running_[key].id = id;
  } catch (const std::exception& e) {
    running_.remove(key);
    emit failed(key, QString::fromUtf8(e.what()));
    return;
  }
  if (!running_.isEmpty() && !stepTimer_->isActive()) stepTimer_->start();
}

void InferenceWorker::countTokens(quint64 generation, const WorkerRequest& request) {
  if (!engine_) {
    emit tokensCounted(generation, {}, tr("No model is loaded."));
    return;
  }
  GenerationRequest generationRequest;
  generationRequest.messages = request.messages;
  generationRequest.sampling = request.sampling;
  try {
    emit tokensCounted(generation, engine_->countPromptTokens(generationRequest), {});
  } catch (const std::exception& e) {
    emit tokensCounted(generation, {}, QString::fromUtf8(e.what()));
  }
}

void InferenceWorker::abort(const QString& key) {
  const auto it = running_.constFind(key);
  if (it != running_.cend() && engine_) engine_->abort(it->id);
}

void InferenceWorker::abortAll() {
  if (!engine_) return;
  for (const Running& r : std::as_const(running_)) engine_->abort(r.id);
}

void InferenceWorker::stepOnce() {
  if (stopRequested_.load() || !engine_ || !engine_->hasWork()) {
    stepTimer_->stop();
    return;
  }
  try {
    engine_->step();
  } catch (const std::exception& e) {
    // A failed step leaves the running requests in an unknown state: they are aborted and
    // reported as failed (the engine itself stays loaded for the next request).
    failAllRunning(tr("Generation failed: %1").arg(QString::fromUtf8(e.what())));
  }
  if (!engine_->hasWork()) stepTimer_->stop();
}

void InferenceWorker::failAllRunning(const QString& message) {
  const QList<QString> keys = running_.keys();
  if (engine_)
    for (const Running& r : std::as_const(running_)) engine_->abort(r.id);
  running_.clear();
  for (const QString& key : keys) emit failed(key, message);
}

InferenceThread::InferenceThread(QObject* parent) : QObject(parent) {
  registerWorkerMetaTypes();
  thread_ = new QThread(this);
  thread_->setObjectName(QStringLiteral("ember-inference"));
  worker_ = new InferenceWorker;  // no parent: it moves to the thread
  worker_->moveToThread(thread_);
  // Deleted on its own thread as the thread's event loop winds down (the engine with it).
  connect(thread_, &QThread::finished, worker_, &QObject::deleteLater);
  thread_->start();
}

InferenceThread::~InferenceThread() {
  worker_->requestStop();
  thread_->quit();
  thread_->wait();
}

}  // namespace ember::app
