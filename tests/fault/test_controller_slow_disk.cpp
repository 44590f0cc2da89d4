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
#include "fault/fault_vfs.h"
#include "store/export/chat_export.h"

using namespace ember::app;
using namespace ember::test::fault;
using ember::store::test::RawDb;
using ember::store::test::integrityCheck;

namespace {
constexpr auto kModel = "SmolLM2-135M-Instruct.Q4_1.gguf";
constexpr qint64 kGapBoundMs = 400;
const QStringList kActions = {"new chat", "send", "rename", "pin", "setting", "trash", "restore",
                              "open chat", "search", "edit", "regenerate"};
// Run on the slow disk only (export reads; a refused import is covered by the store's tests).
const QStringList kTransfers = {"export json", "export md", "import"};

// What the synchronous export wrote for these chats (see the top).
QByteArray referenceExport(const QString& db, const QString& format, qint64 conversationId = 0) {
  const auto doc = ember::chatexport::exportJson(
      db.toStdString(), conversationId > 0 ? std::optional<int64_t>(conversationId) : std::nullopt);
  const std::string text =
      format == "json" ? doc.dump(2) + "\n" : ember::chatexport::toMarkdown(doc);
  return QByteArray(text.data(), qsizetype(text.size()));
}
QByteArray readAll(const QString& path) {
  QFile f(path);
  return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}
// Every message of a chat as role|content, in id order (imported ids keep the file's order).
QStringList chatRows(const QString& db, qint64 conversationId) {
  return RawDb(db).column(
      "SELECT role || '|' || content FROM messages WHERE conversation_id = ?1 ORDER BY id",
      {QString::number(conversationId)});
}
}  // namespace

class ControllerSlowDiskTest : public QObject {
  Q_OBJECT
  QTemporaryDir dir_{QDir::currentPath() + "/controller-slow-disk-XXXXXX"};  // in the build folder
  QString path_;
  std::unique_ptr<AppController> controller_;
  int sent_ = 0;
  QString exportFile_;         // the export action's file
  QString importFile_;         // the import action's file: an export of importedFrom_
  qint64 importedFrom_ = 0;

  bool loading() const { return controller_->property("messagesLoading").toBool(); }
  bool searching() const { return controller_->property("searching").toBool(); }
  qint64 current() const { return controller_->currentConversationId(); }

  bool sendAndFinish(const QString& text) {
    QSignalSpy finished(controller_.get(), &AppController::answerFinished);
    if (!controller_->send(text)) return false;
    return QTest::qWaitFor([&] { return finished.count() >= 1; }, 120000);
  }
  // Another conversation than the shown one with messages in it (made when there is none).
  qint64 otherChat() {
    auto* list = controller_->conversations();
    for (int i = 0; i < list->rowCount(); ++i)
      if (list->idAt(i) != current()) return list->idAt(i);
    const qint64 shown = current();
    controller_->newConversation();
    sendAndFinish(QStringLiteral("another chat"));
    const qint64 other = current();
    controller_->openConversation(shown);
    QTest::qWaitFor([&] { return !loading(); }, 10000);
    return other;
  }

