// ChatStore under injected I/O faults: for every N, the Nth write, fsync or lock (and, as a
// full disk, the Nth write returning SQLITE_FULL; as contention, the Nth lock held elsewhere)
// fails from there on, through a send, a streamed answer and a migration from each earlier
// schema version.
// References, read over a separate connection with the faults off: SQLite's own
// `PRAGMA integrity_check` and FTS5's 'integrity-check'; what the store reported as saved before
// the fault (each call that returned); the schema's fixtures (tests/fault/data, the DDL of each
// released version) for what a migration must keep; and the rule
// (nothing saved is lost, the user is told what failed and where).
#include <QDir>
#include <QFile>
#include <QTemporaryDir>
#include <QtTest>

#include "app/store/store_test_support.h"
#include "common/test_paths.h"
#include "fault/fault_scenarios.h"
#include "fault/fault_vfs.h"
#include "store/schema.h"

using namespace ember::store;
using namespace ember::test::fault;
using ember::store::test::RawDb;
using ember::store::test::ftsIntegrityCheck;
using ember::store::test::integrityCheck;

namespace {

constexpr int kBusyTimeoutMs = 20;  // contention faults time out quickly

QString fixture(const char* name) { return ember::test::sourceDir() + QStringLiteral("/tests/fault/data/") + name; }

// A message as the checks compare it.
struct Saved {
  QString content;
  QString status;
};

QMap<qint64, Saved> allMessages(const QString& path) {
  RawDb db(path);
  QMap<qint64, Saved> rows;
  const QStringList ids = db.column("SELECT id FROM messages ORDER BY id");
  for (const QString& id : ids) {
    rows[id.toLongLong()] = {db.value("SELECT content FROM messages WHERE id = ?1", {id}),
                             db.value("SELECT status FROM messages WHERE id = ?1", {id})};
  }
  return rows;
}

// The checks every faulted run must pass, whatever N was.
void checkClearErrors(const Outcome& outcome, const QString& path) {
  for (const StoreError& error : outcome.errors) {
    const QString message = error.userMessage();
    QVERIFY2(error.kind() == StoreError::Kind::Io || error.kind() == StoreError::Kind::DiskFull ||
                 error.kind() == StoreError::Kind::Busy,
             qPrintable(QStringLiteral("unexpected kind %1: %2")
                            .arg(QString::fromLatin1(kindName(error.kind())), message)));
    QVERIFY2(message.contains(path), qPrintable(message));  // names the file
    QVERIFY2(message.startsWith(QStringLiteral("Ember could not finish ")), qPrintable(message));
    QVERIFY2(message.contains(QStringLiteral("nothing already saved was lost")),
             qPrintable(message));
  }
}

void checkFileIsSound(const QString& path) {
  QCOMPARE(integrityCheck(path), QStringLiteral("ok"));
  QCOMPARE(ftsIntegrityCheck(path, "message_words"), QStringLiteral("ok"));
  QCOMPARE(ftsIntegrityCheck(path, "message_grams"), QStringLiteral("ok"));
}

}  // namespace

class StoreFaultsTest : public QObject {
  Q_OBJECT
  QTemporaryDir dir_{QDir::currentPath() + "/store-faults-XXXXXX"};  // inside the build folder
  QString baseline_;
  Id conversation_ = 0;
  Id lastQuestion_ = 0;
  QMap<qint64, Saved> baselineMessages_;

  // A copy of the baseline to break.
  QString freshCopy(const QString& from, const QString& name) {
    const QString path = dir_.filePath(name);
    removeDatabase(path);
    if (!QFile::copy(from, path)) return {};
    return path;
  }

  // Runs `scenario` once without faults and returns how many calls of `kind`'s class it made.
  int64_t callsIn(Kind kind, const std::function<void(ChatStore&)>& scenario) {
    const QString path = freshCopy(baseline_, "count.db");
    {
      ChatStore store;
      store.open(path, {kBusyTimeoutMs, 0});
      resetCounts();
      scenario(store);
    }  // closing (a WAL checkpoint into the database) counts too
    return count(kind);
  }

