// exportJson: the chat database as an "ember-chat-export" document.
#include "store/export/chat_export.h"

#include "store/export/sqlite_handle.h"
#include "store/export/stats_columns.h"

namespace ember::chatexport {
namespace {

Json parsedOr(const std::string& text, Json fallback) {
  Json parsed = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  return parsed.is_discarded() ? fallback : parsed;
}

Json readStats(const Db& db, int64_t messageId) {
  std::string sql = "SELECT ";
  for (const StatsColumn& c : kStatsColumns) sql += std::string(c.column) + ", ";
  sql.resize(sql.size() - 2);
  sql += " FROM message_stats WHERE message_id = ?1";
  Stmt query(db, sql.c_str());
  query.bind(1, messageId);
  if (!query.step()) return nullptr;
  Json stats = Json::object();
  int i = 0;
  for (const StatsColumn& c : kStatsColumns) {
    switch (c.type) {
      case ColumnType::Real: stats[c.key] = query.real(i); break;
      case ColumnType::Integer: stats[c.key] = query.int64(i); break;
      case ColumnType::Text: stats[c.key] = query.text(i); break;
      case ColumnType::Json: stats[c.key] = parsedOr(query.text(i), nullptr); break;
      case ColumnType::Seed: stats[c.key] = static_cast<uint64_t>(query.int64(i)); break;
    }
    ++i;
  }
  return stats;
}

Json readMessages(const Db& db, int64_t conversationId, int version) {
  // Schema 2 keeps no reasoning.
  const std::string sql = std::string("SELECT id, parent_id, role, content, created_at, status, "
                                      "model, finish_reason, ") +
                          (version >= 3 ? "reasoning, reasoning_ms" : "'', 0") +
                          " FROM messages WHERE conversation_id = ?1 ORDER BY id";
  Stmt query(db, sql.c_str());
  query.bind(1, conversationId);
  Json messages = Json::array();
  while (query.step()) {
    Json m = Json::object();
    m["id"] = query.int64(0);
    m["parentId"] = query.isNull(1) ? Json(nullptr) : Json(query.int64(1));
    m["role"] = query.text(2);
    m["content"] = query.text(3);
    m["createdAtMs"] = query.int64(4);
    m["status"] = query.text(5);
    m["model"] = query.text(6);
    m["finishReason"] = query.text(7);
    m["reasoning"] = query.text(8);
    m["reasoningMs"] = query.real(9);
    messages.push_back(std::move(m));
  }
  for (Json& m : messages) m["stats"] = readStats(db, m["id"].get<int64_t>());
  return messages;
}

int schemaVersion(const Db& db) {
  Stmt query(db, "PRAGMA user_version");
  return query.step() ? static_cast<int>(query.int64(0)) : 0;
}

}  // namespace

Json exportJson(const std::string& databasePath, std::optional<int64_t> conversationId) {
  Db db(databasePath, /*writable=*/false);
  const int version = schemaVersion(db);
  if (version < 2 || version > 3)
    throw ExportError(databasePath + " is not an Ember chat database this version can read "
                      "(schema " + std::to_string(version) + ")");
  // Schema 2 has no trash and no pins.
  const std::string extra = version >= 3 ? "pinned, deleted_at IS NOT NULL" : "0, 0";
  std::string sql = "SELECT id, title, created_at, updated_at, model_path, active_leaf_id, "
                    "settings, " + extra + " FROM conversations";
  sql += conversationId ? " WHERE id = ?1" : " ORDER BY updated_at DESC, id DESC";
  Stmt query(db, sql.c_str());
  if (conversationId) query.bind(1, *conversationId);
  Json conversations = Json::array();
  while (query.step()) {
    if (!conversationId && query.int64(8) != 0) continue;  // in the trash
    Json c = Json::object();
    c["id"] = query.int64(0);
    c["title"] = query.text(1);
    c["createdAtMs"] = query.int64(2);
    c["updatedAtMs"] = query.int64(3);
    c["modelPath"] = query.text(4);
    c["activeLeafId"] = query.isNull(5) ? Json(nullptr) : Json(query.int64(5));
    c["settings"] = parsedOr(query.text(6), Json::object());
    c["pinned"] = query.int64(7) != 0;
    conversations.push_back(std::move(c));
  }
  if (conversationId && conversations.empty())
    throw ExportError("there is no conversation " + std::to_string(*conversationId) + " in " +
                      databasePath);
  for (Json& c : conversations) c["messages"] = readMessages(db, c["id"].get<int64_t>(), version);
  Json doc = Json::object();
  doc["format"] = kFormatName;
  doc["version"] = kFormatVersion;
  doc["conversations"] = std::move(conversations);
  return doc;
}

}  // namespace ember::chatexport