  // Starts the action; returns the condition under which the UI shows its result.
  std::function<bool()> start(const QString& action, QSignalSpy& finished) {
    auto answered = [&finished] { return finished.count() >= 1; };
    if (action == "new chat") {
      const qint64 before = current();
      controller_->newConversation();
      return [this, before] { return current() != before && current() != 0; };
    }
    if (action == "send") {
      // Refused at once (a write that failed while the GUI waited for it): nothing to wait for.
      if (!controller_->send(QStringLiteral("kestrel %1 question").arg(++sent_)))
        return [] { return true; };
      return answered;
    }
    if (action == "rename") {
      controller_->renameConversation(current(), QStringLiteral("renamed %1").arg(++sent_));
      return [] { return true; };
    }
    if (action == "pin") {
      const auto* list = controller_->conversations();
      const bool pinned = list->data(list->index(list->rowOf(current())),
                                     ConversationListModel::PinnedRole).toBool();
      controller_->setPinned(current(), !pinned);
      return [] { return true; };
    }
    if (action == "setting") {
      const double t = controller_->settings().value("temperature").toDouble() == 0 ? 0.5 : 0;
      controller_->setSetting("temperature", QString::number(t));
      return [] { return true; };
    }
    if (action == "trash") {
      controller_->deleteConversation(current());
      return [this] { return !loading(); };
    }
    if (action == "restore") {
      controller_->undoDelete();
      return [this] { return !loading(); };
    }
    if (action == "open chat") {
      const qint64 other = otherChat();
      // A write on the disk ahead of the read: the read's answer needs it to finish first.
      controller_->renameConversation(current(), QStringLiteral("left %1").arg(++sent_));
      controller_->openConversation(other);
      return [this] { return !loading() && controller_->messages()->rowCount() > 0; };
    }
    if (action == "search") {
      controller_->renameConversation(current(), QStringLiteral("searched %1").arg(++sent_));
      controller_->search(QStringLiteral("kestrel"));
      return [this] { return !searching() && controller_->searchResults()->rowCount() > 0; };
    }
    if (action == "edit") {
      const auto* rows = controller_->messages();
      controller_->editMessage(rows->row(rows->rowCount() - 2)->id,
                               QStringLiteral("kestrel %1 edited").arg(++sent_));
      return answered;
    }
    if (action == "regenerate") {
      controller_->regenerate();
      return answered;
    }
    if (action.startsWith("export")) {
      const QString format = action.section(' ', 1);
      exportFile_ = dir_.filePath("export-%1.%2").arg(++sent_).arg(format);
      // A write on the disk ahead of it: the export must include it, so it waits for it.
      controller_->renameConversation(current(), QStringLiteral("exported %1").arg(sent_));
      const QString refused = controller_->exportConversations(0, QUrl::fromLocalFile(exportFile_), format);
      if (!refused.isEmpty()) qFatal("export refused: %s", qPrintable(refused));
      const QString saved = QStringLiteral("Saved to %1").arg(exportFile_);
      return [this, saved] { return controller_->notice() == saved; };
    }
    if (action == "import") {
      const QString refused = controller_->importConversations(QUrl::fromLocalFile(importFile_));
      if (!refused.isEmpty()) qFatal("import refused: %s", qPrintable(refused));
      return [this] {
        return controller_->notice().startsWith("Imported 1 conversation") && !loading() &&
               controller_->messages()->rowCount() > 0;
      };
    }
    qFatal("unknown action");
  }

