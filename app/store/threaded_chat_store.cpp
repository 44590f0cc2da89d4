#include "store/threaded_chat_store.h"

#include <algorithm>

namespace ember::store {

ThreadedChatStore::ThreadedChatStore() : thread_([this] { runQueue(); }) {}

ThreadedChatStore::~ThreadedChatStore() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_one();
  thread_.join();
}

void ThreadedChatStore::setErrorHandler(ErrorHandler handler) {
  std::lock_guard lock(mutex_);
  onError_ = std::move(handler);
}

void ThreadedChatStore::enqueue(std::function<void()> run, qint64 replaceKey,
                                bool queuedWrite) const {
  {
    std::lock_guard lock(mutex_);
    if (replaceKey != 0) {
      const auto superseded = std::find_if(queue_.begin(), queue_.end(), [&](const Task& t) {
        return t.replaceKey == replaceKey;
      });
      if (superseded != queue_.end()) {
        if (superseded->queuedWrite) --pendingWrites_;
        queue_.erase(superseded);
      }
    }
    if (queuedWrite) ++pendingWrites_;
    queue_.push_back(Task{std::move(run), replaceKey, queuedWrite});
  }
  wake_.notify_one();
}

void ThreadedChatStore::post(std::function<void(ChatStore&)> f, qint64 replaceKey) {
  enqueue(
      [this, f = std::move(f)] {
        try {
          f(store_);
        } catch (const std::exception& e) {
          ErrorHandler handler;
          {
            std::lock_guard lock(mutex_);
            handler = onError_;
          }
          if (handler) handler(QString::fromUtf8(e.what()));
        }
      },
      replaceKey, true);
}

void ThreadedChatStore::post(std::function<void(ChatStore&)> f,
                             std::function<void(const QString& error)> done) {
  enqueue(
      [this, f = std::move(f), done = std::move(done)] {
        QString error;
        try {
          f(store_);
        } catch (const std::exception& e) {
          error = QString::fromUtf8(e.what());
        }
        done(error);
      },
      0, true);
}

void ThreadedChatStore::read(std::function<void(ChatStore&)> f) {
  enqueue([this, f = std::move(f)] { f(store_); }, 0, false);
}

void ThreadedChatStore::followLargestIds() const {
  if (!store_.isOpen()) return;
  try {
    const Id conversations = store_.largestConversationId();
    const Id messages = store_.largestMessageId();
    // Only ever up: an id handed out but not yet written stays taken.
    Id seen = lastConversationId_.load();
    while (seen < conversations && !lastConversationId_.compare_exchange_weak(seen, conversations)) {
    }
    seen = lastMessageId_.load();
    while (seen < messages && !lastMessageId_.compare_exchange_weak(seen, messages)) {
    }
  } catch (const std::exception&) {
    // A file that cannot be read now fails its next write with the reason.
  }
}

int ThreadedChatStore::pendingWrites() const {
  std::lock_guard lock(mutex_);
  return pendingWrites_;
}

void ThreadedChatStore::runQueue() {
  for (;;) {
    Task task;
    {
      std::unique_lock lock(mutex_);
      wake_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
      if (queue_.empty()) break;  // stopping, and everything queued has run
      task = std::move(queue_.front());
      queue_.pop_front();
    }
    task.run();
    if (task.queuedWrite) {
      std::lock_guard lock(mutex_);
      --pendingWrites_;
    }
  }
  store_.close();
}

// --- Forwarding --------------------------------------------------------------------------------

OpenReport ThreadedChatStore::open(const QString& path, const ChatStore::Options& options) {
  return call([&](ChatStore& s) { return s.open(path, options); });
}
void ThreadedChatStore::openQueued(const QString& path, const ChatStore::Options& options,
                                   Opened opened) {
  enqueue(
      [this, path, options, opened = std::move(opened)] {
        OpenReport report;
        QString error;
        try {
          report = store_.open(path, options);
        } catch (const std::exception& e) {
          error = QString::fromUtf8(e.what());
        }
        followLargestIds();
        opened(store_, report, error);
      },
      0, false);
}
void ThreadedChatStore::close() {
  call([](ChatStore& s) { s.close(); });
}
bool ThreadedChatStore::isOpen() const {
  return call([](ChatStore& s) { return s.isOpen(); });
}
OpenReport ThreadedChatStore::openReport() const {
  return call([](ChatStore& s) { return s.openReport(); });
}
QString ThreadedChatStore::path() const {
  return call([](ChatStore& s) { return s.path(); });
}

Id ThreadedChatStore::createConversation(const QString& title, const QString& modelPath,
                                         Id newId) {
  return call([&](ChatStore& s) { return s.createConversation(title, modelPath, newId); });
}
void ThreadedChatStore::renameConversation(Id conversationId, const QString& title) {
  call([&](ChatStore& s) { s.renameConversation(conversationId, title); });
}
void ThreadedChatStore::setConversationModel(Id conversationId, const QString& modelPath) {
  call([&](ChatStore& s) { s.setConversationModel(conversationId, modelPath); });
}
void ThreadedChatStore::deleteConversation(Id conversationId) {
  call([&](ChatStore& s) { s.deleteConversation(conversationId); });
}
QList<Conversation> ThreadedChatStore::listConversations() const {
  return call([](ChatStore& s) { return s.listConversations(); });
}
void ThreadedChatStore::setPinned(Id conversationId, bool pinned) {
  call([&](ChatStore& s) { s.setPinned(conversationId, pinned); });
}
void ThreadedChatStore::trashConversation(Id conversationId) {
  call([&](ChatStore& s) { s.trashConversation(conversationId); });
}
void ThreadedChatStore::restoreConversation(Id conversationId) {
  call([&](ChatStore& s) { s.restoreConversation(conversationId); });
}
QList<Conversation> ThreadedChatStore::trashedConversations() const {
  return call([](ChatStore& s) { return s.trashedConversations(); });
}
int ThreadedChatStore::purgeTrash(const QDateTime& cutoff) {
  return call([&](ChatStore& s) { return s.purgeTrash(cutoff); });
}
std::optional<Conversation> ThreadedChatStore::conversation(Id conversationId) const {
  return call([&](ChatStore& s) { return s.conversation(conversationId); });
}

