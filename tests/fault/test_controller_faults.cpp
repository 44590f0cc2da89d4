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
#include "fault/controller_fault_support.h"
#include "fault/controller_startup_checks.h"
#include "fault/fault_vfs.h"

using namespace ember::app;
using namespace ember::test::fault;
using ember::store::MessageStatus;
using ember::store::test::RawDb;
using ember::store::test::integrityCheck;

class ControllerFaultsTest : public QObject {
  Q_OBJECT
  QTemporaryDir dir_{QDir::currentPath() + "/controller-faults-XXXXXX"};  // in the build folder
  QString path_;
  std::unique_ptr<AppController> controller_;

  QStringList userMessages() {
    RawDb db(path_);
    return db.column("SELECT content FROM messages WHERE role = 'user' ORDER BY id");
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
    QVERIFY(sendAndFinish(*controller_, QStringLiteral("saved before any fault")));
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
    QVERIFY(sendAndFinish(*controller_, text));
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
    GuiGapMeter gaps;
    qint64 flushMs = 0;
    {
      SlowDisk slow(100, 800);
      gaps.start();
      const bool ended = QTest::qWaitFor([&] { return finished.count() >= 1; }, 120000);
      gaps.stop();
      QElapsedTimer flushing;
      flushing.start();
      controller_->store().flush();  // the test waits here, not the app
      flushMs = flushing.elapsed();
      QVERIFY(ended);
    }
    qInfo("longest GUI-thread gap while streaming on the slow disk: %lld ms; the store needed "
          "%lld ms more after the answer ended", gaps.longestMs(), flushMs);
    QVERIFY2(gaps.longestMs() < kGapBoundMs,
             qPrintable(QStringLiteral("the GUI thread stood still for %1 ms").arg(gaps.longestMs())));
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
    QVERIFY(sendAndFinish(*controller_, QStringLiteral("after the other program let go")));
  }

  // Start-up on a slow disk, opening and migrating (controller_startup_checks.h).
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
    checkStartupOnSlowDisk(dir_, model, kind, maxSyncs, steps);
  }

  // A failed open shown and tried again (controller_startup_checks.h).
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
    checkFailedOpenIsShownAndRetried(dir_, model, cause, reason);
  }
};

QTEST_GUILESS_MAIN(ControllerFaultsTest)
#include "test_controller_faults.moc"
