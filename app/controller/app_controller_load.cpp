// AppController: a model load's percentage and its Cancel. The worker sends whole percents as
// the engine reads the file and prepares the weights; Cancel stops the engine's load at its next
// check. The engine freed the model loaded before when the load began, so a cancelled load
// loads that one again (its pages are still in the page cache: quick) and says so.
#include <QFileInfo>

#include "controller/app_controller.h"
#include "logging/app_log.h"

namespace ember::app {

QString AppController::modelLoadText() const {
  if (!modelLoading_) return {};
  return tr("Loading %1 %2%")
      .arg(QFileInfo(modelPath_).fileName())
      .arg(static_cast<int>(modelLoadFraction_ * 100.0));
}

void AppController::cancelModelLoad() {
  if (!modelLoading_) return;
  log::info(QStringLiteral("model load cancel asked: %1").arg(modelPath_));
  if (loadControl_) loadControl_->cancel();
}

void AppController::onLoadFraction(const QString& path, double fraction) {
  if (path != modelPath_ || !modelLoading_) return;  // an older load, replaced since
  modelLoadFraction_ = std::max(modelLoadFraction_, fraction);
  emit modelLoadProgressChanged();
}

void AppController::onLoadCancelled(const QString& path) {
  // A load replaced by a newer one (even of the same file) ends cancelled too: only the end of
  // the newest load counts.
  if (--loadsInFlight_ > 0 || path != modelPath_) return;
  const QString cancelled = QFileInfo(path).fileName();
  loadControl_.reset();
  log::info(QStringLiteral("model load cancelled: %1").arg(path));
  modelLoading_ = false;
  modelLoaded_ = false;
  modelError_.clear();
  modelLoadFraction_ = 0;
  loadedModelBytes_ = 0;  // the worker freed the old model before trying
  const QString previous = lastLoadedPath_;
  if (!previous.isEmpty() && previous != path && QFileInfo::exists(previous)) {
    setNotice(tr("Loading %1 was cancelled; going back to %2.")
                  .arg(cancelled, QFileInfo(previous).fileName()));
    loadModel(previous);  // emits modelChanged
    return;
  }
  // Nothing to go back to: no model, the picker offers the files again.
  modelPath_.clear();
  setNotice(tr("Loading %1 was cancelled; no model is loaded.").arg(cancelled));
  emit modelChanged();
  emit modelLoadProgressChanged();
  refreshModelFit();
}

}  // namespace ember::app
