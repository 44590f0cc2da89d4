// Every user action against a slow and against a refusing disk, through the AppController on the
// default model: new chat, send, rename, pin, a settings change, delete (to the trash), Undo,
// opening a chat, search, edit, regenerate, export (JSON and Markdown) and import.
// - Slow disk (every write 100 ms, every fsync 800 ms, as on a busy or network drive): the GUI
//   thread keeps its pace. A 5 ms timer on it measures its longest gap from the action until the
//   UI shows the result; it must stay under 400 ms. With the store called from the GUI thread
//   (waiting for the store thread) every action stood still for at least one fsync (800 ms).
//   The reads (opening a chat, search) are made while a write is still on the disk, so their
//   answer needs it too. The store's own time to finish (>= 800 ms) shows that the slow disk was
//   on the path.
// - Refusing disk (SQLITE_FULL on every write): the action shows a notice naming the file and the
//   UI then holds what the database holds.
// Reference for "what the database holds": the file read over a separate raw SQLite connection
// (the conversation list, the shown chat's active branch by active_leaf_id/parent_id, its own
// settings, the search terms by LIKE). Reference for an export: what the synchronous export
// wrote (chatexport::exportJson on the same file after the same writes, then dump(2) + "\n" or
// toMarkdown, as `ember-cli export` does), byte for byte. An import is checked against the
// chat it came from (roles and texts of every message, read raw from both rows).
#include <QDir>
#include <QElapsedTimer>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTimer>
#include <QtTest>

#include "common/store_open_wait.h"
#include "app/store/store_test_support.h"
#include "common/test_paths.h"
#include "controller/app_controller.h"
#include "fault/controller_fault_support.h"
#include "fault/fault_vfs.h"
#include "fault/slow_disk_actions.h"
#include "fault/ui_as_stored.h"

using namespace ember::app;
using namespace ember::test::fault;
using ember::store::test::RawDb;
using ember::store::test::integrityCheck;

namespace {
const QStringList kActions = {"new chat", "send", "rename", "pin", "setting", "trash", "restore",
                              "open chat", "search", "edit", "regenerate"};
// Run on the slow disk only (export reads; a refused import is covered by the store's tests).
const QStringList kTransfers = {"export json", "export md", "import"};
}  // namespace

class ControllerSlowDiskTest : public QObject {
  Q_OBJECT
  QTemporaryDir dir_{QDir::currentPath() + "/controller-slow-disk-XXXXXX"};  // in the build folder
  QString path_;
  std::unique_ptr<AppController> controller_;
  std::unique_ptr<UserActions> actions_;  // made with the controller
  qint64 importedFrom_ = 0;  // the chat exported into the import action's file

  bool loading() const { return actions_->loading(); }
  qint64 current() const { return actions_->current(); }
  qint64 otherChat() { return actions_->otherChat(); }
  std::function<bool()> start(const QString& action, QSignalSpy& finished) {
    return actions_->start(action, finished);
  }
  void expectUiAsStored(bool searched = false) {
    ember::test::fault::expectUiAsStored(*controller_, path_, searched);
  }

 private slots:
  void initTestCase() {
    QVERIFY(install());
    EMBER_REQUIRE_MODEL(model, kModel);
    path_ = dir_.filePath("ember.sqlite");
    AppController::Options options;
    options.databasePath = path_;
    options.modelFolders = {ember::test::modelsDir()};
    options.undoDeleteMs = 600000;  // Undo stays offered for the whole test
    controller_ = std::make_unique<AppController>(options);
    actions_ = std::make_unique<UserActions>(*controller_, dir_);
    QVERIFY(ember::test::waitForStoreOpen(*controller_));
    controller_->loadModel(model);
    QVERIFY(QTest::qWaitFor([&] { return !controller_->modelLoading(); }, 60000));
    QVERIFY(controller_->modelLoaded());
    controller_->newConversation();
    QVERIFY(controller_->setSetting("maxTokens", "4"));
    QVERIFY(controller_->setSetting("temperature", "0"));
    // As the defaults of every chat, not just this one: the chats the actions make ("new chat")
    // must answer in 4 greedy tokens too. With only this chat's own settings a new chat answered
    // with the built-in ones (no token limit, random seed) and now and then ran to the end of
    // the context (minutes on this machine).
    controller_->saveSettingsAsDefaults();
    QVERIFY(sendAndFinish(*controller_, QStringLiteral("kestrel saved before the slow disk")));
  }

