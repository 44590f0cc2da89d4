// ChatStore: the message tree and streaming answers.
#include <QDateTime>

#include "store/chat_store.h"

namespace ember::store {
namespace {

constexpr const char* kMessageColumns =
    "m.id, m.conversation_id, m.parent_id, m.role, m.content, m.created_at, m.status, m.model, "
    "m.finish_reason, m.reasoning, m.reasoning_ms";

Message readMessage(const sql::Statement& row) {
  Message m;
  m.id = row.int64(0);
  m.conversationId = row.int64(1);
  m.parentId = row.optionalInt64(2).value_or(0);
  m.role = roleFromString(row.text(3)).value_or(Role::User);  // CHECK constraint keeps it valid
  m.content = row.text(4);
  m.createdAt = QDateTime::fromMSecsSinceEpoch(row.int64(5), Qt::UTC);
  m.status = statusFromString(row.text(6)).value_or(MessageStatus::Complete);
  m.model = row.text(7);
  m.finishReason = row.text(8);
  m.reasoning = row.text(9);
  m.reasoningMs = row.real(10);
  return m;
}

QList<Message> readMessages(sql::Statement& query) {
  QList<Message> result;
  while (query.step()) result.push_back(readMessage(query));
  return result;
}

std::string select(const char* rest) {
  return std::string("SELECT ") + kMessageColumns + " FROM messages m " + rest;
}

std::optional<Id> optionalId(Id id) { return id > 0 ? std::optional<Id>(id) : std::nullopt; }

StoreError invalid(const QString& message) {
  return StoreError(StoreError::Kind::InvalidInput, message);
}

}  // namespace

Message ChatStore::requireMessage(Id messageId) const {
  std::optional<Message> found = message(messageId);
  if (!found) {
    throw StoreError(StoreError::Kind::NotFound,
                     QStringLiteral("Message %1 does not exist (was its conversation deleted?).")
                         .arg(messageId));
  }
  return *found;
}

std::optional<Message> ChatStore::message(Id messageId) const {
  sql::ActionScope scope(db(), "reading a message");
  sql::Statement query(db_, select("WHERE m.id = ?1").c_str());
  query.bindAll(messageId);
  if (!query.step()) return std::nullopt;
  return readMessage(query);
}

Id ChatStore::insertMessage(Id conversationId, Id parentId, Role role, const QString& content,
                            MessageStatus status, const QString& model, Id newId) {
  // Runs inside the caller's transaction.
  if (!conversation(conversationId)) {
    throw StoreError(StoreError::Kind::NotFound,
                     QStringLiteral("Conversation %1 does not exist (was it deleted?).")
                         .arg(conversationId));
  }
  if (parentId != 0 && requireMessage(parentId).conversationId != conversationId) {
    throw invalid(QStringLiteral("Message %1 belongs to another conversation than %2.")
                      .arg(parentId)
                      .arg(conversationId));
  }
  if (newId != 0 && message(newId))
    throw invalid(QStringLiteral("Message id %1 is already taken.").arg(newId));
  sql::Statement insert(db_,
                        "INSERT INTO messages (conversation_id, parent_id, role, content, "
                        "created_at, status, model, id) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)");
  insert.bindAll(conversationId, optionalId(parentId), roleName(role), content,
                 QDateTime::currentMSecsSinceEpoch(), statusName(status), model,
                 optionalId(newId));  // NULL: SQLite picks the id
  insert.run();
  const Id id = db_.lastInsertId();
  touchConversation(conversationId, id);
  return id;
}

Id ChatStore::addMessage(Id conversationId, Id parentId, Role role, const QString& content,
                         Id newId) {
  if (role == Role::User && content.trimmed().isEmpty())
    throw invalid(QStringLiteral("An empty message is not sent."));
  sql::ActionScope scope(db(), "saving your message");
  sql::Transaction transaction(db_);
  const Id id =
      insertMessage(conversationId, parentId, role, content, MessageStatus::Complete, {}, newId);
  transaction.commit();
  return id;
}

Id ChatStore::editMessage(Id messageId, const QString& newContent, Id newId) {
  const Message original = requireMessage(messageId);
  if (original.role != Role::User)
    throw invalid(QStringLiteral("Only your own messages can be edited."));
  return addMessage(original.conversationId, original.parentId, Role::User, newContent, newId);
}

Id ChatStore::beginAssistantMessage(Id parentId, const QString& model, Id newId) {
  sql::ActionScope scope(db(), "starting the answer");
  sql::Transaction transaction(db_);
  const Message parent = requireMessage(parentId);
  const Id id = insertMessage(parent.conversationId, parentId, Role::Assistant, {},
                              MessageStatus::Streaming, model, newId);
  transaction.commit();
  return id;
}

Id ChatStore::beginRegeneration(Id assistantMessageId, const QString& model, Id newId) {
  const Message previous = requireMessage(assistantMessageId);
  if (previous.role != Role::Assistant || previous.parentId == 0)
    throw invalid(QStringLiteral("Only an answer can be regenerated."));
  return beginAssistantMessage(previous.parentId, model, newId);
}

void ChatStore::checkpoint(Id messageId, const QString& textSoFar) {
  checkpoint(messageId, textSoFar, QString(), -1);
}

void ChatStore::checkpoint(Id messageId, const QString& textSoFar, const QString& reasoningSoFar,
                           double reasoningMs) {
  sql::ActionScope scope(db(), "saving the answer so far");
  // No fsync for a partial answer (see the header); FULL again for everything else, even when
  // the update throws.
  db_.exec("PRAGMA synchronous = NORMAL");
  struct RestoreFull {
    sql::Database& db;
    ~RestoreFull() { db.tryExec("PRAGMA synchronous = FULL"); }
  } restore{db_};
  // reasoningMs < 0: the text only (the reasoning columns are left as they are).
  sql::Statement update(db_,
                        "UPDATE messages SET content = ?1, "
                        "reasoning = CASE WHEN ?3 < 0 THEN reasoning ELSE ?4 END, "
                        "reasoning_ms = CASE WHEN ?3 < 0 THEN reasoning_ms ELSE ?3 END "
                        "WHERE id = ?2 AND status = 'streaming'");
  update.bindAll(textSoFar, messageId, reasoningMs, reasoningSoFar).run();
  if (db_.changes() == 0) {
    requireMessage(messageId);
    throw invalid(QStringLiteral("Message %1 is not being streamed.").arg(messageId));
  }
}

void ChatStore::finishAssistantMessage(Id messageId, const QString& text, MessageStatus status,
                                       const std::optional<MessageStats>& stats) {
  if (status == MessageStatus::Streaming)
    throw invalid(QStringLiteral("An answer cannot be finished as streaming."));
  sql::ActionScope scope(db(), "saving the answer");
  sql::Transaction transaction(db_);
  const Message existing = requireMessage(messageId);
  if (existing.role != Role::Assistant)
    throw invalid(QStringLiteral("Message %1 is not an answer.").arg(messageId));
  const QString finishReason = stats ? stats->finishReason : statusName(status);
  sql::Statement update(db_,
                        "UPDATE messages SET content = ?1, status = ?2, finish_reason = ?3 "
                        "WHERE id = ?4");
  update.bindAll(text, statusName(status), finishReason, messageId).run();
  if (stats) saveStats(messageId, *stats);
  touchConversation(existing.conversationId, std::nullopt);
  transaction.commit();
}

void ChatStore::setReasoning(Id messageId, const QString& reasoning, double ms) {
  sql::ActionScope scope(db(), "saving the answer's reasoning");
  sql::Statement update(db_, "UPDATE messages SET reasoning = ?1, reasoning_ms = ?2 WHERE id = ?3");
  update.bindAll(reasoning, ms, messageId).run();
  if (db_.changes() == 0)
    throw StoreError(StoreError::Kind::NotFound,
                     QStringLiteral("Message %1 does not exist.").arg(messageId));
}

QList<Message> ChatStore::activeBranch(Id conversationId) const {
  sql::ActionScope scope(db(), "reading the conversation");
  // Walk from the active leaf up to the root; depth orders the result root first.
  sql::Statement query(db_, (std::string("WITH RECURSIVE branch(id, depth) AS ("
                                         "  SELECT active_leaf_id, 0 FROM conversations "
                                         "  WHERE id = ?1 AND active_leaf_id IS NOT NULL "
                                         "  UNION ALL "
                                         "  SELECT p.parent_id, b.depth + 1 FROM messages p "
                                         "  JOIN branch b ON p.id = b.id "
                                         "  WHERE p.parent_id IS NOT NULL) ") +
                             select("JOIN branch ON m.id = branch.id ORDER BY branch.depth DESC"))
                                .c_str());
  query.bindAll(conversationId);
  return readMessages(query);
}

QList<Message> ChatStore::children(Id conversationId, Id parentId) const {
  sql::ActionScope scope(db(), "reading the conversation");
  sql::Statement query(db_, select("WHERE m.conversation_id = ?1 AND m.parent_id IS ?2 "
                                   "ORDER BY m.id")
                                .c_str());
  query.bindAll(conversationId, optionalId(parentId));
  return readMessages(query);
}

SiblingInfo ChatStore::siblings(Id messageId) const {
  const Message self = requireMessage(messageId);
  SiblingInfo info;
  for (const Message& sibling : children(self.conversationId, self.parentId)) {
    if (sibling.id == messageId) info.index = static_cast<int>(info.ids.size());
    info.ids.push_back(sibling.id);
  }
  return info;
}

void ChatStore::setActiveLeaf(Id conversationId, Id messageId) {
  if (requireMessage(messageId).conversationId != conversationId) {
    throw invalid(QStringLiteral("Message %1 belongs to another conversation than %2.")
                      .arg(messageId)
                      .arg(conversationId));
  }
  sql::ActionScope scope(db(), "switching the branch");
  sql::Statement update(db_, "UPDATE conversations SET active_leaf_id = ?1 WHERE id = ?2");
  update.bindAll(messageId, conversationId).run();
}

Id ChatStore::selectBranch(Id messageId) {
  const Message self = requireMessage(messageId);
  Id leaf = messageId;
  {
    sql::ActionScope scope(db_, "switching the branch");
    // The newest message under `messageId` is a leaf: a child always has a larger id.
    sql::Statement query(db_,
                         "WITH RECURSIVE below(id) AS (SELECT ?1 UNION ALL "
                         "SELECT m.id FROM messages m JOIN below ON m.parent_id = below.id) "
                         "SELECT max(id) FROM below");
    query.bindAll(messageId);
    if (query.step()) leaf = query.int64(0);
  }
  setActiveLeaf(self.conversationId, leaf);
  return leaf;
}

}  // namespace ember::store

namespace ember::store {

Id ChatStore::largestMessageId() const {
  sql::ActionScope scope(db(), "reading the message ids");
  sql::Statement query(db_, "SELECT coalesce(max(id), 0) FROM messages");
  return query.step() ? query.int64(0) : 0;
}

}  // namespace ember::store
