#pragma once
// ChatStore: every conversation, message, answer statistic and setting, in one SQLite file.
//
// Durability: the database runs in WAL mode with synchronous=FULL, so a call that returns has its
// data in the WAL *and* fsync'ed: a message survives SIGKILL right after the call (that alone
// only needs the write() to have happened) and also a power cut. The one exception is
// checkpoint(), which runs with synchronous=NORMAL: it is called every second while streaming, a
// partial answer is worth less than an fsync per second, and the next FULL commit syncs the WAL
// up to and including it anyway. Every other write is one transaction; a failed one is rolled
// back and leaves everything saved before it untouched.
//
// Threads: one ChatStore is used from one thread (the GUI thread).
//
// One writer: the first ChatStore to open a file becomes its writer (an flock on
// `<path>.lock`, dropped by the kernel when the process ends, even by SIGKILL). Any other opener,
// in another process or this one, gets a read-only store: it reads everything, never marks the
// writer's live answers as interrupted, and every write fails at once with
// StoreError::Kind::ReadOnly naming the writer's process. Another program writing through SQLite
// directly makes writes wait up to Options::busyTimeoutMs and fail with StoreError::Kind::Busy.
//
// Migrations: before a database of an older schema is updated, a copy of it is written to
// `<path>.v<old version>-backup` (VACUUM INTO: a consistent snapshot, WAL included); when the
// copy cannot be made, nothing is migrated and open() throws.
//
// Errors: every method may throw StoreError (see store_error.h) with a message for the user.
#include <QJsonObject>
#include <QJsonValue>
#include <QList>
#include <QString>
#include <functional>
#include <optional>

#include "store/export/writer_lock.h"
#include "store/sqlite_db.h"
#include "store/store_error.h"
#include "store/store_types.h"

namespace ember::store {

class ChatStore {
 public:
  struct Options {
    int busyTimeoutMs = 5000;      // how long a write waits for another process's lock
    qint64 maxDatabaseBytes = 0;   // a size quota, 0 for none; writes past it fail as DiskFull
    bool readOnly = false;         // open for reading only, without trying to become the writer
    // Told, on the opening thread, as open() moves on: checking the file, copying it before a
    // migration, then each migration step (`step` of `steps`, counted over the whole open: 1 is
    // the check, the last is the final migration step). For a window that says how far it got.
    std::function<void(OpenStage stage, int step, int steps)> progress;
  };

  ChatStore() = default;
  ChatStore(const ChatStore&) = delete;
  ChatStore& operator=(const ChatStore&) = delete;

  // Opens or creates the database, applies migrations, and marks answers left streaming by a
  // crash as interrupted (their checkpointed text kept). A damaged file (not a database, failing
  // PRAGMA quick_check) is moved to `<path>.corrupt-<yyyyMMdd-hhmmss>` (with its -wal) and a new
  // database is started; the report says so, for the app to tell the user. A locked, unreadable
  // or newer-version file is never moved: open() throws instead.
  OpenReport open(const QString& path, const Options& options);
  OpenReport open(const QString& path) { return open(path, Options{}); }
  void close();
  bool isOpen() const { return db_.isOpen(); }
  const OpenReport& openReport() const { return report_; }
  QString path() const { return db_.path(); }

  // --- Conversations -------------------------------------------------------------------------
  // `newId` (here and in the message calls below): the id the new row gets, chosen by the caller
  // before the write (ThreadedChatStore hands them out so that the GUI can use a row before it is
  // written); 0 lets SQLite choose. An id already taken fails the write (InvalidInput).
  Id createConversation(const QString& title, const QString& modelPath = {}, Id newId = 0);
  void renameConversation(Id conversationId, const QString& title);
  void setConversationModel(Id conversationId, const QString& modelPath);
  void deleteConversation(Id conversationId);  // its messages, stats and index entries too
  QList<Conversation> listConversations() const;  // pinned first, then most recently updated
  void setPinned(Id conversationId, bool pinned);
  // Delete with Undo: the conversation leaves the list and search at once but keeps everything
  // until purged, so restoreConversation() brings it back whole, also after a crash.
  void trashConversation(Id conversationId);
  void restoreConversation(Id conversationId);
  // Conversations in the trash, most recently deleted first (deletedAt set).
  QList<Conversation> trashedConversations() const;
  // Deletes for good those trashed at or before `cutoff`; returns how many.
  int purgeTrash(const QDateTime& cutoff);
  std::optional<Conversation> conversation(Id conversationId) const;

