// AppController: the GUI's side of the store thread. Nothing here waits for SQLite: writes are
// queued (their failure comes back as the notice and an undo of what the GUI already shows),
// reads come back through the event loop.
//
// New rows are used before they are written: their ids are handed out by the store
// (ThreadedChatStore::reserve*Id) and the write that creates them is queued at once, ahead of
// every later call, so a later write naming them (the answer's checkpoints, a rename) finds them.
// A crash loses at most the writes still queued: normally the last few milliseconds' (one fsync
// each); on a slow or locked disk what has piled up since (the notice tells of a failure, and a
// streaming answer's checkpoints coalesce to one).
#include <QTimer>
#include <utility>

#include "controller/app_controller.h"
#include "controller/stats_format.h"
#include "logging/app_log.h"

namespace ember::app {

void AppController::write(std::function<void(store::ChatStore&)> f, std::function<void()> undo) {
  store_.post(std::move(f), [this, undo = std::move(undo)](const QString& error) {
    if (error.isEmpty()) return;
    // Store thread: the rest belongs to the GUI thread. Dropped when the controller is gone.
    QMetaObject::invokeMethod(
        this,
        [this, error, undo] {
          log::error(QStringLiteral("store: %1").arg(error));
          setNotice(error);
          if (undo) undo();
        },
        Qt::QueuedConnection);
  });
}

void AppController::saveAppSetting(const QString& key, const QJsonValue& value) {
  if (value.isNull() || value.isUndefined()) appSettings_.remove(key);
  else appSettings_.insert(key, value);
  if (!storeReady()) {  // written once the chats are open (writePendingSettings)
    open_.settingsSetWhileOpening.insert(key);
    return;
  }
  write([key, value](store::ChatStore& s) { s.setAppSetting(key, value); },
        [this] { reloadAppSettings(); });
}

void AppController::saveOwnSettings(const QJsonObject& changes) {
  const qint64 conversationId = currentConversation_;
  if (conversationId == 0 || changes.isEmpty()) return;
  for (auto it = changes.begin(); it != changes.end(); ++it) ownSettings_.insert(it.key(), *it);
  write(
      [conversationId, changes](store::ChatStore& s) {
        QJsonObject own = s.conversationSettings(conversationId);
        for (auto it = changes.begin(); it != changes.end(); ++it) own.insert(it.key(), *it);
        s.setConversationSettings(conversationId, own);
      },
      [this, conversationId] {
        if (currentConversation_ == conversationId) loadBranch();  // its settings as stored
      });
  // A read of this chat still on its way was queued before the write: its settings are older.
  if (messagesLoading_) loadBranch();
}

void AppController::writePendingSettings() {
  for (const QString& key : std::exchange(open_.settingsSetWhileOpening, {})) {
    const QJsonValue value = appSettings_.value(key);  // undefined: removed
    write([key, value](store::ChatStore& s) { s.setAppSetting(key, value); },
          [this] { reloadAppSettings(); });
  }
}

void AppController::reloadAppSettings() {
  store_.read([this](store::ChatStore& s) {
    QJsonObject all;
    try {
      all = s.appSettings();
    } catch (const std::exception&) {
      return;  // the copy stays; the failure that asked for this was shown
    }
    QMetaObject::invokeMethod(
        this,
        [this, all] {
          appSettings_ = all;
          emit settingsChanged();
          emit presetsChanged();
        },
        Qt::QueuedConnection);
  });
}

namespace {
constexpr int kBranchRetryMs = 1000;  // a chat that could not be read is read again this soon
// What a branch read brings back (built on the store thread).
struct BranchRead {
  QList<store::Message> messages;
  QHash<qint64, store::MessageStats> stats;
  QHash<qint64, store::SiblingInfo> siblings;
  QJsonObject ownSettings;
  QString error;
};
}  // namespace

void AppController::loadBranch(std::function<void()> then) {
  const qint64 conversationId = currentConversation_;
  const quint64 generation = ++branchGeneration_;
  if (conversationId == 0) {
    messages_.clear();
    stats_.clear();
    siblingIds_.clear();
    ownSettings_ = {};
    if (messagesLoading_) {
      messagesLoading_ = false;
      emit messagesLoadingChanged();
    }
    if (then) then();
    return;
  }
  if (!messagesLoading_) {
    messagesLoading_ = true;
    emit messagesLoadingChanged();
  }
  store_.read([this, conversationId, generation, then](store::ChatStore& s) {
    BranchRead read;
    try {
      read.messages = s.activeBranch(conversationId);
      for (const store::Message& m : std::as_const(read.messages)) {
        if (m.role == store::Role::Assistant)
          if (const auto stats = s.stats(m.id)) read.stats.insert(m.id, *stats);
        read.siblings.insert(m.id, s.siblings(m.id));
      }
      read.ownSettings = s.conversationSettings(conversationId);
    } catch (const std::exception& e) {
      read.error = QString::fromUtf8(e.what());
    }
    QMetaObject::invokeMethod(
        this,
        [this, conversationId, generation, then, read = std::move(read)] {
          if (generation != branchGeneration_ || conversationId != currentConversation_)
            return;  // the user moved on: a newer read follows
          if (!read.error.isEmpty()) {
            // Still loading, and read again in a moment: rows the store could not give are never
            // guessed (a message sent meanwhile waits for them, see send()).
            log::error(QStringLiteral("store: %1").arg(read.error));
            setNotice(read.error);
            QTimer::singleShot(kBranchRetryMs, this, [this, conversationId, generation, then] {
              if (generation == branchGeneration_ && conversationId == currentConversation_)
                loadBranch(then);
            });
            return;
          }
          messagesLoading_ = false;
          QList<MessageRow> rows;
          stats_ = read.stats;
          siblingIds_.clear();
          for (const store::Message& m : read.messages) {
            MessageRow row;
            row.id = m.id;
            row.role = store::roleName(m.role);
            row.text = m.content;
            row.status = store::statusName(m.status);
            row.reasoning = m.reasoning;
            row.reasoningSeconds = m.reasoningMs / 1000.0;
            if (const auto it = read.stats.constFind(m.id); it != read.stats.cend()) {
              row.statsLine = compactStatsLine(*it);
              row.error = answerNote(*it);  // said when it ended, and every time it is shown
            }
            const store::SiblingInfo siblings = read.siblings.value(m.id);
            row.siblingIndex = siblings.index;
            row.siblingCount = siblings.count();
            siblingIds_.insert(m.id, siblings.ids);
            for (const ActiveRequest& r : std::as_const(active_))
              if (r.messageId == m.id) {
                row.text = r.text;  // newer than the last checkpoint
                row.reasoning = r.reasoning;
                row.reasoningSeconds = r.reasoningEndMs >= 0 ? r.reasoningMs() / 1000.0 : -1;
                row.liveText = r.live.text();
                row.liveFraction = r.live.fraction();
              }
            rows << row;
          }
          ownSettings_ = read.ownSettings;
          messages_.setMessages(rows);
          emit messagesLoadingChanged();
          emit settingsChanged();
          if (then) then();
        },
        Qt::QueuedConnection);
  });
}

QString AppController::answerNote(const store::MessageStats& s) const {
  QString note;
  if (const int dropped = s.sampling.value(QStringLiteral("dropped_turns")).toInt(); dropped > 0)
    note = tr("%n older message(s) were left out to fit the context window.", "", dropped);
  const QString warning = s.sampling.value(QStringLiteral("template_warning")).toString();
  if (!warning.isEmpty()) {
    if (!note.isEmpty()) note += QLatin1Char(' ');
    note += tr("The model's chat template could not be used for this conversation: %1")
                .arg(warning);
  }
  return note;
}

QList<MessageRow> AppController::shownRows() const {
  QList<MessageRow> rows;
  for (int i = 0; i < messages_.rowCount(); ++i) rows << *messages_.row(i);
  return rows;
}

void AppController::dropAnswer(const QString& requestKey) {
  const QString key = requestKey;  // a copy: the caller's may be the entry erased below
  const auto it = active_.find(key);
  if (it == active_.end()) return;
  const qint64 conversationId = it->conversationId;
  active_.erase(it);
  if (remoteChat_.running(key)) remoteChat_.abort(key);
  else emit abortInWorker(key);  // its late signals find no request and are ignored
  updateGeneratingMark(conversationId);
  emit generatingChanged();
}

MessageRow AppController::streamingRow(qint64 id, int siblingIndex, int siblingCount) {
  MessageRow row;
  row.id = id;
  row.role = QStringLiteral("assistant");
  row.status = QStringLiteral("streaming");
  row.siblingIndex = siblingIndex;
  row.siblingCount = siblingCount;
  return row;
}

void AppController::undoAnswer(qint64 conversationId, qint64 answerId) {
  for (auto it = active_.cbegin(); it != active_.cend(); ++it)
    if (it->messageId == answerId) {
      dropAnswer(it.key());
      break;
    }
  // The chat as the store holds it (after a failed fsync the user's message may be there).
  if (conversationId == currentConversation_) loadBranch();
}

}  // namespace ember::app
