// ChatStore: opening, corruption recovery and crash recovery. The other operations live in
// chat_store_conversations.cpp, chat_store_messages.cpp, chat_store_stats.cpp and
// chat_store_search.cpp.
#include "store/chat_store.h"

#include <QDateTime>
#include <QDir>
#include <QFile>
#include <QFileInfo>

#include "store/schema.h"

namespace ember::store {
namespace {

// Moves a damaged database (and its WAL, which belongs to it) out of the way; the shared-memory
// index is derived data and simply removed. Returns the new name of the main file.
QString moveAside(const QString& path) {
  const QString stamp = QDateTime::currentDateTime().toString(QStringLiteral("yyyyMMdd-hhmmss"));
  QString backup = QStringLiteral("%1.corrupt-%2").arg(path, stamp);
  for (int n = 2; QFileInfo::exists(backup); ++n)
    backup = QStringLiteral("%1.corrupt-%2-%3").arg(path, stamp).arg(n);
  if (!QFile::rename(path, backup)) {
    throw StoreError(StoreError::Kind::Io,
                     QStringLiteral("The chat database %1 is damaged and could not be moved aside "
                                    "to %2. Move or delete it by hand to start a new one.")
                         .arg(path, backup));
  }
  const QString wal = path + QStringLiteral("-wal");
  if (QFileInfo::exists(wal)) QFile::rename(wal, backup + QStringLiteral("-wal"));
  QFile::remove(path + QStringLiteral("-shm"));
  return backup;
}

bool isEmptyOrMissing(const QString& path) {
  const QFileInfo info(path);
  return !info.exists() || info.size() == 0;
}

}  // namespace

OpenReport ChatStore::open(const QString& path, const Options& options) {
  close();
  report_ = OpenReport{};
  report_.createdNew = isEmptyOrMissing(path);
  const QDir parent = QFileInfo(path).absoluteDir();
  if (!parent.exists()) QDir().mkpath(parent.absolutePath());
  bool readOnly = options.readOnly;
  if (!readOnly) {
    lock_ = storelock::WriterLock(QFile::encodeName(path).toStdString());
    if (lock_.state() == storelock::WriterLock::State::HeldElsewhere) {
      readOnly = true;
      report_.writerPid = lock_.holderPid();
      report_.readOnlyReason =
          lock_.holderPid() > 0
              ? QStringLiteral("another Ember process (id %1) is using it. Make changes there, "
                               "or close it and open the chats here again.")
                    .arg(lock_.holderPid())
              : QStringLiteral("another Ember process is using it. Make changes there, or close "
                               "it and open the chats here again.");
    }
    // Unavailable (a folder where no lock file can be made): SQLite's own locks still keep the
    // file consistent; there is just no single-writer rule.
  } else {
    report_.readOnlyReason = QStringLiteral("it was opened for reading only.");
  }
  report_.readOnly = readOnly;
  try {
    openAndPrepare(path, options, readOnly);
  } catch (const StoreError& error) {
    // Only the writer may set a damaged file aside: a reader would pull it from under it.
    if (error.kind() != StoreError::Kind::Corrupt || readOnly) {
      close();
      throw;
    }
    db_.close();  // the writer lock stays: this process starts the new database
    report_ = OpenReport{};
    report_.corruptionDetail = error.userMessage();
    report_.corruptBackupPath = moveAside(path);
    report_.recoveredFromCorruption = true;
    report_.createdNew = true;
    openAndPrepare(path, options, false);
  }
  return report_;
}

void ChatStore::openAndPrepare(const QString& path, const Options& options, bool readOnly) {
  db_ = sql::Database(path, options.busyTimeoutMs, readOnly);
  db_.setReadOnlyReason(report_.readOnlyReason);
  sql::ActionScope scope(db_, "opening the chat database");
  // The first statement that reads the file: a file that is not a database fails here with
  // SQLITE_NOTADB, a locked one with SQLITE_BUSY after the timeout.
  const QString mode = sql::queryText(db_, "PRAGMA journal_mode = WAL");
  if (mode.compare(QStringLiteral("wal"), Qt::CaseInsensitive) != 0) {
    throw StoreError(StoreError::Kind::Io,
                     QStringLiteral("The chat database %1 could not be switched to WAL mode (the "
                                    "file system reported journal mode '%2').")
                         .arg(path, mode));
  }
  // Steps: the check, the copy (when a migration is due), one per migration step; the number
  // of steps is known once the version has been read.
  const auto told = [&](OpenStage stage, int step, int steps) {
    if (options.progress) options.progress(stage, step, steps);
  };
  int versionFound = kSchemaVersion;  // a header that cannot be read fails the check below
  try {
    versionFound = static_cast<int>(sql::queryInt(db_, "PRAGMA user_version").value_or(0));
  } catch (const StoreError&) {
  }
  const bool migrating = !readOnly && versionFound < kSchemaVersion;
  const bool copying = migrating && versionFound > 0;
  const int steps = 1 + (copying ? 1 : 0) + (migrating ? kSchemaVersion - versionFound : 0);
  told(OpenStage::Checking, 1, steps);
  // quick_check reads every page (not the index-to-table cross checks of integrity_check), so it
  // stays fast on a chat history while catching truncated and overwritten files.
  {
    sql::Statement check(db_, "PRAGMA quick_check");
    QStringList problems;
    while (check.step()) problems << check.text(0);
    if (problems != QStringList{QStringLiteral("ok")}) {
      throw StoreError(StoreError::Kind::Corrupt,
                       QStringLiteral("PRAGMA quick_check on %1 reported: %2")
                           .arg(path, problems.mid(0, 5).join(QStringLiteral("; "))));
    }
  }
  if (readOnly) {
    // A reader neither migrates nor recovers: both are writes, and the writer has done them.
    const int version = static_cast<int>(sql::queryInt(db_, "PRAGMA user_version").value_or(0));
    if (version != kSchemaVersion) {
      throw StoreError(StoreError::Kind::ReadOnly,
                       QStringLiteral("The chat database %1 has schema version %2 and this "
                                      "Ember reads version %3; it cannot be updated while it is "
                                      "open read-only (%4)")
                           .arg(path)
                           .arg(version)
                           .arg(kSchemaVersion)
                           .arg(report_.readOnlyReason));
    }
    db_.exec("PRAGMA query_only = ON");
    return;
  }
  db_.exec("PRAGMA foreign_keys = ON");
  db_.exec("PRAGMA synchronous = FULL");
  if (options.maxDatabaseBytes > 0) {
    const qint64 pageSize = sql::queryInt(db_, "PRAGMA page_size").value_or(4096);
    const qint64 pages = std::max<qint64>(1, options.maxDatabaseBytes / pageSize);
    // PRAGMA arguments cannot be bound; this is an integer we computed.
    db_.exec(QByteArray("PRAGMA max_page_count = " + QByteArray::number(pages)).constData());
  }

  const int before = static_cast<int>(sql::queryInt(db_, "PRAGMA user_version").value_or(0));
  if (before > 0 && before < kSchemaVersion) {
    told(OpenStage::BackingUp, 2, steps);
    report_.migrationBackupPath = backUpBeforeMigrating(before);
  }
  const int firstStep = copying ? 3 : 2;
  if (before < kSchemaVersion) told(OpenStage::Migrating, firstStep, steps);
  const int foundVersion = migrate(db_, [&](int version) {
    if (version < kSchemaVersion)  // the next step begins
      told(OpenStage::Migrating, firstStep + version - before, steps);
  });
  report_.migratedFromVersion = foundVersion < kSchemaVersion ? foundVersion : -1;

  // Answers still streaming were cut short by a crash (one ChatStore per database at a time is
  // the app's rule): keep their checkpointed text and say what happened.
  sql::ActionScope recovering(db_, "recovering answers interrupted by a crash");
  sql::Statement interrupt(db_,
                           "UPDATE messages SET status = 'interrupted', finish_reason = ?1 "
                           "WHERE status = 'streaming'");
  interrupt.bindAll(QStringLiteral("interrupted"));
  interrupt.run();
  report_.interruptedMessages = db_.changes();
}

void ChatStore::close() {
  if (db_.isOpen()) {
    // A clean close checkpoints the WAL into the main file; failure here loses nothing.
    db_.close();
  }
  lock_.release();
}

QString ChatStore::backUpBeforeMigrating(int version) {
  sql::ActionScope scope(db_, "making a copy of the chat database before updating it");
  const QString base = QStringLiteral("%1.v%2-backup").arg(db_.path()).arg(version);
  QString backup = base;
  for (int n = 2; QFileInfo::exists(backup); ++n) backup = QStringLiteral("%1-%2").arg(base).arg(n);
  try {
    // VACUUM INTO writes a consistent snapshot (committed WAL content included) to a new file;
    // its target is an ordinary bound value.
    sql::Statement copy(db_, "VACUUM INTO ?1");
    copy.bindAll(backup).run();
  } catch (const StoreError&) {
    QFile::remove(backup);  // a partial copy is no backup; the database itself is untouched
    throw;
  }
  return backup;
}

sql::Database& ChatStore::db() const {
  if (!db_.isOpen()) {
    throw StoreError(StoreError::Kind::Internal,
                     QStringLiteral("The chat database is not open (ChatStore::open was not "
                                    "called or failed)."));
  }
  return db_;
}

}  // namespace ember::store
