// AppController: delete with Undo (the store's trash) and pinning.
#include <QDateTime>
#include <algorithm>

#include "controller/app_controller.h"

namespace ember::app {

void AppController::offerUndoForTrash() {
  undo_ = {};
  undoTimer_.stop();
  guarded([&] {
    const QDateTime now = QDateTime::currentDateTimeUtc();
    store_.purgeTrash(now.addMSecs(-undoDeleteMs_));
    const QList<store::Conversation> trashed = store_.trashedConversations();
    if (trashed.isEmpty()) return;
    undo_ = {trashed.first().id, trashed.first().title};
    // The next purge: when the oldest one in the trash expires.
    const qint64 expiresIn =
        trashed.last().deletedAt.toMSecsSinceEpoch() + undoDeleteMs_ - now.toMSecsSinceEpoch();
    undoTimer_.start(static_cast<int>(std::clamp<qint64>(expiresIn + 20, 0, undoDeleteMs_ + 20)));
  });
  emit undoDeleteChanged();
}

void AppController::undoDelete() {
  const qint64 id = undo_.conversationId;
  if (id == 0) return;
  if (!guarded([&] { store_.restoreConversation(id); })) return;
  reloadConversations();
  openConversation(id);
  offerUndoForTrash();
}

void AppController::setPinned(qint64 conversationId, bool pinned) {
  if (guarded([&] { store_.setPinned(conversationId, pinned); })) reloadConversations();
}

}  // namespace ember::app