Id ThreadedChatStore::addMessage(Id conversationId, Id parentId, Role role,
                                 const QString& content, Id newId) {
  return call(
      [&](ChatStore& s) { return s.addMessage(conversationId, parentId, role, content, newId); });
}
Id ThreadedChatStore::editMessage(Id messageId, const QString& newContent, Id newId) {
  return call([&](ChatStore& s) { return s.editMessage(messageId, newContent, newId); });
}
Id ThreadedChatStore::beginAssistantMessage(Id parentId, const QString& model, Id newId) {
  return call([&](ChatStore& s) { return s.beginAssistantMessage(parentId, model, newId); });
}
Id ThreadedChatStore::beginRegeneration(Id assistantMessageId, const QString& model, Id newId) {
  return call([&](ChatStore& s) { return s.beginRegeneration(assistantMessageId, model, newId); });
}

// The queued writes copy their arguments: the caller's may be gone when they run. An answer
// whose row is not there (the queued write that was to create it failed, and said so) is
// skipped rather than reported once more for each of its writes.
void ThreadedChatStore::checkpoint(Id messageId, const QString& textSoFar) {
  post([=](ChatStore& s) {
    if (s.message(messageId)) s.checkpoint(messageId, textSoFar);
  }, messageId);
}
void ThreadedChatStore::checkpoint(Id messageId, const QString& textSoFar,
                                   const QString& reasoningSoFar, double reasoningMs) {
  post([=](ChatStore& s) {
    if (s.message(messageId)) s.checkpoint(messageId, textSoFar, reasoningSoFar, reasoningMs);
  }, messageId);
}
void ThreadedChatStore::finishAssistantMessage(Id messageId, const QString& text,
                                               MessageStatus status,
                                               const std::optional<MessageStats>& stats) {
  post([=](ChatStore& s) {
    if (s.message(messageId)) s.finishAssistantMessage(messageId, text, status, stats);
  });
}
void ThreadedChatStore::setReasoning(Id messageId, const QString& reasoning, double ms) {
  post([=](ChatStore& s) {
    if (s.message(messageId)) s.setReasoning(messageId, reasoning, ms);
  });
}

std::optional<Message> ThreadedChatStore::message(Id messageId) const {
  return call([&](ChatStore& s) { return s.message(messageId); });
}
QList<Message> ThreadedChatStore::activeBranch(Id conversationId) const {
  return call([&](ChatStore& s) { return s.activeBranch(conversationId); });
}
QList<Message> ThreadedChatStore::children(Id conversationId, Id parentId) const {
  return call([&](ChatStore& s) { return s.children(conversationId, parentId); });
}
SiblingInfo ThreadedChatStore::siblings(Id messageId) const {
  return call([&](ChatStore& s) { return s.siblings(messageId); });
}
void ThreadedChatStore::setActiveLeaf(Id conversationId, Id messageId) {
  call([&](ChatStore& s) { s.setActiveLeaf(conversationId, messageId); });
}
Id ThreadedChatStore::selectBranch(Id messageId) {
  return call([&](ChatStore& s) { return s.selectBranch(messageId); });
}
std::optional<MessageStats> ThreadedChatStore::stats(Id messageId) const {
  return call([&](ChatStore& s) { return s.stats(messageId); });
}

QList<SearchHit> ThreadedChatStore::search(const QString& query, int limit,
                                           const QString& matchStart, const QString& matchEnd) const {
  return call([&](ChatStore& s) { return s.search(query, limit, matchStart, matchEnd); });
}

QJsonObject ThreadedChatStore::conversationSettings(Id conversationId) const {
  return call([&](ChatStore& s) { return s.conversationSettings(conversationId); });
}
void ThreadedChatStore::setConversationSettings(Id conversationId, const QJsonObject& settings) {
  call([&](ChatStore& s) { s.setConversationSettings(conversationId, settings); });
}
QJsonObject ThreadedChatStore::defaultConversationSettings() const {
  return call([](ChatStore& s) { return s.defaultConversationSettings(); });
}
void ThreadedChatStore::setDefaultConversationSettings(const QJsonObject& settings) {
  call([&](ChatStore& s) { s.setDefaultConversationSettings(settings); });
}
QJsonObject ThreadedChatStore::effectiveSettings(Id conversationId,
                                                 const QJsonObject& builtInDefaults) const {
  return call([&](ChatStore& s) { return s.effectiveSettings(conversationId, builtInDefaults); });
}
QJsonValue ThreadedChatStore::appSetting(const QString& key, const QJsonValue& fallback) const {
  return call([&](ChatStore& s) { return s.appSetting(key, fallback); });
}
void ThreadedChatStore::setAppSetting(const QString& key, const QJsonValue& value) {
  call([&](ChatStore& s) { s.setAppSetting(key, value); });
}

}  // namespace ember::store
