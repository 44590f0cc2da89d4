// AppController: opening the chat database at start, on the store thread.
//
// The window shows at once, in its "Opening your chats…" state (storeOpening), while the file is
// checked and, for an older version, copied and migrated: on a slow disk that takes seconds to a
// minute and the GUI thread never waits for it. When it has ended, one queued call brings the
// report, the app settings and the conversation list; until then:
// - nothing reserves an id: the store's counters are set by the open, so a message sent (or a
//   chat made) meanwhile is queued here and goes out once the chats are shown, into the chat the
//   window opens on (or a new one, when the user asked for one);
// - a setting changed meanwhile (the window's size, a model chosen) is kept over what the open
//   reads back and written once it has ended (after a failed open, once a retry has opened it;
//   at quit, queued behind the open still running, which the store's destructor finishes);
// - what needs the settings (the model used last, the language) waits in whenStoreOpen().
// A failed open leaves the window up with the reason and a way to try again.
#include <QPointer>
#include <algorithm>
#include <utility>

#include "controller/app_controller.h"
#include "logging/app_log.h"

namespace ember::app {
namespace {

// A write that finds the database locked by another program waits at most this long on the store
// thread, then fails with a message the notice shows. Ember's own writes take milliseconds, and a
// second Ember process cannot hold the lock: it opens the store read-only.
constexpr int kStoreLockWaitMs = 300;

// What the open hands back to the GUI thread (read on the store thread).
struct OpenResult {
  store::OpenReport report;
  QString error;
  QJsonObject appSettings;
  QList<store::Conversation> conversations;
};

}  // namespace

QString AppController::openStageText(int stage) const {
  switch (static_cast<store::OpenStage>(stage)) {
    case store::OpenStage::Checking: return tr("Checking the chat database…");
    case store::OpenStage::BackingUp: return tr("Keeping a copy of your chats before updating them…");
    case store::OpenStage::Migrating: return tr("Updating your chats to this version of Ember…");
  }
  return {};
}

void AppController::openStore(const QString& path) {
  open_.path = path;
  open_.opening = true;
  open_.error.clear();
  open_.text = tr("Opening your chats…");
  open_.fraction = 0;
  emit storeOpeningChanged();
  store::ChatStore::Options options;
  options.busyTimeoutMs = kStoreLockWaitMs;
  const quint64 generation = ++open_.generation;
  QPointer<AppController> self(this);
  options.progress = [self, generation](store::OpenStage stage, int step, int steps) {
    // Store thread: shown from the GUI thread (dropped once the open has ended).
    QMetaObject::invokeMethod(
        self.data(),
        [self, generation, stage, step, steps] {
          if (!self || generation != self->open_.generation || !self->open_.opening) return;
          self->open_.text = self->openStageText(static_cast<int>(stage));
          if (steps > 1) {
            self->open_.text += QLatin1Char(' ') +
                                       tr("(step %1 of %2)").arg(std::min(step, steps)).arg(steps);
          }
          self->open_.fraction =
              steps > 0 ? std::clamp((step - 1) / double(steps), 0.0, 1.0) : 0.0;
          emit self->storeOpeningChanged();
        },
        Qt::QueuedConnection);
  };
  store_.openQueued(path, options,
                    [this, generation](store::ChatStore& s, const store::OpenReport& report,
                                       const QString& error) {
                      OpenResult result{report, error, {}, {}};
                      if (error.isEmpty()) {
                        try {
                          result.appSettings = s.appSettings();
                          result.conversations = s.listConversations();
                        } catch (const std::exception& e) {
                          result.error = QString::fromUtf8(e.what());
                        }
                      }
                      QMetaObject::invokeMethod(
                          this,
                          [this, generation, result = std::move(result)] {
                            if (generation == open_.generation) storeOpened(result.report,
                                result.error, result.appSettings, result.conversations);
                          },
                          Qt::QueuedConnection);
                    });
}

void AppController::retryOpenStore() {
  if (open_.opening || open_.error.isEmpty()) return;
  log::info(QStringLiteral("opening the store again: %1").arg(open_.path));
  openStore(open_.path);
}

void AppController::storeOpened(const store::OpenReport& report, const QString& error,
                                QJsonObject settings,
                                const QList<store::Conversation>& conversations) {
  // Settings changed while the file opened win over what it read; they are written now (or,
  // when the open failed, once a retry has opened it).
  for (const QString& key : std::as_const(open_.settingsSetWhileOpening)) {
    if (appSettings_.contains(key)) settings.insert(key, appSettings_.value(key));
    else settings.remove(key);
  }
  appSettings_ = settings;
  open_.opening = false;
  if (error.isEmpty()) writePendingSettings();
  open_.fraction = 1;
  if (!error.isEmpty()) {
    open_.error = tr("The chat database could not be opened: %1").arg(error);
    setNotice(open_.error);
    log::error(open_.error);
  } else if (report.recoveredFromCorruption) {
    setNotice(tr("The chat database was damaged and has been set aside as %1; a new one was "
                 "started.").arg(report.corruptBackupPath));
  } else if (report.readOnly) {
    setNotice(tr("The chats are open read-only: %1").arg(report.readOnlyReason));
  } else if (!report.migrationBackupPath.isEmpty()) {
    setNotice(tr("The chat database was updated to this version of Ember; a copy of the old "
                 "one was kept as %1.").arg(report.migrationBackupPath));
  } else if (report.interruptedMessages > 0) {
    setNotice(tr("%n answer(s) were cut short when Ember last closed; they are marked as "
                 "interrupted.", "", report.interruptedMessages));
  }
  if (error.isEmpty()) log::info(QStringLiteral("store opened: %1").arg(open_.path));
  emit storeOpeningChanged();
  emit settingsChanged();
  emit presetsChanged();
  emit languageChanged();
  if (!error.isEmpty()) {
    runWhenStoreOpen();  // the model still loads; the chats wait for a retry
    return;
  }
  QList<ConversationRow> rows;
  for (const store::Conversation& c : conversations)
    rows << ConversationRow{c.id, c.title, c.updatedAt, false, c.pinned};
  conversations_.setConversations(rows);
  offerUndoForTrash();  // purges what has expired; a delete cut short by a crash can be undone
  // A message typed meanwhile goes into the chat shown now (queued_ for chat 0 follows it).
  const bool queuedWhileOpening = !queued_.text.isEmpty() && queued_.conversationId == 0;
  if (open_.newChatWhenOpen || conversations_.rowCount() == 0) {
    open_.newChatWhenOpen = false;
    if (conversations_.rowCount() > 0) newConversation();
    if (queuedWhileOpening) queued_.conversationId = currentConversation_;
    emit queuedMessageChanged();
    sendQueuedIfReady();  // none to read: it goes as soon as the model is there
  } else {
    const qint64 first = conversations_.idAt(0);
    if (queuedWhileOpening) queued_.conversationId = first;
    openConversation(first);  // sends it once the chat's rows are shown
    emit queuedMessageChanged();
  }
  runWhenStoreOpen();
}

void AppController::whenStoreOpen(std::function<void()> f) {
  if (!open_.opening) {
    f();
    return;
  }
  open_.afterOpen.push_back(std::move(f));
}

void AppController::runWhenStoreOpen() {
  const auto waiting = std::exchange(open_.afterOpen, {});
  for (const auto& f : waiting) f();
}

QString AppController::lastModelPath() const {
  return appSetting(QStringLiteral("lastModel")).toString();
}

}  // namespace ember::app