 private slots:
  void initTestCase() {
    QVERIFY(install());
    QVERIFY(dir_.isValid());
    baseline_ = dir_.filePath("baseline.db");
    ChatStore store;
    store.open(baseline_);
    conversation_ = store.createConversation(QStringLiteral("before the fault"));
    Id parent = 0;
    for (int i = 0; i < 3; ++i) {
      parent = store.addMessage(conversation_, parent, Role::User, QStringLiteral("질문 %1").arg(i));
      const Id answer = store.beginAssistantMessage(parent, "m");
      store.finishAssistantMessage(answer, QStringLiteral("answer %1").arg(i),
                                   MessageStatus::Complete, finishedStats());
      parent = answer;
    }
    lastQuestion_ = store.addMessage(conversation_, parent, Role::User, QStringLiteral("and now?"));
    store.close();
    baselineMessages_ = allMessages(baseline_);
    QCOMPARE(baselineMessages_.size(), 7);
  }

  void everyFaultPoint_data() {
    QTest::addColumn<QString>("scenario");
    QTest::addColumn<int>("kind_");
    for (const char* scenario : {"send", "stream"})
      for (Kind kind : {Kind::Write, Kind::Sync, Kind::Lock, Kind::Busy, Kind::DiskFull})
        QTest::newRow(qPrintable(QStringLiteral("%1, %2").arg(scenario, kindName(kind))))
            << QString::fromLatin1(scenario) << static_cast<int>(kind);
  }

  void everyFaultPoint() {
    QFETCH(QString, scenario);
    QFETCH(int, kind_);
    const Kind kind = static_cast<Kind>(kind_);
    const Id conversation = conversation_;
    const Id question = lastQuestion_;
    const auto run = [&](ChatStore& store) {
      return scenario == "send" ? runSend(store, conversation, question)
                                : runStream(store, question);
    };
    const int64_t total = callsIn(kind, [&](ChatStore& store) { (void)run(store); });
    QVERIFY2(total > 0, "the scenario makes no call of this kind: the test would test nothing");
    int reported = 0;
    for (int64_t nth = 1; nth <= total; ++nth) {
      const QString path = freshCopy(baseline_, "faulted.db");
      Outcome outcome;
      int64_t failed = 0;
      {
        ChatStore store;
        store.open(path, {kBusyTimeoutMs, 0});
        Armed armed(kind, nth);
        outcome = run(store);
        store.close();  // a failed checkpoint at close must lose nothing either
        failed = injected();
      }
      const QString where = QStringLiteral("fault at call %1 of %2").arg(nth).arg(total);
      QVERIFY2(failed > 0, qPrintable(where + ": the fault was never reached"));
      if (!outcome.errors.isEmpty()) ++reported;
      checkClearErrors(outcome, path);
      if (QTest::currentTestFailed()) QFAIL(qPrintable(where));
      checkFileIsSound(path);
      if (QTest::currentTestFailed()) QFAIL(qPrintable(where));

      // Everything saved before the fault is there, unchanged.
      const QMap<qint64, Saved> after = allMessages(path);
      for (auto it = baselineMessages_.cbegin(); it != baselineMessages_.cend(); ++it) {
        QVERIFY2(after.contains(it.key()), qPrintable(where));
        QCOMPARE(after[it.key()].content, it->content);
        QCOMPARE(after[it.key()].status, it->status);
      }
      // What the store said it saved during the run is there too; what failed is whole or
      // absent (after a failed fsync SQLite cannot know whether the data reached the disk).
      ChatStore reopened;
      reopened.open(path);
      if (outcome.userMessage != 0) {
        QVERIFY2(after.contains(outcome.userMessage), qPrintable(where));
        QCOMPARE(after[outcome.userMessage].content, sentQuestion());
      } else if (scenario == "send") {
        QVERIFY(after.size() <= baselineMessages_.size() + 2);
      }
      if (outcome.answer != 0) {
        const std::optional<Message> answer = reopened.message(outcome.answer);
        QVERIFY2(answer, qPrintable(where));
        const std::optional<MessageStats> stats = reopened.stats(outcome.answer);
        if (outcome.finished || answer->status == MessageStatus::Complete) {
          QCOMPARE(answer->status, MessageStatus::Complete);
          QCOMPARE(answer->content, finalAnswer());
          QVERIFY2(stats && stats->tokenTimesMs == finishedStats().tokenTimesMs,
                   qPrintable(where));
        } else {
          QVERIFY2(!stats, qPrintable(where + ": stats without the final text"));
          QCOMPARE(answer->status, MessageStatus::Interrupted);  // recovered as after a crash
          if (!outcome.savedCheckpoints.isEmpty()) {
            // The last checkpoint that returned, or one attempted after it.
            const qsizetype from = outcome.attemptedTexts.indexOf(outcome.savedCheckpoints.last());
            QVERIFY2(outcome.attemptedTexts.mid(from).contains(answer->content),
                     qPrintable(where + ": " + answer->content));
          }
        }
        if (outcome.reasoningSaved) QCOMPARE(answer->reasoning, QStringLiteral("생각 중"));
      }
      // And the store works again once the disk does.
      const Id later = reopened.addMessage(conversation_, 0, Role::User, QStringLiteral("later"));
      QCOMPARE(reopened.message(later)->content, QStringLiteral("later"));
    }
    // SQLite absorbs some faults (it retries a busy lock, re-reads after a failed shared lock);
    // most must reach the user.
    QVERIFY2(reported > 0, "no fault was ever reported to the caller");
    qInfo("%s: %lld fault points, %d reported as errors, the rest absorbed with nothing lost",
          QTest::currentDataTag(), static_cast<long long>(total), reported);
  }