  // The UI against the file: the list (id, title, pinned), the shown branch (id, role, text), the
  // shown chat's temperature and, right after a search, its results.
  void expectUiAsStored(bool searched = false) {
    controller_->store().flush();
    QTRY_VERIFY_WITH_TIMEOUT(!loading() && !searching() && !controller_->generating(), 20000);
    controller_->store().flush();  // reads queued by a failure's undo
    QTest::qWait(50);
    QVERIFY(!loading());
    RawDb db(path_);
    QStringList stored = db.column(
        "SELECT id || '|' || title || '|' || pinned FROM conversations WHERE deleted_at IS NULL "
        "ORDER BY id");
    QStringList shown;
    const auto* list = controller_->conversations();
    for (int i = 0; i < list->rowCount(); ++i) {
      const QModelIndex at = list->index(i);
      shown << QStringLiteral("%1|%2|%3")
                   .arg(list->idAt(i))
                   .arg(list->data(at, ConversationListModel::TitleRole).toString())
                   .arg(list->data(at, ConversationListModel::PinnedRole).toBool() ? 1 : 0);
    }
    std::sort(shown.begin(), shown.end(), [](const QString& a, const QString& b) {
      return a.section('|', 0, 0).toLongLong() < b.section('|', 0, 0).toLongLong();
    });
    QCOMPARE(shown, stored);
    const QString id = QString::number(current());
    QStringList branch = db.column(
        "WITH RECURSIVE b(id, parent_id, role, content, depth) AS ("
        " SELECT id, parent_id, role, content, 0 FROM messages"
        "  WHERE id = (SELECT active_leaf_id FROM conversations WHERE id = ?1)"
        " UNION ALL SELECT m.id, m.parent_id, m.role, m.content, b.depth + 1"
        "  FROM messages m JOIN b ON m.id = b.parent_id)"
        "SELECT id || '|' || role || '|' || content FROM b ORDER BY depth DESC", {id});
    QStringList rows;
    for (int i = 0; i < controller_->messages()->rowCount(); ++i) {
      const MessageRow* r = controller_->messages()->row(i);
      rows << QStringLiteral("%1|%2|%3").arg(r->id).arg(r->role, r->text);
    }
    QCOMPARE(rows, current() == 0 ? QStringList() : branch);
    if (current() != 0) {
      // Every answer in this test is bounded (see initTestCase), whichever chat is shown.
      QCOMPARE(controller_->settings().value("maxTokens").toInt(), 4);
      const QJsonObject own = QJsonDocument::fromJson(
          db.value("SELECT coalesce(settings, '{}') FROM conversations WHERE id = ?1", {id})
              .toUtf8()).object();
      if (own.contains("temperature"))
        QCOMPARE(controller_->settings().value("temperature").toDouble(),
                 own.value("temperature").toDouble());
    }
    if (searched) {
      QStringList hits;
      const auto* results = controller_->searchResults();
      for (int i = 0; i < results->rowCount(); ++i)
        hits << results->data(results->index(i), SearchResultModel::MessageIdRole).toString();
      std::sort(hits.begin(), hits.end());
      QStringList matching = db.column(
          "SELECT m.id FROM messages m JOIN conversations c ON c.id = m.conversation_id "
          "WHERE c.deleted_at IS NULL AND m.content LIKE '%kestrel%' ORDER BY m.id");
      std::sort(matching.begin(), matching.end());
      QCOMPARE(hits, matching);
    }
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
    QVERIFY(sendAndFinish(QStringLiteral("kestrel saved before the slow disk")));
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
      importFile_ = dir_.filePath("import.json");
      QFile f(importFile_);
      QVERIFY(f.open(QIODevice::WriteOnly));
      f.write(referenceExport(path_, "json", importedFrom_));
      f.close();
      conversationsBefore = RawDb(path_).column("SELECT id FROM conversations ORDER BY id");
    }
    QSignalSpy finished(controller_.get(), &AppController::answerFinished);
    QElapsedTimer sinceTick, took;
    qint64 longestGapMs = 0, shownAfterMs = 0, flushMs = 0;
    QTimer ticker;
    ticker.setInterval(5);
    connect(&ticker, &QTimer::timeout, [&] { longestGapMs = std::max(longestGapMs, sinceTick.restart()); });
    {
      SlowDisk slow(100, 800);
      sinceTick.start();
      took.start();
      ticker.start();
      const std::function<bool()> shown = start(action, finished);
      const bool ok = QTest::qWaitFor(shown, 120000);
      shownAfterMs = took.elapsed();
      QTest::qWait(20);  // a tick after the result too
      ticker.stop();
      QElapsedTimer flushing;
      flushing.start();
      controller_->store().flush();  // the test waits here, not the app
      flushMs = flushing.elapsed();
      QVERIFY2(ok, qPrintable(action + " never showed its result"));
    }
    qInfo("%s: longest GUI-thread gap %lld ms; shown after %lld ms; the store needed %lld ms more",
          qPrintable(action), longestGapMs, shownAfterMs, flushMs);
    QVERIFY2(longestGapMs < kGapBoundMs,
             qPrintable(QStringLiteral("the GUI thread stood still for %1 ms").arg(longestGapMs)));
    QVERIFY2(shownAfterMs + flushMs >= 800,
             qPrintable(QStringLiteral("the store finished in %1 ms: the slow disk was not on "
                                       "the path").arg(shownAfterMs + flushMs)));
    expectUiAsStored(action == "search");
    if (action.startsWith("export")) {
      // Byte for byte what the synchronous export writes now (the store has flushed: the rename
      // queued before it is in both).
      const QByteArray written = readAll(exportFile_);
      QVERIFY(!written.isEmpty());
      QCOMPARE(written, referenceExport(path_, action.section(' ', 1)));
      QVERIFY(written.contains(QStringLiteral("exported %1").arg(sent_).toUtf8()));
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
      controller_->renameConversation(current(), QStringLiteral("busy %1").arg(++sent_));
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
    QVERIFY(sendAndFinish(QStringLiteral("kestrel after a refused %1").arg(action)));
    expectUiAsStored();
  }
};

QTEST_GUILESS_MAIN(ControllerSlowDiskTest)
#include "test_controller_slow_disk.moc"
