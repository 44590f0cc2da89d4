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
  qRegisterMetaType<std::shared_ptr<LoadControl>>();
}

InferenceWorker::InferenceWorker(QObject* parent)
    : QObject(parent), host_(std::make_unique<EngineHost>()) {}

// The host fails what still runs ("shutting down") and joins its thread; no signal goes out then.
InferenceWorker::~InferenceWorker() {
  stopRequested_.store(true);
  host_.reset();
}

void InferenceWorker::loadModel(const EngineOptions& options) {
  loadModelWith(options, std::make_shared<LoadControl>());
}

void InferenceWorker::loadModelWith(const EngineOptions& options,
                                    const std::shared_ptr<LoadControl>& control) {
  const QString path = QString::fromStdString(options.modelPath);
  emit loadProgress(tr("Loading %1").arg(path));
  // Runs on the host's thread; only whole percents go out, so the GUI gets at most 101 events.
  int lastPercent = -1;
  control->onProgress = [this, path, &lastPercent](const LoadProgress& progress) {
    const int percent = static_cast<int>(progress.fraction * 100.0);
    if (percent <= lastPercent || stopRequested_.load()) return;
    lastPercent = percent;
    emit loadFraction(path, progress.fraction);
  };
  LoadedModel model;
  try {
    // Requests still running on the old model finish with an error first (their failed signal).
    model.info = host_->load(options, control.get());
    host_->withEngine([&](Engine* engine) {
      if (engine) model.vocabSize = static_cast<qint64>(engine->vocabSize());
    });
  } catch (const LoadCancelled&) {
    control->onProgress = nullptr;
    emit loadCancelled(path);
    return;
  } catch (const std::exception& e) {  // ember::Error and allocation failures alike
    control->onProgress = nullptr;
    emit loadFailed(path, QString::fromUtf8(e.what()));
    return;
  }
  control->onProgress = nullptr;  // it refers to this frame
  emit loaded(model);
}

void InferenceWorker::submit(const WorkerRequest& request) {
  const QString key = request.key;
  {
    std::lock_guard lock(runningMutex_);
    if (running_.contains(key)) {
      emit failed(key, tr("A request with this key is already running."));
      return;
    }
    Running entry;
    entry.sinceSubmit.start();
    running_.insert(key, entry);
  }
  GenerationRequest generation;
  generation.messages = request.messages;
  generation.sampling = request.sampling;
  try {
    const RequestId id = host_->submit(std::move(generation),
                                       [this, key](const RequestEvent& e) { onEvent(key, e); });
    std::lock_guard lock(runningMutex_);
    if (running_.contains(key)) running_[key].id = id;
  } catch (const std::exception& e) {  // no model, bad settings: nothing was queued
    {
      std::lock_guard lock(runningMutex_);
      running_.remove(key);
    }
    emit failed(key, QString::fromUtf8(e.what()));
  }
}

// On the host's thread: events become queued signals.
void InferenceWorker::onEvent(const QString& key, const RequestEvent& event) {
  double ms = 0;
  {
    std::lock_guard lock(runningMutex_);
    const auto it = running_.constFind(key);
    if (it == running_.cend()) return;
    ms = double(it->sinceSubmit.nsecsElapsed()) / 1e6;
    if (event.kind == RequestEvent::Kind::Finished) running_.remove(key);
  }
  if (stopRequested_.load()) return;
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
  const RequestStats stats = event.stats ? *event.stats : RequestStats{};
  if (stats.finishReason == FinishReason::Error)
    emit failed(key, QString::fromStdString(stats.error));
  else
    emit finished(key, stats);
}

// Counted on the host's thread between steps, with the template and tokenizer the request
// would use.
void InferenceWorker::countTokens(quint64 generation, const WorkerRequest& request) {
  GenerationRequest generationRequest;
  generationRequest.messages = request.messages;
  generationRequest.sampling = request.sampling;
  PromptTokenCount count;
  QString error;
  host_->withEngine([&](Engine* engine) {
    if (!engine) {
      error = tr("No model is loaded.");
      return;
    }
    try {
      count = engine->countPromptTokens(generationRequest);
    } catch (const std::exception& e) {
      error = QString::fromUtf8(e.what());
    }
  });
  emit tokensCounted(generation, count, error);
}

void InferenceWorker::abort(const QString& key) {
  RequestId id = 0;
  {
    std::lock_guard lock(runningMutex_);
    const auto it = running_.constFind(key);
    if (it != running_.cend()) id = it->id;
  }
  if (id) host_->abort(id);
}

void InferenceWorker::abortAll() {
  std::vector<RequestId> ids;
  {
    std::lock_guard lock(runningMutex_);
    for (const Running& r : std::as_const(running_))
      if (r.id) ids.push_back(r.id);
  }
  for (RequestId id : ids) host_->abort(id);
}

InferenceThread::InferenceThread(QObject* parent) : QObject(parent) {
  registerWorkerMetaTypes();
  thread_ = new QThread(this);
  thread_->setObjectName(QStringLiteral("ember-inference"));
  worker_ = new InferenceWorker;  // no parent: it moves to the thread
  worker_->moveToThread(thread_);
  // Deleted on its own thread as the thread's event loop winds down (the host with it).
  connect(thread_, &QThread::finished, worker_, &QObject::deleteLater);
  thread_->start();
}

InferenceThread::~InferenceThread() {
  worker_->requestStop();
  thread_->quit();
  thread_->wait();
}

}  // namespace ember::app
