#pragma once
// The few SQLite calls the exporter needs, with errors as ExportError (no Qt here).
#include <sqlite3.h>

#include <cstdint>
#include <optional>
#include <string>

#include "store/export/chat_export.h"

namespace ember::chatexport {

class Db {
 public:
  Db(const std::string& path, bool writable);
  ~Db() { sqlite3_close(db_); }
  Db(const Db&) = delete;
  Db& operator=(const Db&) = delete;
  sqlite3* get() const { return db_; }
  void exec(const char* sql);
  [[noreturn]] void fail(const std::string& what) const;

 private:
  sqlite3* db_ = nullptr;
  std::string path_;
};

class Stmt {
 public:
  Stmt(const Db& db, const char* sql);
  ~Stmt() { sqlite3_finalize(stmt_); }
  Stmt(const Stmt&) = delete;
  Stmt& operator=(const Stmt&) = delete;
  bool step();  // true: a row
  void reset() { sqlite3_reset(stmt_); sqlite3_clear_bindings(stmt_); }
  void bind(int index, int64_t value) { check(sqlite3_bind_int64(stmt_, index, value)); }
  void bind(int index, double value) { check(sqlite3_bind_double(stmt_, index, value)); }
  void bind(int index, const std::string& value) {
    check(sqlite3_bind_text(stmt_, index, value.data(), static_cast<int>(value.size()),
                            SQLITE_TRANSIENT));
  }
  void bindNull(int index) { check(sqlite3_bind_null(stmt_, index)); }
  int64_t int64(int column) const { return sqlite3_column_int64(stmt_, column); }
  double real(int column) const { return sqlite3_column_double(stmt_, column); }
  std::string text(int column) const;
  bool isNull(int column) const { return sqlite3_column_type(stmt_, column) == SQLITE_NULL; }

 private:
  void check(int rc) const;
  const Db& db_;
  sqlite3_stmt* stmt_ = nullptr;
};

}  // namespace ember::chatexport
