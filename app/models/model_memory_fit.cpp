#include "models/model_memory_fit.h"

#include <QObject>
#include <algorithm>

#include "ember/engine.h"

namespace ember::app {

qint64 plannedContext(const ModelFileInfo& info, const MemoryFitSettings& settings) {
  if (settings.contextLength > 0) return settings.contextLength;
  const qint64 trained = info.configured ? info.configContext : info.contextLength;
  return trained > 0 ? std::min<qint64>(trained, EngineOptions::kDefaultContext)
                     : EngineOptions::kDefaultContext;
}

MemoryFit memoryFit(const ModelFileInfo& info, const MemoryFitSettings& settings) {
  MemoryFit fit;
  if (!info.error.isEmpty() || !settings.availableBytes) return fit;
  fit.known = true;
  if (!info.configured) {
    fit.line = QObject::tr("memory need unknown: %1").arg(info.configError);
    return fit;
  }
  const qint64 context = plannedContext(info, settings);
  if (context > info.configContext) {  // Engine::load refuses it
    fit.line = QObject::tr("too big: context %1 is more than the model's %2")
                   .arg(context)
                   .arg(info.configContext);
    return fit;
  }
  MemoryPlanInput input;
  input.weightBytes = info.weightBytes;
  input.kvBytesPerToken = info.kvBytesPerToken;
  input.contextLength = static_cast<int32_t>(context);
  input.sequences = std::max(settings.sequences, 1);
  input.workspaceBytes = info.workspaceBytes(settings.stepTokens, input.sequences);
  input.availableBytes = *settings.availableBytes;
  try {
    fit.plan = planMemory(input);
  } catch (const std::exception& e) {
    fit.line = QObject::tr("memory need unknown: %1").arg(QString::fromUtf8(e.what()));
    return fit;
  }
  fit.fits = fit.plan.fits;
  const QString where = settings.where.isEmpty() ? QObject::tr("memory") : settings.where;
  if (fit.fits) {
    fit.line = QObject::tr("fits: needs %1 of %2 free in %3")
                   .arg(QString::fromStdString(ember::formatBytes(fit.plan.neededBytes)),
                        QString::fromStdString(ember::formatBytes(fit.plan.availableBytes)),
                        where);
  } else {
    fit.line = QObject::tr("too big for %1: %2")
                   .arg(where, QString::fromStdString(fit.plan.message));
  }
  return fit;
}

}  // namespace ember::app
