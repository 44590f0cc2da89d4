// The app under store faults, through the AppController on the default model: a disk error,
// a failed fsync, a failed lock or a full disk while sending, a write error while an answer
// streams, and a database locked by another program. Each time the notice (what the window
// shows) names what could not be saved and where, nothing saved before is lost, and the GUI
// thread is never held longer than the store's bound (the call that hits a locked database
// returns within it, where the store's default would wait 5 s). On a slow disk the GUI thread
// keeps its pace while an answer streams and is saved (those writes run on the store thread).
// At start the database is opened (an older one copied and migrated) on the store thread, the
// controller in its opening state meanwhile; a failed open is shown, not fatal, and can be tried
// again.
// References: the SQLite file read back over a separate connection with faults off
// (integrity_check, the rows), and the rule that nothing saved is lost and the user is told.
#include <QDir>
#include <QElapsedTimer>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTimer>
#include <algorithm>
#include <optional>
#include <QtTest>

#include "common/store_open_wait.h"
#include "app/store/store_test_support.h"
#include "common/test_paths.h"
#include "controller/app_controller.h"
#include "fault/fault_vfs.h"

using namespace ember::app;
using namespace ember::test::fault;
using ember::store::MessageStatus;
using ember::store::test::RawDb;
using ember::store::test::integrityCheck;

namespace {
constexpr auto kModel = "SmolLM2-135M-Instruct.Q4_1.gguf";
constexpr qint64 kGapBoundMs = 400;  // the GUI thread's longest stand-still allowed
}

class ControllerFaultsTest : public QObject {
  Q_OBJECT
  QTemporaryDir dir_{QDir::currentPath() + "/controller-faults-XXXXXX"};  // in the build folder
  QString path_;
  std::unique_ptr<AppController> controller_;

  QStringList userMessages() {
    RawDb db(path_);
    return db.column("SELECT content FROM messages WHERE role = 'user' ORDER BY id");
  }

  // The version-2 fixture (a released schema) with `extra` more messages in its first chat.
  static bool makeV2Fixture(const QString& path, int extra) {
    if (QFile::exists(path)) return true;
    QFile sql(ember::test::sourceDir() + "/tests/fault/data/chats_v2.sql");
    if (!sql.open(QIODevice::ReadOnly)) return false;
    RawDb raw(path, RawDb::Create);
    if (!raw.exec(QString::fromUtf8(sql.readAll()))) return false;
    return extra == 0 || raw.exec(QStringLiteral(
        "WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n WHERE x < %1) "
        "INSERT INTO messages (conversation_id, parent_id, role, content, created_at, status) "
        "SELECT (SELECT min(id) FROM conversations), NULL, 'user', "
        "printf('startup message %d about kestrels and slow disks, long enough to take "
        "room in the index', x), x, 'complete' FROM n").arg(extra));
  }

  bool sendAndFinish(const QString& text) {
    QSignalSpy finished(controller_.get(), &AppController::answerFinished);
    if (!controller_->send(text)) return false;
    return QTest::qWaitFor([&] { return finished.count() >= 1; }, 120000);
  }

 private slots:
  void initTestCase() {
    QVERIFY(install());
    EMBER_REQUIRE_MODEL(model, kModel);
    path_ = dir_.filePath("ember.sqlite");
    AppController::Options options;
    options.databasePath = path_;
    options.modelFolders = {ember::test::modelsDir()};
    controller_ = std::make_unique<AppController>(options);
    QVERIFY(ember::test::waitForStoreOpen(*controller_));
    controller_->loadModel(model);
    QVERIFY(QTest::qWaitFor([&] { return !controller_->modelLoading(); }, 60000));
    QVERIFY(controller_->modelLoaded());
    controller_->newConversation();
    QVERIFY(controller_->setSetting("maxTokens", "4"));
    QVERIFY(controller_->setSetting("temperature", "0"));
    QVERIFY(sendAndFinish(QStringLiteral("saved before any fault")));
  }