  void slowDiskNeverHoldsTheGuiThread_data() {
    QTest::addColumn<QString>("action");
    for (const QString& action : kActions + kTransfers) QTest::newRow(qPrintable(action)) << action;
  }
  void slowDiskNeverHoldsTheGuiThread() {
    QFETCH(QString, action);
    if (action == "open chat") otherChat();  // made at full speed
    QStringList conversationsBefore;
    if (action == "import") {  // the file to import, written at full speed
      controller_->store().flush();
      importedFrom_ = current();
      actions_->importFile = dir_.filePath("import.json");
      QFile f(actions_->importFile);
      QVERIFY(f.open(QIODevice::WriteOnly));
      f.write(referenceExport(path_, "json", importedFrom_));
      f.close();
      conversationsBefore = RawDb(path_).column("SELECT id FROM conversations ORDER BY id");
    }
    QSignalSpy finished(controller_.get(), &AppController::answerFinished);
    QElapsedTimer took;
    qint64 shownAfterMs = 0, flushMs = 0;
    GuiGapMeter gaps;
    {
      SlowDisk slow(100, 800);
      gaps.start();
      took.start();
      const std::function<bool()> shown = start(action, finished);
      const bool ok = QTest::qWaitFor(shown, 120000);
      shownAfterMs = took.elapsed();
      QTest::qWait(20);  // a tick after the result too
      gaps.stop();
      QElapsedTimer flushing;
      flushing.start();
      controller_->store().flush();  // the test waits here, not the app
      flushMs = flushing.elapsed();
      QVERIFY2(ok, qPrintable(action + " never showed its result"));
    }
    qInfo("%s: longest GUI-thread gap %lld ms; shown after %lld ms; the store needed %lld ms more",
          qPrintable(action), gaps.longestMs(), shownAfterMs, flushMs);
    QVERIFY2(gaps.longestMs() < kGapBoundMs,
             qPrintable(QStringLiteral("the GUI thread stood still for %1 ms").arg(gaps.longestMs())));
    QVERIFY2(shownAfterMs + flushMs >= 800,
             qPrintable(QStringLiteral("the store finished in %1 ms: the slow disk was not on "
                                       "the path").arg(shownAfterMs + flushMs)));
    expectUiAsStored(action == "search");
    if (action.startsWith("export")) {
      // Byte for byte what the synchronous export writes now (the store has flushed: the rename
      // queued before it is in both).
      const QByteArray written = readAll(actions_->exportFile);
      QVERIFY(!written.isEmpty());
      QCOMPARE(written, referenceExport(path_, action.section(' ', 1)));
      QVERIFY(written.contains(QStringLiteral("exported %1").arg(actions_->sent).toUtf8()));
    }
    if (action == "import") {
      // One new chat, shown, holding the messages of the chat it was exported from.
      const QStringList after = RawDb(path_).column("SELECT id FROM conversations ORDER BY id");
      QCOMPARE(after.size(), conversationsBefore.size() + 1);
      QVERIFY(!conversationsBefore.contains(QString::number(current())));
      QCOMPARE(chatRows(path_, current()), chatRows(path_, importedFrom_));
      QVERIFY(controller_->conversations()->rowOf(current()) >= 0);
    }
  }

  // While one export or import runs, a second of either is refused with the reason, and the
  // busy state is shown until the first one's outcome arrives.
  void secondTransferIsRefused() {
    controller_->store().flush();
    const QString file = dir_.filePath("first.json");
    QSignalSpy exported(controller_.get(), SIGNAL(exportFinished(QString,QString)));
    QVERIFY(exported.isValid());
    {
      SlowDisk slow(100, 800);
      controller_->renameConversation(current(), QStringLiteral("busy %1").arg(++actions_->sent));
      QCOMPARE(controller_->exportConversations(0, QUrl::fromLocalFile(file), "json"), QString());
      QVERIFY(controller_->property("exporting").toBool());
      QVERIFY(controller_->property("transferText").toString().contains(file));
      const QString second =
          controller_->exportConversations(0, QUrl::fromLocalFile(dir_.filePath("second.json")), "json");
      QVERIFY2(second.contains("Try again"), qPrintable(second));
      const QString import = controller_->importConversations(QUrl::fromLocalFile(file));
      QVERIFY2(import.contains("Try again"), qPrintable(import));
      QTRY_COMPARE_WITH_TIMEOUT(exported.count(), 1, 20000);
    }
    QCOMPARE(exported.at(0).at(0).toString(), file);
    QCOMPARE(exported.at(0).at(1).toString(), QString());
    QVERIFY(!controller_->property("exporting").toBool());
    QVERIFY(!QFile::exists(dir_.filePath("second.json")));
    // A failed one brings its reason (a folder that does not exist).
    const QString bad = dir_.filePath("no-such-folder/x.json");
    QCOMPARE(controller_->exportConversations(0, QUrl::fromLocalFile(bad), "json"), QString());
    QTRY_COMPARE_WITH_TIMEOUT(exported.count(), 2, 20000);
    QVERIFY2(exported.at(1).at(1).toString().contains(bad), qPrintable(exported.at(1).at(1).toString()));
  }

