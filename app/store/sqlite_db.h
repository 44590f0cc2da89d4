#pragma once
// A thin RAII layer over the sqlite3 C API: a connection, prepared statements with bound
// parameters (the only way values reach SQL here; nothing is glued into SQL text), and an
// IMMEDIATE transaction that rolls back unless committed. Every failure becomes a StoreError whose
// message says what was being done ("saving your message"), to which file, and why.
#include <QByteArray>
#include <QString>
#include <optional>

#include "store/store_error.h"

struct sqlite3;
struct sqlite3_stmt;

namespace ember::store::sql {

class Database {
 public:
  Database() = default;
  // Opens (creating when missing) a read-write connection with extended result codes and the
  // given busy timeout, or a read-only one on an existing file. Throws StoreError (Io when the
  // file cannot be opened).
  Database(const QString& path, int busyTimeoutMs, bool readOnly = false);
  ~Database();
  Database(Database&& other) noexcept;
  Database& operator=(Database&& other) noexcept;
  Database(const Database&) = delete;
  Database& operator=(const Database&) = delete;

  bool isOpen() const { return db_ != nullptr; }
  void close();
  sqlite3* handle() const { return db_; }
  const QString& path() const { return path_; }
  int busyTimeoutMs() const { return busyTimeoutMs_; }
  bool readOnly() const { return readOnly_; }
  // Why this connection is read-only, in words for the user; part of every refused write's
  // message.
  void setReadOnlyReason(const QString& reason) { readOnlyReason_ = reason; }

  // Runs SQL text without parameters: DDL and PRAGMAs with constant values only.
  void exec(const char* sqlText);
  bool tryExec(const char* sqlText) noexcept;  // for destructors: reports failure, never throws
  qint64 lastInsertId() const;
  int changes() const;

  // What the store is doing right now, in words for the user ("saving your message"); used in
  // error messages. ActionScope sets and restores it.
  const char* action() const { return action_; }
  void setAction(const char* action) { action_ = action; }

  // Throws the StoreError that matches SQLite result code `rc` on this connection.
  [[noreturn]] void fail(int rc) const;

 private:
  sqlite3* db_ = nullptr;
  QString path_;
  int busyTimeoutMs_ = 0;
  bool readOnly_ = false;
  QString readOnlyReason_;
  const char* action_ = "using the chat database";
};

class ActionScope {
 public:
  ActionScope(Database& db, const char* action) : db_(db), previous_(db.action()) {
    db.setAction(action);
  }
  ~ActionScope() { db_.setAction(previous_); }
  ActionScope(const ActionScope&) = delete;
  ActionScope& operator=(const ActionScope&) = delete;

 private:
  Database& db_;
  const char* previous_;
};

class Statement {
 public:
  Statement(Database& db, const char* sqlText);
  ~Statement();
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;

  // Parameters are 1-based, as in SQLite. A std::nullopt binds NULL.
  Statement& bind(int index, qint64 value);
  Statement& bind(int index, int value) { return bind(index, static_cast<qint64>(value)); }
  Statement& bind(int index, double value);
  Statement& bind(int index, const QString& value);
  Statement& bind(int index, const QByteArray& value);  // a BLOB
  Statement& bind(int index, std::optional<qint64> value);
  Statement& bindNull(int index);

  // Binds all arguments in order from parameter 1.
  template <class... Args>
  Statement& bindAll(const Args&... args) {
    int index = 1;
    (bind(index++, args), ...);
    return *this;
  }

  bool step();  // true while a row is available
  void run();   // steps to completion, ignoring rows
  void reset();

  bool isNull(int column) const;
  qint64 int64(int column) const;
  std::optional<qint64> optionalInt64(int column) const;
  double real(int column) const;
  QString text(int column) const;
  QByteArray blob(int column) const;

 private:
  Database& db_;
  sqlite3_stmt* stmt_ = nullptr;
};

// BEGIN IMMEDIATE takes the write lock up front, so a busy database is reported at the start
// (after the busy timeout) rather than half-way through, and WAL snapshots cannot go stale.
class Transaction {
 public:
  explicit Transaction(Database& db);
  ~Transaction();  // rolls back when commit() was not reached
  Transaction(const Transaction&) = delete;
  Transaction& operator=(const Transaction&) = delete;
  void commit();

 private:
  Database& db_;
  bool open_ = false;
};

// Runs a query that returns a single value (e.g. a PRAGMA); nullopt when it returns no row.
std::optional<qint64> queryInt(Database& db, const char* sqlText);
QString queryText(Database& db, const char* sqlText);

}  // namespace ember::store::sql