  // A migration from each earlier version, broken at every N: the old data survives, the next
  // open finishes the job, and a backup taken before it holds the old version.
  void migrationUnderFaults_data() {
    QTest::addColumn<QString>("fixtureName");
    QTest::addColumn<int>("version");
    QTest::addColumn<int>("kind_");
    for (const auto& [name, version] : {std::pair{"chats_v1.sql", 1}, std::pair{"chats_v2.sql", 2}})
      for (Kind kind : {Kind::Write, Kind::Sync, Kind::Lock, Kind::DiskFull})
        QTest::newRow(qPrintable(QStringLiteral("v%1, %2").arg(version).arg(kindName(kind))))
            << QString::fromLatin1(name) << version << static_cast<int>(kind);
  }

  void migrationUnderFaults() {
    QFETCH(QString, fixtureName);
    QFETCH(int, version);
    QFETCH(int, kind_);
    const Kind kind = static_cast<Kind>(kind_);
    QFile sql(fixture(qPrintable(fixtureName)));
    QVERIFY(sql.open(QIODevice::ReadOnly));
    const QString ddl = QString::fromUtf8(sql.readAll());
    const QString old = dir_.filePath(QStringLiteral("old-v%1.db").arg(version));
    removeDatabase(old);
    {
      RawDb db(old, RawDb::Create);
      QVERIFY2(db.exec(ddl), qPrintable(db.error()));
    }
    const QMap<qint64, Saved> oldMessages = allMessages(old);
    QCOMPARE(oldMessages.size(), 6);

    const auto migrateCopy = [&](const QString& path, std::optional<std::pair<Kind, int64_t>> at,
                                 int64_t* failed) -> std::optional<StoreError> {
      std::optional<Armed> armed;
      if (at) armed.emplace(at->first, at->second);
      else resetCounts();
      std::optional<StoreError> error;
      {
        ChatStore store;
        try {
          store.open(path, {kBusyTimeoutMs, 0});
        } catch (const StoreError& e) {
          error = e;
        }
      }  // the close (a WAL checkpoint) is inside the faulted window too
      if (failed) *failed = injected();
      return error;
    };

    const QString counted = freshCopy(old, "count-migration.db");
    QVERIFY(!migrateCopy(counted, std::nullopt, nullptr));
    const int64_t total = count(kind);
    QVERIFY(total > 0);
    int reported = 0;
    for (int64_t nth = 1; nth <= total; ++nth) {
      const QString where = QStringLiteral("fault at call %1 of %2").arg(nth).arg(total);
      const QString path = freshCopy(old, "migrating.db");
      for (const QString& stale : QDir(dir_.path()).entryList({"migrating.db.v*-backup*"}))
        QFile::remove(dir_.filePath(stale));
      int64_t failed = 0;
      const std::optional<StoreError> error = migrateCopy(path, std::pair{kind, nth}, &failed);
      QVERIFY2(failed > 0, qPrintable(where + ": the fault was never reached"));
      if (error) {
        ++reported;
        Outcome outcome;
        outcome.errors << *error;
        checkClearErrors(outcome, path);
        if (QTest::currentTestFailed()) QFAIL(qPrintable(where));
        // Never mistaken for a damaged file: nothing was set aside.
        QVERIFY2(QDir(dir_.path()).entryList({"migrating.db.corrupt-*"}).isEmpty(),
                 qPrintable(where));
      }
      QCOMPARE(integrityCheck(path), QStringLiteral("ok"));
      // The next open, with a sound disk, completes the migration and keeps every message.
      ChatStore store;
      const OpenReport report = store.open(path);
      QVERIFY2(!report.recoveredFromCorruption, qPrintable(where));
      checkFileIsSound(path);
      RawDb db(path);
      QCOMPARE(db.value("PRAGMA user_version"), QString::number(kSchemaVersion));
      const QMap<qint64, Saved> after = allMessages(path);
      QCOMPARE(after.size(), oldMessages.size());
      for (auto it = oldMessages.cbegin(); it != oldMessages.cend(); ++it)
        QCOMPARE(after[it.key()].content, it->content);
      QCOMPARE(store.search(QStringLiteral("질문입니다")).size(), 1);
      // A backup of the old version exists from whichever open migrated, and opens as it.
      const QStringList backups = QDir(dir_.path()).entryList({"migrating.db.v*-backup*"});
      // The first is of the version found; a later one may be of a step the faulted open
      // completed (each step commits on its own).
      const QString first = QStringLiteral("migrating.db.v%1-backup").arg(version);
      QVERIFY2(backups.contains(first), qPrintable(where + ": no backup was taken"));
      // An open that migrated says where its backup is.
      if (report.migratedFromVersion > 0)
        QVERIFY2(QFile::exists(report.migrationBackupPath), qPrintable(where));
      for (const QString& name : backups) {
        RawDb copy(dir_.filePath(name));
        QVERIFY2(copy.ok(), qPrintable(copy.error()));
        QCOMPARE(copy.value("PRAGMA integrity_check"), QStringLiteral("ok"));
        const int copyVersion = copy.value("PRAGMA user_version").toInt();
        QVERIFY2(copyVersion >= version && copyVersion < kSchemaVersion, qPrintable(name));
        if (name == first) QCOMPARE(copyVersion, version);
        QCOMPARE(copy.column("SELECT content FROM messages ORDER BY id").size(), 6);
      }
    }
    QVERIFY2(reported > 0, "no fault was ever reported to the caller");
    qInfo("%s: %lld fault points, %d reported", QTest::currentDataTag(),
          static_cast<long long>(total), reported);
  }
};

QTEST_GUILESS_MAIN(StoreFaultsTest)
#include "test_store_faults.moc"
