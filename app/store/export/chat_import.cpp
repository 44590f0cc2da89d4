// importJson: an "ember-chat-export" document added to the database as new conversations.
#include <map>
#include <set>

#include "store/export/chat_export.h"
#include "store/export/writer_lock.h"
#include "store/export/sqlite_handle.h"
#include "store/export/stats_columns.h"

namespace ember::chatexport {
namespace {

const std::set<std::string> kRoles = {"system", "user", "assistant"};
const std::set<std::string> kStatuses = {"complete", "interrupted", "stopped", "error",
                                         "streaming"};

[[noreturn]] void bad(const std::string& what) {
  throw ExportError("not an Ember chat export: " + what);
}

const Json& field(const Json& object, const char* key, const std::string& where) {
  if (!object.is_object() || !object.contains(key)) bad(where + " has no \"" + key + "\"");
  return object[key];
}

std::string text(const Json& object, const char* key, const std::string& where) {
  const Json& v = field(object, key, where);
  if (!v.is_string()) bad(where + ": \"" + key + "\" is not a string");
  return v.get<std::string>();
}

int64_t integer(const Json& object, const char* key, const std::string& where) {
  const Json& v = field(object, key, where);
  if (!v.is_number_integer()) bad(where + ": \"" + key + "\" is not an integer");
  return v.get<int64_t>();
}

void insertStats(const Db& db, int64_t messageId, const Json& stats, const std::string& where) {
  std::string sql = "INSERT INTO message_stats (message_id";
  std::string values = "?1";
  int index = 2;
  for (const StatsColumn& c : kStatsColumns) {
    sql += std::string(", ") + c.column;
    values += ", ?" + std::to_string(index++);
  }
  sql += ") VALUES (" + values + ")";
  Stmt insert(db, sql.c_str());
  insert.bind(1, messageId);
  index = 2;
  for (const StatsColumn& c : kStatsColumns) {
    const Json& v = field(stats, c.key, where + " stats");
    switch (c.type) {
      case ColumnType::Real:
        if (!v.is_number()) bad(where + ": stats." + c.key + " is not a number");
        insert.bind(index, v.get<double>());
        break;
      case ColumnType::Integer:
        if (!v.is_number_integer()) bad(where + ": stats." + c.key + " is not an integer");
        insert.bind(index, v.get<int64_t>());
        break;
      case ColumnType::Seed:
        if (!v.is_number_unsigned() && !v.is_number_integer())
          bad(where + ": stats.seed is not an integer");
        insert.bind(index, static_cast<int64_t>(v.get<uint64_t>()));
        break;
      case ColumnType::Text:
        if (!v.is_string()) bad(where + ": stats." + c.key + " is not a string");
        insert.bind(index, v.get<std::string>());
        break;
      case ColumnType::Json: insert.bind(index, v.dump()); break;
    }
    ++index;
  }
  insert.step();
}

// Inserts one conversation; returns its new id. Messages go parents first whatever their order
// in the file; every id is new, the file's ids only link its own messages.
int64_t insertConversation(const Db& db, const Json& c, int ordinal, ImportResult& result,
                           FirstIds& next) {
  const std::string where = "conversation " + std::to_string(ordinal + 1);
  Stmt conv(db, "INSERT INTO conversations (title, created_at, updated_at, model_path, settings, "
                "pinned, id) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)");
  if (next.conversation > 0) conv.bind(7, next.conversation++);
  else conv.bindNull(7);  // SQLite picks
  conv.bind(1, text(c, "title", where));
  conv.bind(2, integer(c, "createdAtMs", where));
  conv.bind(3, integer(c, "updatedAtMs", where));
  conv.bind(4, c.value("modelPath", std::string()));
  conv.bind(5, c.value("settings", Json::object()).dump());
  conv.bind(6, int64_t(c.value("pinned", false) ? 1 : 0));
  conv.step();
  const int64_t conversationId = sqlite3_last_insert_rowid(db.get());

  const Json& messages = field(c, "messages", where);
  if (!messages.is_array()) bad(where + ": \"messages\" is not an array");
  std::map<int64_t, const Json*> pending;
  for (const Json& m : messages) {
    const int64_t id = integer(m, "id", where + " message");
    if (!pending.emplace(id, &m).second) bad(where + ": message id " + std::to_string(id) + " twice");
  }
  std::map<int64_t, int64_t> newId;  // file id -> database id
  Stmt insert(db, "INSERT INTO messages (conversation_id, parent_id, role, content, created_at, "
                  "status, model, finish_reason, reasoning, reasoning_ms, id) "
                  "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)");
  while (!pending.empty()) {
    bool progressed = false;
    for (auto it = pending.begin(); it != pending.end();) {
      const Json& m = *it->second;
      const std::string mwhere = where + " message " + std::to_string(it->first);
      const Json& parent = field(m, "parentId", mwhere);
      if (!parent.is_null() && !newId.count(parent.get<int64_t>())) {
        if (!pending.count(parent.get<int64_t>()))
          bad(mwhere + ": its parent " + parent.dump() + " is not in the file");
        ++it;
        continue;
      }
      const std::string role = text(m, "role", mwhere);
      if (!kRoles.count(role)) bad(mwhere + ": unknown role \"" + role + "\"");
      std::string status = text(m, "status", mwhere);
      if (!kStatuses.count(status)) bad(mwhere + ": unknown status \"" + status + "\"");
      if (status == "streaming") status = "interrupted";  // nothing is generating it here
      insert.reset();
      insert.bind(1, conversationId);
      if (parent.is_null()) insert.bindNull(2);
      else insert.bind(2, newId.at(parent.get<int64_t>()));
      insert.bind(3, role);
      insert.bind(4, text(m, "content", mwhere));
      insert.bind(5, integer(m, "createdAtMs", mwhere));
      insert.bind(6, status);
      insert.bind(7, m.value("model", std::string()));
      insert.bind(8, m.value("finishReason", std::string()));
      insert.bind(9, m.value("reasoning", std::string()));
      insert.bind(10, m.value("reasoningMs", 0.0));
      if (next.message > 0) insert.bind(11, next.message++);
      else insert.bindNull(11);
      insert.step();
      const int64_t id = sqlite3_last_insert_rowid(db.get());
      newId[it->first] = id;
      if (m.contains("stats") && m["stats"].is_object()) insertStats(db, id, m["stats"], mwhere);
      ++result.messages;
      it = pending.erase(it);
      progressed = true;
    }
    if (!progressed) bad(where + ": the messages' parents form a loop");
  }
  if (c.contains("activeLeafId") && !c["activeLeafId"].is_null()) {
    const auto leaf = newId.find(c["activeLeafId"].get<int64_t>());
    if (leaf == newId.end()) bad(where + ": the active message is not in the file");
    Stmt update(db, "UPDATE conversations SET active_leaf_id = ?1 WHERE id = ?2");
    update.bind(1, leaf->second);
    update.bind(2, conversationId);
    update.step();
  }
  return conversationId;
}

ImportResult importChecked(const std::string& databasePath, const Json& document, WriterRole role,
                           FirstIds first);

}  // namespace

// A field of the wrong type (a number where text belongs) surfaces as nlohmann's type_error
// from the typed reads below; it is bad input like any other, reported the same way (and, like
// any other, before the import's transaction commits: nothing is half-imported).
ImportResult importJson(const std::string& databasePath, const Json& document, WriterRole role,
                        FirstIds first) {
  try {
    return importChecked(databasePath, document, role, first);
  } catch (const Json::type_error& e) {
    bad(std::string("a field has the wrong type (") + e.what() + ")");
  }
}

namespace {

ImportResult importChecked(const std::string& databasePath, const Json& document, WriterRole role,
                           FirstIds next) {
  if (!document.is_object() || document.value("format", std::string()) != kFormatName)
    bad("the \"format\" is not \"" + std::string(kFormatName) + "\"");
  if (document.value("version", 0) != kFormatVersion)
    bad("version " + document.value("version", Json(nullptr)).dump() + " (this Ember reads " +
        std::to_string(kFormatVersion) + ")");
  const Json& conversations = field(document, "conversations", "the file");
  if (!conversations.is_array()) bad("\"conversations\" is not an array");
  storelock::WriterLock lock;
  if (role == WriterRole::TakeLock) {
    lock = storelock::WriterLock(databasePath);
    if (lock.state() == storelock::WriterLock::State::HeldElsewhere) {
      throw ExportError(
          "the chat database " + databasePath + " is in use by another Ember process" +
          (lock.holderPid() > 0 ? " (id " + std::to_string(lock.holderPid()) + ")" : "") +
          "; import from that app's menu, or close it and run the import again. Nothing was "
          "imported.");
    }
  }
  Db db(databasePath, /*writable=*/true);
  {
    Stmt version(db, "PRAGMA user_version");
    if (!version.step() || version.int64(0) != 3)
      throw ExportError(databasePath + " is not at the chat database version this Ember writes "
                        "(open it in the app once first)");
  }
  db.exec("BEGIN IMMEDIATE");
  ImportResult result;
  try {
    int ordinal = 0;
    for (const Json& c : conversations)
      result.newConversationIds.push_back(insertConversation(db, c, ordinal++, result, next));
    db.exec("COMMIT");
  } catch (...) {
    sqlite3_exec(db.get(), "ROLLBACK", nullptr, nullptr, nullptr);
    throw;
  }
  result.conversations = static_cast<int>(result.newConversationIds.size());
  return result;
}

}  // namespace

std::pair<int64_t, int64_t> importCounts(const Json& document) {
  if (!document.is_object() || !document.contains("conversations") ||
      !document["conversations"].is_array())
    return {0, 0};
  int64_t messages = 0;
  for (const Json& c : document["conversations"])
    if (c.is_object() && c.contains("messages") && c["messages"].is_array())
      messages += static_cast<int64_t>(c["messages"].size());
  return {static_cast<int64_t>(document["conversations"].size()), messages};
}

}  // namespace ember::chatexport
