#pragma once
// Helpers shared by the ChatStore tests (header-only: each test_*.cpp is its own executable).
// The checks here go around ChatStore, straight to SQLite, so that the store is judged by
// SQLite's own verdicts (integrity_check, FTS5 'integrity-check') and not by itself.
#include <sqlite3.h>

#include <QByteArray>
#include <QFile>
#include <QString>
#include <QStringList>
#include <QtTest>

#include "store/store_error.h"
#include "store/store_types.h"

// QCOMPARE prints enum values through these (found by argument-dependent lookup).
namespace ember::store {
inline char* toString(MessageStatus status) { return qstrdup(qPrintable(statusName(status))); }
inline char* toString(Role role) { return qstrdup(qPrintable(roleName(role))); }
inline char* toString(StoreError::Kind kind) { return qstrdup(kindName(kind)); }
}  // namespace ember::store

namespace ember::store::test {

// A second, independent connection to a database file.
class RawDb {
 public:
  enum Mode { Existing, Create };
  explicit RawDb(const QString& path, Mode mode = Existing) {
    const int flags = SQLITE_OPEN_READWRITE | (mode == Create ? SQLITE_OPEN_CREATE : 0);
    if (sqlite3_open_v2(path.toUtf8().constData(), &db_, flags, nullptr) != SQLITE_OK) {
      error_ = QString::fromUtf8(sqlite3_errmsg(db_));
      sqlite3_close(db_);
      db_ = nullptr;
    }
  }
  ~RawDb() { sqlite3_close(db_); }
  RawDb(const RawDb&) = delete;
  RawDb& operator=(const RawDb&) = delete;

  bool ok() const { return db_ != nullptr; }
  QString error() const { return error_; }
  sqlite3* handle() const { return db_; }

  // Runs SQL (test fixtures only); returns false and remembers the message on failure.
  bool exec(const QString& sqlText) {
    char* message = nullptr;
    const int rc = sqlite3_exec(db_, sqlText.toUtf8().constData(), nullptr, nullptr, &message);
    if (rc != SQLITE_OK) error_ = QString::fromUtf8(message ? message : sqlite3_errstr(rc));
    sqlite3_free(message);
    return rc == SQLITE_OK;
  }

  // Every row of column 0 of a query, as text; `args` are bound as text parameters.
  QStringList column(const QString& sqlText, const QStringList& args = {}) {
    QStringList values;
    sqlite3_stmt* stmt = nullptr;
    if (sqlite3_prepare_v2(db_, sqlText.toUtf8().constData(), -1, &stmt, nullptr) != SQLITE_OK) {
      error_ = QString::fromUtf8(sqlite3_errmsg(db_));
      return {QStringLiteral("<prepare failed: %1>").arg(error_)};
    }
    for (int i = 0; i < args.size(); ++i) {
      const QByteArray utf8 = args[i].toUtf8();
      sqlite3_bind_text(stmt, i + 1, utf8.constData(), static_cast<int>(utf8.size()),
                        SQLITE_TRANSIENT);
    }
    int rc;
    while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
      const auto* text = reinterpret_cast<const char*>(sqlite3_column_text(stmt, 0));
      values << (text ? QString::fromUtf8(text, sqlite3_column_bytes(stmt, 0))
                      : QStringLiteral("<null>"));
    }
    if (rc != SQLITE_DONE) values << QStringLiteral("<error: %1>").arg(sqlite3_errmsg(db_));
    sqlite3_finalize(stmt);
    return values;
  }

  QString value(const QString& sqlText, const QStringList& args = {}) {
    const QStringList values = column(sqlText, args);
    return values.isEmpty() ? QString() : values.first();
  }

  // The raw UTF-8 bytes SQLite holds for one message.
  QByteArray contentBytes(qint64 messageId) {
    sqlite3_stmt* stmt = nullptr;
    sqlite3_prepare_v2(db_, "SELECT content FROM messages WHERE id = ?1", -1, &stmt, nullptr);
    sqlite3_bind_int64(stmt, 1, messageId);
    QByteArray bytes;
    if (sqlite3_step(stmt) == SQLITE_ROW) {
      bytes = QByteArray(static_cast<const char*>(sqlite3_column_blob(stmt, 0)),
                         sqlite3_column_bytes(stmt, 0));
    }
    sqlite3_finalize(stmt);
    return bytes;
  }

 private:
  sqlite3* db_ = nullptr;
  QString error_;
};

// SQLite's verdict on the whole file: "ok" or the list of problems.
inline QString integrityCheck(const QString& path) {
  RawDb db(path);
  if (!db.ok()) return QStringLiteral("cannot open: %1").arg(db.error());
  return db.column(QStringLiteral("PRAGMA integrity_check")).join(QLatin1Char('\n'));
}

// FTS5's own check that an index matches the content table it indexes; "ok" or the error.
inline QString ftsIntegrityCheck(const QString& path, const QString& table) {
  RawDb db(path);
  if (!db.ok()) return QStringLiteral("cannot open: %1").arg(db.error());
  // The table name is one of the schema's two index names, chosen by the test.
  if (!db.exec(QStringLiteral("INSERT INTO %1(%1) VALUES('integrity-check')").arg(table)))
    return db.error();
  return QStringLiteral("ok");
}

inline QByteArray readAll(const QString& path) {
  QFile file(path);
  return file.open(QIODevice::ReadOnly) ? file.readAll() : QByteArray();
}

inline bool writeAll(const QString& path, const QByteArray& bytes) {
  QFile file(path);
  return file.open(QIODevice::WriteOnly | QIODevice::Truncate) &&
         file.write(bytes) == bytes.size();
}

}  // namespace ember::store::test