  void faultWhileSending_data() {
    QTest::addColumn<int>("kind_");
    for (Kind kind : {Kind::Write, Kind::Sync, Kind::Lock, Kind::DiskFull})
      QTest::newRow(kindName(kind)) << static_cast<int>(kind);
  }
  void faultWhileSending() {
    QFETCH(int, kind_);
    const QStringList before = userMessages();
    const QString text = QStringLiteral("sent into a %1").arg(kindName(static_cast<Kind>(kind_)));
    controller_->dismissNotice();
    {
      Armed armed(static_cast<Kind>(kind_), 1);
      // Shown at once and written on the store thread: the failure comes back as the notice,
      // the answer is stopped and the chat read back.
      QVERIFY(controller_->send(text));
      controller_->store().flush();
      QVERIFY(injected() > 0);
      QTRY_VERIFY_WITH_TIMEOUT(!controller_->notice().isEmpty(), 10000);
      controller_->store().flush();
      QTRY_VERIFY_WITH_TIMEOUT(!controller_->generating(), 20000);
    }
    // The chat is read back once the disk lets it (a failed lock fails the reads too).
    QTRY_VERIFY_WITH_TIMEOUT(!controller_->messagesLoading(), 20000);
    const QString notice = controller_->notice();
    QVERIFY2(notice.startsWith(QStringLiteral("Ember could not finish ")),
             qPrintable(notice));
    QVERIFY2(notice.contains(path_), qPrintable(notice));
    QCOMPARE(integrityCheck(path_), QStringLiteral("ok"));
    // Nothing lost. The failed message is absent, or whole after a failed fsync (SQLite cannot
    // know whether the data reached the disk).
    const QStringList after = userMessages();
    QCOMPARE(after.mid(0, before.size()), before);
    QVERIFY(after.size() == before.size() ||
            (after.size() == before.size() + 1 && after.last() == text));
    QVERIFY(!controller_->generating());
    // Once the disk works again, so does the app.
    QVERIFY(sendAndFinish(text));
    QCOMPARE(userMessages().mid(0, before.size()), before);
    QCOMPARE(userMessages().last(), text);
  }

  void writeErrorWhileStreaming() {
    QSignalSpy finished(controller_.get(), &AppController::answerFinished);
    QVERIFY(controller_->send(QStringLiteral("the answer to this one fails to save")));
    const qint64 answerId = controller_->messages()->row(controller_->messages()->rowCount() - 1)->id;
    // send() queues the question's write; let it land first, so that the fault is the answer's.
    // The answer's saves are queued from this thread's event loop, which does not run between
    // the flush and the arming: every one of them comes after the fault is armed.
    controller_->store().flush();
    {
      Armed armed(Kind::Write, 1);
      QVERIFY(QTest::qWaitFor([&] { return finished.count() >= 1; }, 120000));
      controller_->store().flush();  // the answer's last writes are queued on the store thread
      QVERIFY(injected() > 0);
    }
    // The queued write's failure reaches the notice through the GUI thread's event loop.
    QTRY_VERIFY2(controller_->notice().contains(QStringLiteral("could not finish saving the answer")),
                 qPrintable(controller_->notice()));
    QCOMPARE(integrityCheck(path_), QStringLiteral("ok"));
    RawDb db(path_);
    // The question was saved before the fault; the answer stays as it was last saved (still
    // streaming on disk: the next start marks it interrupted).
    QVERIFY(userMessages().contains(QStringLiteral("the answer to this one fails to save")));
    QCOMPARE(db.value("SELECT status FROM messages WHERE id = ?1", {QString::number(answerId)}),
             QStringLiteral("streaming"));
  }

