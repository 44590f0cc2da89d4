#include "store/export/sqlite_handle.h"

namespace ember::chatexport {

Db::Db(const std::string& path, bool writable) : path_(path) {
  const int flags = writable ? SQLITE_OPEN_READWRITE : SQLITE_OPEN_READONLY;
  if (sqlite3_open_v2(path.c_str(), &db_, flags, nullptr) != SQLITE_OK) {
    const std::string why = db_ ? sqlite3_errmsg(db_) : "out of memory";
    sqlite3_close(db_);
    db_ = nullptr;
    throw ExportError("cannot open the chat database " + path + ": " + why);
  }
  sqlite3_busy_timeout(db_, 5000);  // the app may be writing
  if (writable) exec("PRAGMA foreign_keys = ON");
}

void Db::exec(const char* sql) {
  char* message = nullptr;
  if (sqlite3_exec(db_, sql, nullptr, nullptr, &message) != SQLITE_OK) {
    const std::string why = message ? message : sqlite3_errmsg(db_);
    sqlite3_free(message);
    throw ExportError(path_ + ": " + why);
  }
}

void Db::fail(const std::string& what) const {
  throw ExportError(path_ + ": " + what + ": " + sqlite3_errmsg(db_));
}

Stmt::Stmt(const Db& db, const char* sql) : db_(db) {
  if (sqlite3_prepare_v2(db.get(), sql, -1, &stmt_, nullptr) != SQLITE_OK)
    db.fail("not an Ember chat database of a known version");
}

bool Stmt::step() {
  const int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  db_.fail("reading or writing failed");
}

std::string Stmt::text(int column) const {
  const auto* p = reinterpret_cast<const char*>(sqlite3_column_text(stmt_, column));
  return p ? std::string(p, static_cast<size_t>(sqlite3_column_bytes(stmt_, column))) : "";
}

void Stmt::check(int rc) const {
  if (rc != SQLITE_OK) db_.fail("binding a value failed");
}

}  // namespace ember::chatexport
