#include "store/sqlite_db.h"

#include <sqlite3.h>

#include <utility>

namespace ember::store::sql {
namespace {

StoreError::Kind kindOf(int rc) {
  switch (rc & 0xff) {
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
    // WAL: a lock another connection kept holding while SQLite retried (seen under injected lock
    // faults; the message read "SQLite reported an error ... (locking protocol)").
    case SQLITE_PROTOCOL: return StoreError::Kind::Busy;
    case SQLITE_FULL: return StoreError::Kind::DiskFull;
    case SQLITE_IOERR:
    case SQLITE_CANTOPEN:
    case SQLITE_READONLY:
    case SQLITE_PERM:
    case SQLITE_AUTH: return StoreError::Kind::Io;
    case SQLITE_CORRUPT:
    case SQLITE_NOTADB: return StoreError::Kind::Corrupt;
    default: return StoreError::Kind::Internal;
  }
}

QString describe(StoreError::Kind kind, const QString& path, const char* action, int busyMs,
                 const QString& detail, const QString& readOnlyReason = {}) {
  const QString what = QStringLiteral("Ember could not finish %1").arg(QString::fromUtf8(action));
  switch (kind) {
    case StoreError::Kind::Busy:
      return QStringLiteral("%1: the chat database %2 is locked by another program (is another "
                            "Ember window open?). Waited %3 ms. Close the other program and try "
                            "again; nothing already saved was lost.")
          .arg(what, path)
          .arg(busyMs);
    case StoreError::Kind::DiskFull:
      return QStringLiteral("%1: the disk holding %2 is full. Free some space and try again; "
                            "nothing already saved was lost.")
          .arg(what, path);
    case StoreError::Kind::Io:
      return QStringLiteral("%1: reading or writing %2 failed (%3). Check that the disk is "
                            "present and writable; nothing already saved was lost.")
          .arg(what, path, detail);
    case StoreError::Kind::ReadOnly:
      return QStringLiteral("%1: the chat database %2 is open read-only here: %3")
          .arg(what, path,
               readOnlyReason.isEmpty() ? QStringLiteral("it was opened for reading only.")
                                        : readOnlyReason);
    case StoreError::Kind::Corrupt:
      return QStringLiteral("%1: the chat database %2 is damaged (%3).").arg(what, path, detail);
    default:
      return QStringLiteral("%1: SQLite reported an error on %2 (%3).").arg(what, path, detail);
  }
}

}  // namespace

Database::Database(const QString& path, int busyTimeoutMs, bool readOnly)
    : path_(path), busyTimeoutMs_(busyTimeoutMs), readOnly_(readOnly) {
  const QByteArray utf8Path = path.toUtf8();
  const int flags = readOnly ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE;
  const int rc = sqlite3_open_v2(utf8Path.constData(), &db_, flags, nullptr);
  if (rc != SQLITE_OK) {
    const QString detail = db_ ? QString::fromUtf8(sqlite3_errmsg(db_))
                               : QString::fromUtf8(sqlite3_errstr(rc));
    sqlite3_close_v2(db_);
    db_ = nullptr;
    throw StoreError(kindOf(rc),
                     describe(kindOf(rc), path, "opening the chat database", 0, detail), rc);
  }
  sqlite3_extended_result_codes(db_, 1);
  sqlite3_busy_timeout(db_, busyTimeoutMs);
}

Database::~Database() { close(); }

Database::Database(Database&& other) noexcept
    : db_(std::exchange(other.db_, nullptr)),
      path_(std::move(other.path_)),
      busyTimeoutMs_(other.busyTimeoutMs_),
      readOnly_(other.readOnly_),
      readOnlyReason_(std::move(other.readOnlyReason_)),
      action_(other.action_) {}

Database& Database::operator=(Database&& other) noexcept {
  if (this != &other) {
    close();
    db_ = std::exchange(other.db_, nullptr);
    path_ = std::move(other.path_);
    busyTimeoutMs_ = other.busyTimeoutMs_;
    readOnly_ = other.readOnly_;
    readOnlyReason_ = std::move(other.readOnlyReason_);
    action_ = other.action_;
  }
  return *this;
}

void Database::close() {
  if (db_) {
    // close_v2 never fails for a busy connection: it finishes once all statements are gone,
    // and every Statement here is scoped, so this closes now.
    sqlite3_close_v2(db_);
    db_ = nullptr;
  }
}

void Database::exec(const char* sqlText) {
  const int rc = sqlite3_exec(db_, sqlText, nullptr, nullptr, nullptr);
  if (rc != SQLITE_OK) fail(rc);
}

bool Database::tryExec(const char* sqlText) noexcept {
  return db_ && sqlite3_exec(db_, sqlText, nullptr, nullptr, nullptr) == SQLITE_OK;
}

qint64 Database::lastInsertId() const { return sqlite3_last_insert_rowid(db_); }
int Database::changes() const { return sqlite3_changes(db_); }

void Database::fail(int rc) const {
  const QString detail = db_ ? QString::fromUtf8(sqlite3_errmsg(db_))
                             : QString::fromUtf8(sqlite3_errstr(rc));
  StoreError::Kind kind = kindOf(rc);
  if (readOnly_ && (rc & 0xff) == SQLITE_READONLY) kind = StoreError::Kind::ReadOnly;
  throw StoreError(kind, describe(kind, path_, action_, busyTimeoutMs_, detail, readOnlyReason_),
                   rc);
}

Statement::Statement(Database& db, const char* sqlText) : db_(db) {
  const int rc = sqlite3_prepare_v2(db.handle(), sqlText, -1, &stmt_, nullptr);
  if (rc != SQLITE_OK) db.fail(rc);
}

Statement::~Statement() { sqlite3_finalize(stmt_); }

Statement& Statement::bind(int index, qint64 value) {
  const int rc = sqlite3_bind_int64(stmt_, index, value);
  if (rc != SQLITE_OK) db_.fail(rc);
  return *this;
}

Statement& Statement::bind(int index, double value) {
  const int rc = sqlite3_bind_double(stmt_, index, value);
  if (rc != SQLITE_OK) db_.fail(rc);
  return *this;
}

Statement& Statement::bind(int index, const QString& value) {
  // An explicit byte length keeps embedded NUL characters; TRANSIENT copies the temporary.
  const QByteArray utf8 = value.toUtf8();
  const int rc = sqlite3_bind_text64(stmt_, index, utf8.constData(),
                                     static_cast<sqlite3_uint64>(utf8.size()), SQLITE_TRANSIENT,
                                     SQLITE_UTF8);
  if (rc != SQLITE_OK) db_.fail(rc);
  return *this;
}

Statement& Statement::bind(int index, const QByteArray& value) {
  const int rc = sqlite3_bind_blob64(stmt_, index, value.constData(),
                                     static_cast<sqlite3_uint64>(value.size()), SQLITE_TRANSIENT);
  if (rc != SQLITE_OK) db_.fail(rc);
  return *this;
}

Statement& Statement::bind(int index, std::optional<qint64> value) {
  return value ? bind(index, *value) : bindNull(index);
}

Statement& Statement::bindNull(int index) {
  const int rc = sqlite3_bind_null(stmt_, index);
  if (rc != SQLITE_OK) db_.fail(rc);
  return *this;
}

bool Statement::step() {
  const int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  db_.fail(rc);
}

void Statement::run() {
  while (step()) {
  }
}

void Statement::reset() {
  sqlite3_reset(stmt_);
  sqlite3_clear_bindings(stmt_);
}

bool Statement::isNull(int column) const {
  return sqlite3_column_type(stmt_, column) == SQLITE_NULL;
}

qint64 Statement::int64(int column) const { return sqlite3_column_int64(stmt_, column); }

std::optional<qint64> Statement::optionalInt64(int column) const {
  if (isNull(column)) return std::nullopt;
  return int64(column);
}

double Statement::real(int column) const { return sqlite3_column_double(stmt_, column); }

QString Statement::text(int column) const {
  const auto* data = reinterpret_cast<const char*>(sqlite3_column_text(stmt_, column));
  const int bytes = sqlite3_column_bytes(stmt_, column);  // after column_text, as SQLite asks
  return data ? QString::fromUtf8(data, bytes) : QString();
}

QByteArray Statement::blob(int column) const {
  const void* data = sqlite3_column_blob(stmt_, column);
  const int bytes = sqlite3_column_bytes(stmt_, column);
  return data ? QByteArray(static_cast<const char*>(data), bytes) : QByteArray();
}

Transaction::Transaction(Database& db) : db_(db) {
  if (db_.readOnly()) db_.fail(SQLITE_READONLY);  // refused at once, before any lock is taken
  db_.exec("BEGIN IMMEDIATE");
  open_ = true;
}

Transaction::~Transaction() {
  if (open_) db_.tryExec("ROLLBACK");
}

void Transaction::commit() {
  db_.exec("COMMIT");
  open_ = false;
}

std::optional<qint64> queryInt(Database& db, const char* sqlText) {
  Statement statement(db, sqlText);
  if (!statement.step()) return std::nullopt;
  return statement.int64(0);
}

QString queryText(Database& db, const char* sqlText) {
  Statement statement(db, sqlText);
  return statement.step() ? statement.text(0) : QString();
}

}  // namespace ember::store::sql
