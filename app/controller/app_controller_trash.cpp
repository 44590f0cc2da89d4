// AppController: delete with Undo (the store's trash) and pinning.
#include <QDateTime>
#include <algorithm>

#include "controller/app_controller.h"

namespace ember::app {

void AppController::offerUndoForTrash() {
  const qint64 cutoffMs = QDateTime::currentMSecsSinceEpoch() - undoDeleteMs_;
  // Purged and read on the store thread, after every write queued before (a delete just made).
  const quint64 generation = ++trashGeneration_;
  store_.read([this, cutoffMs, generation](store::ChatStore& s) {
    QList<store::Conversation> trashed;
    QString error;
    try {
      s.purgeTrash(QDateTime::fromMSecsSinceEpoch(cutoffMs, Qt::UTC));
      trashed = s.trashedConversations();
    } catch (const std::exception& e) {
      error = QString::fromUtf8(e.what());
    }
    QMetaObject::invokeMethod(
        this,
        [this, trashed, error, generation] {
          if (generation != trashGeneration_) return;  // a newer look at the trash follows
          if (!error.isEmpty()) setNotice(error);
          undoTimer_.stop();
          undo_ = {};
          if (!trashed.isEmpty()) {
            const store::Conversation& newest = trashed.first();
            undo_ = {newest.id, newest.title,
                     ConversationRow{newest.id, newest.title, newest.updatedAt, false,
                                     newest.pinned}};
            // The next purge: when the oldest one in the trash expires.
            const qint64 expiresIn = trashed.last().deletedAt.toMSecsSinceEpoch() +
                                     undoDeleteMs_ - QDateTime::currentMSecsSinceEpoch();
            undoTimer_.start(
                static_cast<int>(std::clamp<qint64>(expiresIn + 20, 0, undoDeleteMs_ + 20)));
          }
          emit undoDeleteChanged();
        },
        Qt::QueuedConnection);
  });
}

void AppController::undoDelete() {
  const qint64 id = undo_.conversationId;
  if (id == 0) return;
  // Back in the list at once; when the write fails it leaves it again.
  write([id](store::ChatStore& s) { s.restoreConversation(id); },
        [this, id] {
          conversations_.remove(id);
          reloadConversations();  // as stored
          if (currentConversation_ == id)
            openConversation(conversations_.rowCount() > 0 ? conversations_.idAt(0) : 0);
          offerUndoForTrash();
        });
  ConversationRow row = undo_.row;
  if (row.id != id) row = {id, undo_.title, QDateTime::currentDateTimeUtc(), false, false};
  row.generating = false;
  QList<ConversationRow> rows = conversations_.allRows();
  rows << row;
  // The store's order: pinned first, then the most recently updated.
  std::stable_sort(rows.begin(), rows.end(), [](const ConversationRow& a, const ConversationRow& b) {
    if (a.pinned != b.pinned) return a.pinned;
    if (a.updatedAt != b.updatedAt) return a.updatedAt > b.updatedAt;
    return a.id > b.id;
  });
  conversations_.setConversations(rows);
  undo_ = {};
  emit undoDeleteChanged();
  openConversation(id);
  offerUndoForTrash();
}

void AppController::setPinned(qint64 conversationId, bool pinned) {
  const ConversationRow* row = conversations_.find(conversationId);
  if (!row || row->pinned == pinned) return;
  write([conversationId, pinned](store::ChatStore& s) { s.setPinned(conversationId, pinned); },
        [this] { reloadConversations(); });  // as stored
  conversations_.setPinned(conversationId, pinned);
}

}  // namespace ember::app