  // --- Messages: a tree per conversation ----------------------------------------------------
  // Adds a complete message under `parentId` (0 for a root), makes it the active leaf and
  // commits before returning: the user's message is safe before generation starts. An empty or
  // whitespace-only user message is refused (InvalidInput).
  Id addMessage(Id conversationId, Id parentId, Role role, const QString& content, Id newId = 0);
  // Editing never rewrites history: the new text becomes a sibling of the edited user message.
  Id editMessage(Id messageId, const QString& newContent, Id newId = 0);
  // Starts an empty assistant answer (status streaming) under the user message `parentId`.
  Id beginAssistantMessage(Id parentId, const QString& model, Id newId = 0);
  // Regenerate: a new streaming answer next to `assistantMessageId`, under the same parent.
  Id beginRegeneration(Id assistantMessageId, const QString& model, Id newId = 0);
  // Saves the text streamed so far (one row update, no fsync, no re-indexing). Only for a
  // message still streaming (InvalidInput otherwise).
  void checkpoint(Id messageId, const QString& textSoFar);
  // The same with the reasoning section streamed so far and its duration until now (ms), in the
  // same row update: a crash keeps both.
  void checkpoint(Id messageId, const QString& textSoFar, const QString& reasoningSoFar,
                  double reasoningMs);
  // Final text, status (complete, stopped, error; not streaming) and, when measured, the stats,
  // all in one transaction. The message joins the search index here.
  void finishAssistantMessage(Id messageId, const QString& text, MessageStatus status,
                              const std::optional<MessageStats>& stats = std::nullopt);

  // An answer's reasoning section, kept apart from its text, and how long it took (ms).
  void setReasoning(Id messageId, const QString& reasoning, double ms);

  std::optional<Message> message(Id messageId) const;
  // The messages from the root to the active leaf, in order (empty for an empty conversation).
  QList<Message> activeBranch(Id conversationId) const;
  // The messages under `parentId` (0: the roots of the conversation), oldest first.
  QList<Message> children(Id conversationId, Id parentId) const;
  SiblingInfo siblings(Id messageId) const;
  void setActiveLeaf(Id conversationId, Id messageId);
  // Shows the branch through `messageId`: the active leaf becomes the newest message below it
  // (itself when it has none), which is where the user last was in that branch. Returns it.
  Id selectBranch(Id messageId);
  std::optional<MessageStats> stats(Id messageId) const;

  // --- Search --------------------------------------------------------------------------------
  // Finds messages in which every term of `query` (split at whitespace) matches, ignoring case.
  // When every term has 3+ characters, a term matches anywhere in the text (trigram index:
  // 녕하세 finds 안녕하세요, ello finds Hello). Otherwise, or when that finds nothing, each term
  // matches the start of a word with accents ignored (unicode61 index: 안녕 finds 안녕하세요,
  // cafe finds Café). Best first (BM25); the snippet wraps matches in the given markers.
  QList<SearchHit> search(const QString& query, int limit = 50,
                          const QString& matchStart = QStringLiteral("["),
                          const QString& matchEnd = QStringLiteral("]")) const;

  // --- Settings ------------------------------------------------------------------------------
  // Per-conversation values override the app-wide defaults key by key, which override the
  // built-in defaults the app passes in.
  QJsonObject conversationSettings(Id conversationId) const;
  void setConversationSettings(Id conversationId, const QJsonObject& settings);
  QJsonObject defaultConversationSettings() const;
  void setDefaultConversationSettings(const QJsonObject& settings);
  QJsonObject effectiveSettings(Id conversationId, const QJsonObject& builtInDefaults) const;
  // Other app-wide values (last model, window state, ...).
  QJsonValue appSetting(const QString& key, const QJsonValue& fallback = {}) const;
  void setAppSetting(const QString& key, const QJsonValue& value);
  // Every app-wide value by key (the defaults layer included), for a copy kept in memory.
  QJsonObject appSettings() const;
  // The largest conversation and message ids in use (0 when none), for handing out new ones.
  Id largestConversationId() const;
  Id largestMessageId() const;

 private:
  sql::Database& db() const;  // throws when not open
  void openAndPrepare(const QString& path, const Options& options, bool readOnly);
  QString backUpBeforeMigrating(int version);
  Id insertMessage(Id conversationId, Id parentId, Role role, const QString& content,
                   MessageStatus status, const QString& model, Id newId);
  void touchConversation(Id conversationId, std::optional<Id> activeLeafId);
  Message requireMessage(Id messageId) const;
  void saveStats(Id messageId, const MessageStats& stats);  // inside the caller's transaction

  // Declared before db_: the connection closes before the writer lock is dropped.
  storelock::WriterLock lock_;
  // Reads do not change what the store holds; SQLite statements still need a mutable handle.
  mutable sql::Database db_;
  OpenReport report_;
};

}  // namespace ember::store
