// AppController: a model load's percentage and its Cancel. The worker sends whole percents as
// the engine reads the file and prepares the weights; Cancel stops the engine's load at its next
// check. The engine freed the model loaded before when the load began, so a cancelled load
// loads that one again (its pages are still in the page cache: quick) and says so.
#include <QFileInfo>

#include "controller/app_controller.h"
#include "logging/app_log.h"

namespace ember::app {

QString AppController::modelLoadText() const {
  if (!load_.loading) return {};
  return tr("Loading %1 %2%")
      .arg(QFileInfo(load_.path).fileName())
      .arg(static_cast<int>(load_.fraction * 100.0));
}

void AppController::cancelModelLoad() {
  if (!load_.loading) return;
  log::info(QStringLiteral("model load cancel asked: %1").arg(load_.path));
  if (load_.control) load_.control->cancel();
}

void AppController::onLoadFraction(const QString& path, double fraction) {
  if (path != load_.path || !load_.loading) return;  // an older load, replaced since
  load_.fraction = std::max(load_.fraction, fraction);
  emit modelLoadProgressChanged();
}

void AppController::onLoadCancelled(const QString& path) {
  // A load replaced by a newer one (even of the same file) ends cancelled too: only the end of
  // the newest load counts.
  if (--load_.inFlight > 0 || path != load_.path) return;
  const QString cancelled = QFileInfo(path).fileName();
  load_.control.reset();
  log::info(QStringLiteral("model load cancelled: %1").arg(path));
  load_.loading = false;
  load_.loaded = false;
  load_.error.clear();
  load_.fraction = 0;
  load_.bytes = 0;  // the worker freed the old model before trying
  const QString previous = load_.lastLoadedPath;
  if (!previous.isEmpty() && previous != path && QFileInfo::exists(previous)) {
    setNotice(tr("Loading %1 was cancelled; going back to %2.")
                  .arg(cancelled, QFileInfo(previous).fileName()));
    loadModel(previous);  // emits modelChanged
    return;
  }
  // Nothing to go back to: no model, the picker offers the files again.
  load_.path.clear();
  setNotice(tr("Loading %1 was cancelled; no model is loaded.").arg(cancelled));
  emit modelChanged();
  emit modelLoadProgressChanged();
  refreshModelFit();
}

}  // namespace ember::app