  // A slow disk (every write 100 ms, every fsync 800 ms, as on a busy or network drive) while an
  // answer streams and ends: the answer's checkpoints and its final save run on the store thread,
  // so the GUI thread keeps its pace. A 5 ms timer on the GUI thread measures the longest gap;
  // with the saves on the GUI thread it was the final save's length (>= 900 ms). Reference: the
  // time the store thread then needs to finish (>= the 800 ms fsync, so the slow disk was on the
  // path), and the answer read back over a separate connection, whole.
  void slowDiskDoesNotHoldTheGuiThread() {
    QVERIFY(controller_->setSetting("maxTokens", "48"));
    QSignalSpy finished(controller_.get(), &AppController::answerFinished);
    QVERIFY(controller_->send(QStringLiteral("Tell me about the sea.")));
    const qint64 answerId = controller_->messages()->lastId();
    QElapsedTimer sinceTick;
    qint64 longestGapMs = 0;
    QTimer ticker;
    ticker.setInterval(5);
    connect(&ticker, &QTimer::timeout, [&] {
      longestGapMs = std::max(longestGapMs, sinceTick.restart());
    });
    qint64 flushMs = 0;
    {
      SlowDisk slow(100, 800);
      sinceTick.start();
      ticker.start();
      const bool ended = QTest::qWaitFor([&] { return finished.count() >= 1; }, 120000);
      ticker.stop();
      QElapsedTimer flushing;
      flushing.start();
      controller_->store().flush();  // the test waits here, not the app
      flushMs = flushing.elapsed();
      QVERIFY(ended);
    }
    qInfo("longest GUI-thread gap while streaming on the slow disk: %lld ms; the store needed "
          "%lld ms more after the answer ended", longestGapMs, flushMs);
    QVERIFY2(longestGapMs < 400,
             qPrintable(QStringLiteral("the GUI thread stood still for %1 ms").arg(longestGapMs)));
    QVERIFY2(flushMs >= 800, qPrintable(QStringLiteral("the store finished in %1 ms: the slow "
                                                       "disk was not on the path").arg(flushMs)));
    const QString shown = controller_->messages()->row(controller_->messages()->rowCount() - 1)->text;
    QVERIFY(!shown.isEmpty());
    RawDb db(path_);
    const QString id = QString::number(answerId);
    QCOMPARE(db.value("SELECT status FROM messages WHERE id = ?1", {id}), QStringLiteral("complete"));
    QCOMPARE(db.value("SELECT content FROM messages WHERE id = ?1", {id}), shown);
    QVERIFY(controller_->setSetting("maxTokens", "4"));
  }

  // Another program holds the write lock: the GUI thread is held at most the bound, and the
  // notice says the database is locked.
  void lockedDatabaseIsBoundedAndShown() {
    // The writes queued by the tests before (a setting) land first: the other program's BEGIN
    // IMMEDIATE does not wait, so it would fail while the store thread still writes.
    controller_->store().flush();
    RawDb other(path_);
    QVERIFY(other.exec("BEGIN IMMEDIATE"));
    const QStringList before = userMessages();
    controller_->dismissNotice();
    QElapsedTimer timer;
    timer.start();
    QVERIFY(controller_->send(QStringLiteral("while another program writes")));
    const qint64 heldMs = timer.elapsed();
    // The GUI thread does not wait for the store at all now; the store thread waits 300 ms, then
    // the notice comes. The store's default (5000 ms) would have held the GUI that long before.
    QVERIFY2(heldMs < 200, qPrintable(QStringLiteral("the GUI thread was held %1 ms").arg(heldMs)));
    QTRY_VERIFY_WITH_TIMEOUT(!controller_->notice().isEmpty(), 5000);
    QTRY_VERIFY_WITH_TIMEOUT(!controller_->generating() && !controller_->messagesLoading(), 20000);
    const QString notice = controller_->notice();
    QVERIFY2(notice.contains(QStringLiteral("is locked by another program")), qPrintable(notice));
    QVERIFY2(notice.contains(QStringLiteral("Waited 300 ms")), qPrintable(notice));
    QVERIFY(other.exec("ROLLBACK"));
    QCOMPARE(userMessages(), before);
    QVERIFY(sendAndFinish(QStringLiteral("after the other program let go")));
  }

