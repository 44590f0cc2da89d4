// AppController: the model picker's "will it fit" lines. The settings come from the GUI thread;
// the free memory is asked on fitQueries_ (ember::deviceFreeMemory: a CUDA device's free
// memory, else MemAvailable), because creating a CUDA context takes a moment the first time.
#include <QMetaObject>

#include "ember/devices.h"
#include "controller/app_controller.h"
#include "controller/conversation_settings.h"
#include "ember/engine.h"

namespace ember::app {

MemoryFitSettings AppController::fitSettingsNow() const {
  const QJsonObject settings = effectiveSettings();
  MemoryFitSettings fit;
  fit.contextLength = settings.value("contextLength").toInteger(0);
  fit.sequences = settings.value("maxSequences").toInt(kDefaultMaxSequences);
  fit.stepTokens = EngineOptions{}.stepTokenBudget;
  fit.where = settings.value("backend").toString(QStringLiteral("auto"));  // the choice, for now
  return fit;
}

void AppController::refreshModelFit() {
  const quint64 generation = ++load_.fitGeneration;
  MemoryFitSettings settings = fitSettingsNow();
  const std::string backendChoice = settings.where.toStdString();
  fitQueries_.start([this, generation, settings, backendChoice]() mutable {
    const std::optional<FreeMemory> free = deviceFreeMemory(backendChoice);
    settings.availableBytes.reset();
    settings.where.clear();
    if (free) {
      settings.availableBytes = free->bytes;
      settings.where = QString::fromStdString(free->where);
    }
    // Queued to the GUI thread; the pool is waited for before this object goes away.
    QMetaObject::invokeMethod(
        this, [this, generation, settings] { applyModelFit(generation, settings); },
        Qt::QueuedConnection);
  });
}

void AppController::applyModelFit(quint64 generation, MemoryFitSettings settings) {
  if (generation != load_.fitGeneration) return;  // a newer question is on its way
  // The loaded model's memory comes back when another one loads (the worker frees it first).
  if (settings.availableBytes && load_.bytes > 0 && settings.where == load_.memory) {
    *settings.availableBytes += load_.bytes;
    settings.where = tr("%1 once the loaded model is unloaded").arg(settings.where);
  }
  models_.setFitSettings(settings);
}

void AppController::rememberLoadedModelMemory(const LoadedModel& model,
                                              const ModelFileInfo& file) {
  load_.bytes = 0;
  const QString backend = QString::fromStdString(model.info.backendName);
  MemoryFitSettings settings = load_.fitSettings;
  settings.availableBytes = 0;  // only the need is wanted
  const MemoryFit fit = memoryFit(file, settings);
  if (fit.plan.neededBytes == 0) return;  // no plan for this file
  if (backend.startsWith(QLatin1String("cuda"))) {
    load_.bytes = fit.plan.neededBytes;
    load_.memory = backend;
  } else {
    // The CPU backend maps the weights (page cache, which MemAvailable counts already); its KV
    // pool and workspace are ordinary memory.
    load_.bytes = fit.plan.kvCacheBytes + fit.plan.workspaceBytes;
    load_.memory = QStringLiteral("system RAM");
  }
}

}  // namespace ember::app