  // A quit (the controller destroyed) right after an export and an import were started, with a
  // new chat made behind the import: both finish before the process ends. The file is whole,
  // the import is all there, and the new chat's id, handed out while the import waited, was
  // not taken by the import's rows.
  void quitDuringTransferFinishesIt() {
    controller_->store().flush();
    const QString source = dir_.filePath("quit-source.json");
    {
      QFile f(source);
      QVERIFY(f.open(QIODevice::WriteOnly));
      f.write(referenceExport(path_, "json", current()));
    }
    const QString db = dir_.filePath("quit.sqlite");
    const QString out = dir_.filePath("quit-export.md");
    {
      AppController::Options options;
      options.databasePath = db;
      options.modelFolders = {};
      auto other = std::make_unique<AppController>(options);
      QVERIFY(ember::test::waitForStoreOpen(*other));
      SlowDisk slow(10, 100);  // slow enough that the quit comes while it runs
      QCOMPARE(other->importConversations(QUrl::fromLocalFile(source)), QString());
      other->newConversation();
      QTest::qWait(50);  // the import is on the disk now
      other.reset();  // the quit
    }
    QCOMPARE(integrityCheck(db), QStringLiteral("ok"));
    RawDb raw(db);
    const QStringList chats = raw.column("SELECT title FROM conversations ORDER BY id");
    QCOMPARE(chats.size(), 2);  // the imported one and the new chat
    const QStringList imported = raw.column(
        "SELECT id FROM conversations WHERE title <> 'New chat' ORDER BY id");
    QCOMPARE(imported.size(), 1);
    QCOMPARE(chatRows(db, imported.at(0).toLongLong()), chatRows(path_, current()));
    {
      AppController::Options options;
      options.databasePath = db;
      auto other = std::make_unique<AppController>(options);
      QVERIFY(ember::test::waitForStoreOpen(*other));
      SlowDisk slow(10, 100);  // slow enough that the quit comes while it runs
      QCOMPARE(other->exportConversations(0, QUrl::fromLocalFile(out), "md"), QString());
      other.reset();
    }
    QCOMPARE(readAll(out), referenceExport(db, "md"));
  }

  void refusedWriteIsShownAndUndone_data() {
    QTest::addColumn<QString>("action");
    for (const QString& action : kActions)
      if (action != "open chat" && action != "search")  // reads: nothing to refuse
        QTest::newRow(qPrintable(action)) << action;
  }
  void refusedWriteIsShownAndUndone() {
    QFETCH(QString, action);
    if (action == "restore") {  // something to restore, deleted at full speed
      controller_->deleteConversation(otherChat());
      controller_->store().flush();
    }
    controller_->dismissNotice();
    QSignalSpy finished(controller_.get(), &AppController::answerFinished);
    {
      Armed armed(Kind::DiskFull, 1);
      start(action, finished);
      controller_->store().flush();
      QTRY_VERIFY_WITH_TIMEOUT(!controller_->notice().isEmpty(), 10000);
      QVERIFY(injected() > 0);
      // The undo's reads run while the disk still refuses (they read, never write).
      controller_->store().flush();
      QTRY_VERIFY_WITH_TIMEOUT(!controller_->generating(), 20000);
    }
    const QString notice = controller_->notice();
    QVERIFY2(notice.contains(path_), qPrintable(notice));
    QCOMPARE(integrityCheck(path_), QStringLiteral("ok"));
    expectUiAsStored();
    // Once the disk works again, so does the app.
    QVERIFY(sendAndFinish(*controller_, QStringLiteral("kestrel after a refused %1").arg(action)));
    expectUiAsStored();
  }
};

QTEST_GUILESS_MAIN(ControllerSlowDiskTest)
#include "test_controller_slow_disk.moc"
