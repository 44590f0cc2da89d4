#pragma once
// The start-up checks of test_controller_faults: the chat database opened (an older one copied
// and migrated) on the store thread while the controller shows its opening state, and an open
// that fails shown and tried again. Each makes its own database and AppController.
#include <QDir>
#include <QTemporaryDir>
#include <memory>
#include <optional>

#include "common/store_open_wait.h"
#include "fault/controller_fault_support.h"
#include "fault/fault_vfs.h"

namespace ember::test::fault {

using app::AppController;
using store::test::integrityCheck;
using store::test::RawDb;

// Start-up on a slow disk (10 ms a write, 100 ms an fsync, gentler than above so that the
// migration row stays short). The database is opened (and an older one copied and migrated)
// on the store thread: the constructor returns at once, the controller is in its opening state
// (what the window shows: "Opening your chats…" and the step) until the open has ended, and the
// GUI thread keeps its pace all along (GuiGapMeter: its longest gap under 400 ms, as in test_controller_slow_disk). A message
// sent meanwhile is queued, never lost, and committed once the chats are open, into the chat
// then shown (the most recent one, or a new one when there is none). A model chosen meanwhile
// is saved as the last model although the open reads the settings after it was chosen.
// Figures printed: the GUI thread's time in the constructor, the time until the first chat is
// shown, and the disk calls the open made, so they can be scaled to another disk. The bound on the
// fsyncs stays (each is a stall of unknown length on a busy drive). The "big" database is the
// version-2 fixture (a released schema) plus 3000 messages.
// Reference for the steps: hand-counted from ChatStore::open (the check; the copy before a
// migration; one step per schema version missing: a new file needs 3, version 2 needs 1).
inline void checkStartupOnSlowDisk(const QTemporaryDir& dir, const QString& model,
                                   const QString& kind, int maxSyncs,
                                   const QStringList& steps) {
  const QString db = dir.filePath("startup-%1-open.sqlite").arg(kind);
  const QString bigV2 = dir.filePath("startup-v2-fixture.sqlite");
  if (kind != "new") {
    QVERIFY(makeV2Fixture(bigV2, 3000));
    QFile::remove(db);
    QVERIFY(QFile::copy(bigV2, db));
    if (kind == "current") {  // migrated at full speed, then opened again on the slow disk
      AppController::Options options;
      options.databasePath = db;
      AppController once(options);
      QVERIFY(ember::test::waitForStoreOpen(once));
    }
  } else {
    QFile::remove(db);
  }
  const qint64 messages = kind == "new" ? 0 : RawDb(db).value("SELECT count(*) FROM messages").toLongLong();
  const qint64 largestId = kind == "new" ? 0 : RawDb(db).value("SELECT max(id) FROM messages").toLongLong();
  const qint64 newestChat = kind == "new" ? 0 : RawDb(db).value(
      "SELECT id FROM conversations ORDER BY updated_at DESC, id DESC LIMIT 1").toLongLong();
  AppController::Options options;
  options.databasePath = db;
  options.modelFolders = {};
  const QString typed = QStringLiteral("typed while the %1 chats open").arg(kind);
  QElapsedTimer took;
  qint64 constructorMs = 0, openedMs = 0;
  GuiGapMeter gaps;
  int64_t syncs = 0, writes = 0, syncsWhenQueued = 0;
  QStringList seen;
  QList<double> fractions;
  std::unique_ptr<AppController> c;
  {
    SlowDisk slow(10, 100);
    resetCounts();
    took.start();
    c = std::make_unique<AppController>(options);
    constructorMs = took.elapsed();
    QObject::connect(c.get(), &AppController::storeOpeningChanged, [&] {
      const QString text = c->storeOpeningText();
      if (!text.isEmpty() && (seen.isEmpty() || seen.last() != text)) seen << text;
      fractions << c->storeOpeningFraction();
      if (!c->storeOpening() && syncs == 0) {  // the open's own disk calls
        syncs = count(Kind::Sync);
        writes = count(Kind::Write);
      }
    });
    // The window's state from the first frame on; the open has not ended.
    QVERIFY(c->storeOpening());
    QCOMPARE(c->storeOpeningText(), QStringLiteral("Opening your chats…"));
    QCOMPARE(c->conversations()->rowCount(), 0);
    // Typed and sent at once: queued (no id can be handed out before the open has set the
    // counters), and the model chosen meanwhile.
    QCOMPARE(c->sendOrQueue(typed), QString());
    QCOMPARE(c->queuedMessage(), typed);
    QVERIFY(!c->sendOrQueue(QStringLiteral("a second one")).isEmpty());  // one waits at a time
    c->loadModel(model);
    syncsWhenQueued = count(Kind::Sync);
    gaps.start();
    QVERIFY(ember::test::waitForStoreOpen(*c, 120000));
    QVERIFY(QTest::qWaitFor([&] { return !c->messagesLoading(); }, 20000));
    openedMs = took.elapsed();
    gaps.stop();
  }
  qInfo("start-up, %s (%lld messages): %lld ms in the constructor on the GUI thread, first chat "
        "shown after %lld ms (longest GUI-thread gap %lld ms), %lld writes, %lld fsyncs "
        "(%lld of them before the message was queued)",
        qPrintable(kind), messages, constructorMs, openedMs, gaps.longestMs(), qint64(writes),
        qint64(syncs), qint64(syncsWhenQueued));
  QVERIFY2(constructorMs < kGapBoundMs, qPrintable(QString::number(constructorMs)));
  QVERIFY2(gaps.longestMs() < kGapBoundMs, qPrintable(QString::number(gaps.longestMs())));
  if (kind != "current") QVERIFY(syncsWhenQueued < syncs);  // queued before the open ended
  QCOMPARE(seen, steps);
  QVERIFY(std::is_sorted(fractions.begin(), fractions.end()));
  QVERIFY2(!c->notice().contains("could not"), qPrintable(c->notice()));
  QVERIFY(c->storeError().isEmpty());
  c->store().flush();  // a chat the message made (a new database) is written
  QCOMPARE(c->conversations()->rowCount(),
           RawDb(db).value("SELECT count(*) FROM conversations WHERE deleted_at IS NULL").toInt());
  if (kind == "v2") QVERIFY(c->notice().contains("updated to this version"));
  QVERIFY2(syncs <= maxSyncs, qPrintable(QString::number(syncs)));
  // The message goes out once the model is there: committed into the chat shown, past every
  // id of the file, then its answer is stopped (only the commit is checked here).
  QVERIFY(QTest::qWaitFor([&] { return !c->modelLoading(); }, 60000));
  QVERIFY(c->modelLoaded());
  QVERIFY(QTest::qWaitFor([&] { return c->generating(); }, 20000));
  c->stop();
  QVERIFY(QTest::qWaitFor([&] { return !c->generating(); }, 60000));
  c->store().flush();
  RawDb raw(db);
  const QStringList rows = raw.column(
      "SELECT id || '|' || conversation_id FROM messages WHERE role = 'user' AND content = ?1",
      {typed});
  QCOMPARE(rows.size(), 1);
  QVERIFY(rows[0].section('|', 0, 0).toLongLong() > largestId);
  if (kind == "new")
    QCOMPARE(raw.value("SELECT title FROM conversations WHERE id = ?1", {rows[0].section('|', 1)}),
             typed);
  else
    QCOMPARE(rows[0].section('|', 1).toLongLong(), newestChat);
  QCOMPARE(c->queuedMessage(), QString());
  // The model chosen while the file opened is the last model, in the file and in the app.
  QCOMPARE(c->lastModelPath(), model);
  QCOMPARE(c->store().appSetting("lastModel").toString(), model);
}

// An open that fails leaves the app up in its failed state: the reason in storeError (the
// window shows it, with Try again) and in the notice, the message typed meanwhile still queued.
// Once the cause is gone, retryOpenStore opens the chats and the message is committed.
// Rows: a database from a newer Ember (refused, left untouched; the user then moves it away),
// and a disk that fails every write while a version-2 file is copied and migrated (SQLite's
// "disk I/O error"; the migration runs again on the retry, on a working disk).
inline void checkFailedOpenIsShownAndRetried(const QTemporaryDir& dir, const QString& model,
                                             const QString& cause, const QString& reason) {
  const QString db = dir.filePath("failed-open-%1.sqlite").arg(cause);
  QFile::remove(db);
  if (cause == "newer") {
    RawDb raw(db, RawDb::Create);
    QVERIFY(raw.exec("CREATE TABLE t (x); PRAGMA user_version = 99;"));
  } else {
    QVERIFY(makeV2Fixture(db, 0));
  }
  AppController::Options options;
  options.databasePath = db;
  options.modelFolders = {};
  std::unique_ptr<AppController> c;
  const QString typed = QStringLiteral("typed before the %1 failure").arg(cause);
  {
    std::optional<Armed> armed;
    if (cause == "write") armed.emplace(Kind::Write, 1);
    c = std::make_unique<AppController>(options);
    QCOMPARE(c->sendOrQueue(typed), QString());
    c->loadModel(model);
    QVERIFY(ember::test::waitForStoreOpen(*c));
    if (cause == "write") QVERIFY(injected() > 0);
  }
  QVERIFY2(c->storeError().contains(reason), qPrintable(c->storeError()));
  QVERIFY(c->storeError().startsWith("The chat database could not be opened"));
  QCOMPARE(c->notice(), c->storeError());
  QCOMPARE(c->conversations()->rowCount(), 0);
  QCOMPARE(c->queuedMessage(), typed);
  if (cause == "newer") QCOMPARE(RawDb(db).value("PRAGMA user_version"), QStringLiteral("99"));
  QVERIFY(QTest::qWaitFor([&] { return !c->modelLoading(); }, 60000));
  QVERIFY(c->modelLoaded());
  QTest::qWait(100);
  QCOMPARE(c->queuedMessage(), typed);  // the model is there, the chats are not: it waits
  QVERIFY(!c->generating());
  // The cause removed: the user moves the newer file away; the disk works again.
  if (cause == "newer") QVERIFY(QFile::rename(db, db + ".newer"));
  c->retryOpenStore();
  QVERIFY(c->storeOpening());
  QVERIFY(ember::test::waitForStoreOpen(*c));
  QVERIFY2(c->storeError().isEmpty(), qPrintable(c->storeError()));
  QVERIFY(QTest::qWaitFor([&] { return c->generating(); }, 20000));
  c->stop();
  QVERIFY(QTest::qWaitFor([&] { return !c->generating(); }, 60000));
  c->store().flush();
  QCOMPARE(integrityCheck(db), QStringLiteral("ok"));
  QCOMPARE(RawDb(db).value("SELECT count(*) FROM messages WHERE role = 'user' AND content = ?1",
                           {typed}), QStringLiteral("1"));
  if (cause == "write") QCOMPARE(RawDb(db).value("PRAGMA user_version"), QStringLiteral("3"));
}

}  // namespace ember::test::fault
