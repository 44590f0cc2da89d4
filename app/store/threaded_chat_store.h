#pragma once
// ThreadedChatStore: a ChatStore that lives on a thread of its own, so that a slow disk (an fsync
// on a busy or network drive) or a database locked by another program never holds the GUI
// thread while an answer streams.
//
// One queue, run in order on the store thread: the writes of a conversation land in the order the
// app made them, and every call sees every write queued before it (read-your-writes).
// - Queued writes (both checkpoints, setReasoning, finishAssistantMessage: what happens while
//   and when an answer streams) return at once. A failure goes to the error handler, on the store
//   thread, with the StoreError's message for the user. A checkpoint still waiting in the queue
//   when the next one of the same answer comes is dropped: the newer one holds all its text.
// - Every other call waits for the writes queued before it, runs there, and returns its result
//   or rethrows its StoreError in the caller's thread. These are the ones whose answer the app
//   needs at once (ids of new messages, what a view shows), made on a user's action.
// - Nothing the GUI does needs to wait: new rows get ids handed out before their write
//   (reserveConversationId / reserveMessageId; the store thread is the only writer of this file,
//   and every reserved id's write is queued the moment it is reserved, so SQLite's own ids, taken
//   by later calls, never meet one), writes can report back with post(f, done), and reads can run
//   there with read(f), their result handed back by the caller's own queued callback.
// Destruction runs everything still queued (an answer stopped when the window closes is saved
// whole), closes the database and joins the thread. A crash loses only queued writes not yet run:
// a checkpoint is queued the moment it is due, and a user's message is committed before send()
// returns (addMessage waits), as with ChatStore itself.
#include <atomic>
#include <condition_variable>
#include <deque>
#include <functional>
#include <future>
#include <mutex>
#include <thread>
#include <type_traits>

#include "store/chat_store.h"

namespace ember::store {

class ThreadedChatStore {
 public:
  using ErrorHandler = std::function<void(const QString& message)>;

  ThreadedChatStore();
  ~ThreadedChatStore();
  ThreadedChatStore(const ThreadedChatStore&) = delete;
  ThreadedChatStore& operator=(const ThreadedChatStore&) = delete;

  // Called on the store thread when a queued write fails.
  void setErrorHandler(ErrorHandler handler);

  // Runs f(ChatStore&) on the store thread after everything queued before it and returns what it
  // returns; an exception it throws is rethrown here. From the store thread itself, runs at once.
  template <class F>
  auto call(F&& f) const -> std::invoke_result_t<F&, ChatStore&> {
    using Result = std::invoke_result_t<F&, ChatStore&>;
    if (std::this_thread::get_id() == thread_.get_id()) return f(store_);
    // What f inserted without a reserved id (an import, a test's own rows) moves the handed-out
    // ids past it.
    std::packaged_task<Result()> task([&] {
      struct Follow {
        const ThreadedChatStore& self;
        ~Follow() { self.followLargestIds(); }
      } follow{*this};
      return f(store_);
    });
    std::future<Result> result = task.get_future();
    enqueue([&task] { task(); }, 0);
    return result.get();
  }
  // Queues f and returns at once; a failure goes to the error handler. A nonzero `replaceKey`
  // drops a queued, not yet started task with the same key (the new one supersedes it).
  void post(std::function<void(ChatStore&)> f, qint64 replaceKey = 0);
  // The same, and then `done` on the store thread with the failure's message (empty: it worked).
  void post(std::function<void(ChatStore&)> f, std::function<void(const QString& error)> done);
  // Queues a read: f runs on the store thread after everything queued before it; it hands its
  // result back itself (a queued call to the GUI thread) and deals with its own errors.
  void read(std::function<void(ChatStore&)> f);
  // An id for a new conversation or message that no other row has or will get; the caller
  // queues the write that uses it at once. Valid once open() has returned (or openQueued's
  // `opened` has run).
  Id reserveConversationId() { return ++lastConversationId_; }
  Id reserveMessageId() { return ++lastMessageId_; }
  // `count` consecutive ids at once (the first is returned), for a write that inserts many rows
  // (an import, reserving on the store thread while the GUI may reserve its own).
  Id reserveConversationIds(Id count) { return lastConversationId_.fetch_add(count) + 1; }
  Id reserveMessageIds(Id count) { return lastMessageId_.fetch_add(count) + 1; }
  // Waits until everything queued so far has run.
  void flush() const {
    call([](ChatStore&) {});
  }
  // Queued writes not yet run (for tests and the log).
  int pendingWrites() const;