  // Start-up on a slow disk (10 ms a write, 100 ms an fsync, gentler than above so that the
  // migration row stays short). The database is opened (and an older one copied and migrated)
  // on the store thread: the constructor returns at once, the controller is in its opening state
  // (what the window shows: "Opening your chats…" and the step) until the open has ended, and the
  // GUI thread keeps its pace all along (a 5 ms timer, its longest gap under 400 ms, as in test_controller_slow_disk). A message
  // sent meanwhile is queued, never lost, and committed once the chats are open, into the chat
  // then shown (the most recent one, or a new one when there is none). A model chosen meanwhile
  // is saved as the last model although the open reads the settings after it was chosen.
  // Figures printed: the GUI thread's time in the constructor, the time until the first chat is
  // shown, and the disk calls the open made, so they can be scaled to another disk. The bound on the
  // fsyncs stays (each is a stall of unknown length on a busy drive). The "big" database is the
  // version-2 fixture (a released schema) plus 3000 messages.
  // Reference for the steps: hand-counted from ChatStore::open (the check; the copy before a
  // migration; one step per schema version missing: a new file needs 3, version 2 needs 1).
  void startupOnSlowDisk_data() {
    QTest::addColumn<QString>("kind");
    QTest::addColumn<int>("maxSyncs");
    QTest::addColumn<QStringList>("steps");
    const QString check = "Checking the chat database…", copy =
        "Keeping a copy of your chats before updating them…", update =
        "Updating your chats to this version of Ember…";
    QTest::newRow("new database") << "new" << 12
        << QStringList{check + " (step 1 of 4)", update + " (step 2 of 4)",
                       update + " (step 3 of 4)", update + " (step 4 of 4)"};
    QTest::newRow("current database, 3000 messages") << "current" << 2 << QStringList{check};
    QTest::newRow("migration from version 2, 3000 messages") << "v2" << 20
        << QStringList{check + " (step 1 of 3)", copy + " (step 2 of 3)",
                       update + " (step 3 of 3)"};
  }
  void startupOnSlowDisk() {
    QFETCH(QString, kind);
    QFETCH(int, maxSyncs);
    QFETCH(QStringList, steps);
    EMBER_REQUIRE_MODEL(model, kModel);
    const QString db = dir_.filePath("startup-%1-open.sqlite").arg(kind);
    const QString bigV2 = dir_.filePath("startup-v2-fixture.sqlite");
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
    QElapsedTimer took, sinceTick;
    qint64 constructorMs = 0, openedMs = 0, longestGapMs = 0;
    int64_t syncs = 0, writes = 0, syncsWhenQueued = 0;
    QStringList seen;
    QList<double> fractions;
    std::unique_ptr<AppController> c;
    QTimer ticker;
    ticker.setInterval(5);
    connect(&ticker, &QTimer::timeout, [&] { longestGapMs = std::max(longestGapMs, sinceTick.restart()); });
    {
      SlowDisk slow(10, 100);
      resetCounts();
      took.start();
      c = std::make_unique<AppController>(options);
      constructorMs = took.elapsed();
      connect(c.get(), &AppController::storeOpeningChanged, [&] {
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
      sinceTick.start();
      ticker.start();
      QVERIFY(ember::test::waitForStoreOpen(*c, 120000));
      QVERIFY(QTest::qWaitFor([&] { return !c->messagesLoading(); }, 20000));
      openedMs = took.elapsed();
      ticker.stop();
    }
    qInfo("start-up, %s (%lld messages): %lld ms in the constructor on the GUI thread, first chat "
          "shown after %lld ms (longest GUI-thread gap %lld ms), %lld writes, %lld fsyncs "
          "(%lld of them before the message was queued)",
          qPrintable(kind), messages, constructorMs, openedMs, longestGapMs, qint64(writes),
          qint64(syncs), qint64(syncsWhenQueued));
    QVERIFY2(constructorMs < kGapBoundMs, qPrintable(QString::number(constructorMs)));
    QVERIFY2(longestGapMs < kGapBoundMs, qPrintable(QString::number(longestGapMs)));
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
  void failedOpenIsShownAndRetried_data() {
    QTest::addColumn<QString>("cause");
    QTest::addColumn<QString>("reason");
    QTest::newRow("newer version") << "newer" << "Update Ember to open it";
    QTest::newRow("write fails in the migration") << "write" << "I/O";
  }
  void failedOpenIsShownAndRetried() {
    QFETCH(QString, cause);
    QFETCH(QString, reason);
    EMBER_REQUIRE_MODEL(model, kModel);
    const QString db = dir_.filePath("failed-open-%1.sqlite").arg(cause);
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
};

QTEST_GUILESS_MAIN(ControllerFaultsTest)
#include "test_controller_faults.moc"
