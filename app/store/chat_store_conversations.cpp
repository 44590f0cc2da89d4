// ChatStore: conversations and settings.
#include <QJsonArray>
#include <QJsonDocument>

#include "store/chat_store.h"

namespace ember::store {
namespace {

constexpr const char* kDefaultsKey = "conversationDefaults";

qint64 nowMs() { return QDateTime::currentMSecsSinceEpoch(); }

// updated_at orders the sidebar, so it must follow the order of activity even when two changes
// fall in the same millisecond or the clock steps back: at least one past the newest so far.
constexpr const char* kNextUpdateTime =
    "max(?1, (SELECT coalesce(max(updated_at), 0) + 1 FROM conversations))";

QDateTime fromMs(qint64 ms) { return QDateTime::fromMSecsSinceEpoch(ms, Qt::UTC); }

// A JSON value as stored text: a lone value is written as the element of a one-element array
// with the brackets removed, so the column holds plain JSON ("0.7", "\"text\"", "{...}").
QString valueToJson(const QJsonValue& value) {
  const QByteArray wrapped = QJsonDocument(QJsonArray{value}).toJson(QJsonDocument::Compact);
  return QString::fromUtf8(wrapped.mid(1, wrapped.size() - 2));
}

std::optional<QJsonValue> valueFromJson(const QString& text) {
  const QJsonDocument doc = QJsonDocument::fromJson("[" + text.toUtf8() + "]");
  if (!doc.isArray() || doc.array().size() != 1) return std::nullopt;
  return doc.array().at(0);
}

QJsonObject objectFromJson(const QString& text) {
  return QJsonDocument::fromJson(text.toUtf8()).object();  // {} for anything unreadable
}

QString objectToJson(const QJsonObject& object) {
  return QString::fromUtf8(QJsonDocument(object).toJson(QJsonDocument::Compact));
}

void requireChanged(sql::Database& db, Id conversationId) {
  if (db.changes() == 0) {
    throw StoreError(StoreError::Kind::NotFound,
                     QStringLiteral("Conversation %1 does not exist (was it deleted?).")
                         .arg(conversationId));
  }
}

constexpr const char* kConversationColumns =
    "SELECT id, title, created_at, updated_at, model_path, active_leaf_id, pinned, deleted_at "
    "FROM conversations ";

Conversation readConversation(const sql::Statement& row) {
  Conversation c;
  c.id = row.int64(0);
  c.title = row.text(1);
  c.createdAt = fromMs(row.int64(2));
  c.updatedAt = fromMs(row.int64(3));
  c.modelPath = row.text(4);
  c.activeLeafId = row.optionalInt64(5).value_or(0);
  c.pinned = row.int64(6) != 0;
  if (const auto deleted = row.optionalInt64(7)) c.deletedAt = fromMs(*deleted);
  return c;
}

}  // namespace

Id ChatStore::createConversation(const QString& title, const QString& modelPath, Id newId) {
  sql::ActionScope scope(db(), "creating a conversation");
  if (newId != 0 && conversation(newId))
    throw StoreError(StoreError::Kind::InvalidInput,
                     QStringLiteral("Conversation id %1 is already taken.").arg(newId));
  const qint64 now = nowMs();
  sql::Statement insert(db_, (std::string("INSERT INTO conversations (created_at, updated_at, "
                                          "title, model_path, id) VALUES (?1, ") +
                             kNextUpdateTime + ", ?2, ?3, ?4)")
                                .c_str());
  // NULL: SQLite picks the id.
  insert.bindAll(now, title, modelPath, newId > 0 ? std::optional<Id>(newId) : std::nullopt)
      .run();
  return db_.lastInsertId();
}

void ChatStore::renameConversation(Id conversationId, const QString& title) {
  sql::ActionScope scope(db(), "renaming the conversation");
  sql::Statement update(db_, "UPDATE conversations SET title = ?1 WHERE id = ?2");
  update.bindAll(title, conversationId).run();
  requireChanged(db_, conversationId);
}

void ChatStore::setConversationModel(Id conversationId, const QString& modelPath) {
  sql::ActionScope scope(db(), "saving the conversation's model");
  sql::Statement update(db_, "UPDATE conversations SET model_path = ?1 WHERE id = ?2");
  update.bindAll(modelPath, conversationId).run();
  requireChanged(db_, conversationId);
}

void ChatStore::deleteConversation(Id conversationId) {
  sql::ActionScope scope(db(), "deleting the conversation");
  // Foreign keys cascade to messages and their stats; the delete triggers unindex the text.
  sql::Statement remove(db_, "DELETE FROM conversations WHERE id = ?1");
  remove.bindAll(conversationId).run();
  requireChanged(db_, conversationId);
}

// Pinned ones first, then by activity; those in the trash are left out.
QList<Conversation> ChatStore::listConversations() const {
  sql::ActionScope scope(db(), "reading the list of conversations");
  sql::Statement query(db_, (std::string(kConversationColumns) +
                             "WHERE deleted_at IS NULL "
                             "ORDER BY pinned DESC, updated_at DESC, id DESC").c_str());
  QList<Conversation> result;
  while (query.step()) result.push_back(readConversation(query));
  return result;
}

std::optional<Conversation> ChatStore::conversation(Id conversationId) const {
  sql::ActionScope scope(db(), "reading a conversation");
  sql::Statement query(db_, (std::string(kConversationColumns) + "WHERE id = ?1").c_str());
  query.bindAll(conversationId);
  if (!query.step()) return std::nullopt;
  return readConversation(query);
}

void ChatStore::setPinned(Id conversationId, bool pinned) {
  sql::ActionScope scope(db(), pinned ? "pinning the conversation" : "unpinning the conversation");
  sql::Statement update(db_, "UPDATE conversations SET pinned = ?1 WHERE id = ?2");
  update.bindAll(qint64(pinned ? 1 : 0), conversationId).run();
  requireChanged(db_, conversationId);
}

void ChatStore::trashConversation(Id conversationId) {
  sql::ActionScope scope(db(), "deleting the conversation");
  sql::Statement update(db_, "UPDATE conversations SET deleted_at = ?1 WHERE id = ?2");
  update.bindAll(nowMs(), conversationId).run();
  requireChanged(db_, conversationId);
}

void ChatStore::restoreConversation(Id conversationId) {
  sql::ActionScope scope(db(), "restoring the conversation");
  sql::Statement update(db_, "UPDATE conversations SET deleted_at = NULL WHERE id = ?1");
  update.bindAll(conversationId).run();
  requireChanged(db_, conversationId);
}

QList<Conversation> ChatStore::trashedConversations() const {
  sql::ActionScope scope(db(), "reading the deleted conversations");
  sql::Statement query(db_, (std::string(kConversationColumns) +
                             "WHERE deleted_at IS NOT NULL ORDER BY deleted_at DESC, id DESC")
                                .c_str());
  QList<Conversation> result;
  while (query.step()) result.push_back(readConversation(query));
  return result;
}

int ChatStore::purgeTrash(const QDateTime& cutoff) {
  sql::ActionScope scope(db(), "emptying the deleted conversations");
  // Foreign keys cascade to messages and their stats; the delete triggers unindex the text.
  sql::Statement remove(db_, "DELETE FROM conversations WHERE deleted_at <= ?1");
  remove.bindAll(cutoff.toMSecsSinceEpoch()).run();
  return db_.changes();
}

void ChatStore::touchConversation(Id conversationId, std::optional<Id> activeLeafId) {
  // A NULL leaf keeps the current one.
  sql::Statement update(db_, (std::string("UPDATE conversations SET updated_at = ") +
                              kNextUpdateTime +
                              ", active_leaf_id = coalesce(?2, active_leaf_id) WHERE id = ?3")
                                 .c_str());
  update.bindAll(nowMs(), activeLeafId, conversationId).run();
  requireChanged(db_, conversationId);
}

QJsonObject ChatStore::conversationSettings(Id conversationId) const {
  sql::ActionScope scope(db(), "reading the conversation's settings");
  sql::Statement query(db_, "SELECT settings FROM conversations WHERE id = ?1");
  query.bindAll(conversationId);
  if (!query.step()) {
    throw StoreError(StoreError::Kind::NotFound,
                     QStringLiteral("Conversation %1 does not exist.").arg(conversationId));
  }
  return objectFromJson(query.text(0));
}

void ChatStore::setConversationSettings(Id conversationId, const QJsonObject& settings) {
  sql::ActionScope scope(db(), "saving the conversation's settings");
  sql::Statement update(db_, "UPDATE conversations SET settings = ?1 WHERE id = ?2");
  update.bindAll(objectToJson(settings), conversationId).run();
  requireChanged(db_, conversationId);
}

QJsonObject ChatStore::defaultConversationSettings() const {
  return appSetting(QString::fromLatin1(kDefaultsKey)).toObject();
}

void ChatStore::setDefaultConversationSettings(const QJsonObject& settings) {
  setAppSetting(QString::fromLatin1(kDefaultsKey), settings);
}

QJsonObject ChatStore::effectiveSettings(Id conversationId,
                                         const QJsonObject& builtInDefaults) const {
  QJsonObject result = builtInDefaults;
  for (const QJsonObject& layer :
       {defaultConversationSettings(), conversationSettings(conversationId)}) {
    for (auto it = layer.begin(); it != layer.end(); ++it) result.insert(it.key(), it.value());
  }
  return result;
}

QJsonValue ChatStore::appSetting(const QString& key, const QJsonValue& fallback) const {
  sql::ActionScope scope(db(), "reading the app settings");
  sql::Statement query(db_, "SELECT value FROM app_settings WHERE key = ?1");
  query.bindAll(key);
  if (!query.step()) return fallback;
  return valueFromJson(query.text(0)).value_or(fallback);
}

void ChatStore::setAppSetting(const QString& key, const QJsonValue& value) {
  sql::ActionScope scope(db(), "saving the app settings");
  sql::Statement upsert(db_,
                        "INSERT INTO app_settings (key, value) VALUES (?1, ?2) "
                        "ON CONFLICT (key) DO UPDATE SET value = excluded.value");
  upsert.bindAll(key, valueToJson(value)).run();
}

QJsonObject ChatStore::appSettings() const {
  sql::ActionScope scope(db(), "reading the app settings");
  sql::Statement query(db_, "SELECT key, value FROM app_settings");
  QJsonObject all;
  while (query.step())
    if (const auto value = valueFromJson(query.text(1))) all.insert(query.text(0), *value);
  return all;
}

Id ChatStore::largestConversationId() const {
  sql::ActionScope scope(db(), "reading the conversation ids");
  sql::Statement query(db_, "SELECT coalesce(max(id), 0) FROM conversations");
  return query.step() ? query.int64(0) : 0;
}

}  // namespace ember::store