  // --- ChatStore's operations, with the same meaning (chat_store.h) ------------------------
  OpenReport open(const QString& path, const ChatStore::Options& options);
  OpenReport open(const QString& path) { return open(path, ChatStore::Options{}); }
  // The same without waiting: queued (ahead of everything queued after it), and `opened` runs on
  // the store thread when it has ended, with the report, or the failure's message (then the
  // store is closed, and the writes queued behind it fail with "not open"). The id counters are
  // past every row of the file before `opened` runs: reserve*Id is valid from then on, and only
  // then. A migration can take a minute on a slow disk; the GUI thread never waits for it.
  using Opened = std::function<void(ChatStore& store, const OpenReport& report,
                                    const QString& error)>;
  void openQueued(const QString& path, const ChatStore::Options& options, Opened opened);
  void close();
  bool isOpen() const;
  OpenReport openReport() const;
  QString path() const;

  Id createConversation(const QString& title, const QString& modelPath = {}, Id newId = 0);
  void renameConversation(Id conversationId, const QString& title);
  void setConversationModel(Id conversationId, const QString& modelPath);
  void deleteConversation(Id conversationId);
  QList<Conversation> listConversations() const;
  void setPinned(Id conversationId, bool pinned);
  void trashConversation(Id conversationId);
  void restoreConversation(Id conversationId);
  QList<Conversation> trashedConversations() const;
  int purgeTrash(const QDateTime& cutoff);
  std::optional<Conversation> conversation(Id conversationId) const;

  Id addMessage(Id conversationId, Id parentId, Role role, const QString& content, Id newId = 0);
  Id editMessage(Id messageId, const QString& newContent, Id newId = 0);
  Id beginAssistantMessage(Id parentId, const QString& model, Id newId = 0);
  Id beginRegeneration(Id assistantMessageId, const QString& model, Id newId = 0);
  // Queued.
  void checkpoint(Id messageId, const QString& textSoFar);
  void checkpoint(Id messageId, const QString& textSoFar, const QString& reasoningSoFar,
                  double reasoningMs);
  void finishAssistantMessage(Id messageId, const QString& text, MessageStatus status,
                              const std::optional<MessageStats>& stats = std::nullopt);
  void setReasoning(Id messageId, const QString& reasoning, double ms);

  std::optional<Message> message(Id messageId) const;
  QList<Message> activeBranch(Id conversationId) const;
  QList<Message> children(Id conversationId, Id parentId) const;
  SiblingInfo siblings(Id messageId) const;
  void setActiveLeaf(Id conversationId, Id messageId);
  Id selectBranch(Id messageId);
  std::optional<MessageStats> stats(Id messageId) const;

  QList<SearchHit> search(const QString& query, int limit = 50,
                          const QString& matchStart = QStringLiteral("["),
                          const QString& matchEnd = QStringLiteral("]")) const;

  QJsonObject conversationSettings(Id conversationId) const;
  void setConversationSettings(Id conversationId, const QJsonObject& settings);
  QJsonObject defaultConversationSettings() const;
  void setDefaultConversationSettings(const QJsonObject& settings);
  QJsonObject effectiveSettings(Id conversationId, const QJsonObject& builtInDefaults) const;
  QJsonValue appSetting(const QString& key, const QJsonValue& fallback = {}) const;
  void setAppSetting(const QString& key, const QJsonValue& value);

 private:
  struct Task {
    std::function<void()> run;
    qint64 replaceKey = 0;
    bool queuedWrite = false;  // from post(): counted in pendingWrites()
  };
  void enqueue(std::function<void()> run, qint64 replaceKey, bool queuedWrite = false) const;
  void runQueue();  // the store thread
  void followLargestIds() const;  // on the store thread: past every id in the file

  // Calls that only read still go through the queue (the order is the point), hence mutable.
  mutable ChatStore store_;  // touched only on the store thread
  mutable std::mutex mutex_;
  mutable std::condition_variable wake_;
  mutable std::deque<Task> queue_;
  mutable int pendingWrites_ = 0;
  bool stopping_ = false;
  ErrorHandler onError_;
  mutable std::atomic<Id> lastConversationId_{0}, lastMessageId_{0};
  std::thread thread_;  // last: started once everything above exists
};

}  // namespace ember::store
