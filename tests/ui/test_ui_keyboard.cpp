// The real QML window in-process (offscreen platform) driven by key presses, as a user would:
// Enter sends, Shift+Enter adds a line, Esc stops, Ctrl+N starts a chat with the composer focused,
// Ctrl+F focuses search, and the composer has the focus at start and takes typing before a model
// is loaded (Enter then says why it cannot send). A long paste, drop or middle-click paste is held
// out of the text field as a pasted block.
// References: the composer's placeholder ("Enter sends, Shift+Enter adds a line") and the
// window's shortcuts (Main.qml: Esc, and StandardKey.New / Find, Ctrl+N / Ctrl+F on Linux) for
// the keys; the store for what was sent.
#include <QClipboard>
#include <QDir>
#include <QFile>
#include <QElapsedTimer>
#include <QProcess>
#include <QGuiApplication>
#include <QLocale>
#include <QTimer>
#include <QQmlApplicationEngine>
#include <QQuickItem>
#include <QQuickStyle>
#include <QQuickWindow>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QtQml/qqmlextensionplugin.h>
#include <QtTest>

#include "common/store_open_wait.h"
#include "app/store/store_test_support.h"
#include "common/test_paths.h"
#include "own_x_server.h"
#include "quick_test_items.h"
#include "controller/app_controller.h"

Q_IMPORT_QML_PLUGIN(EmberPlugin)

using namespace ember::app;
using ember::test::anyVisible;
using ember::test::findItem;
using ember::test::typeText;

namespace {
constexpr auto kModel = "SmolLM2-135M-Instruct.Q4_1.gguf";
}  // namespace

class UiKeyboardTest : public QObject {
  Q_OBJECT
  QTemporaryDir dir_;
  std::unique_ptr<AppController> controller_;
  std::unique_ptr<QQmlApplicationEngine> engine_;
  QQuickWindow* window_ = nullptr;
  QString model_;

  QQuickItem* item(const char* name) { return findItem(window_->contentItem(), name); }
  bool waitForModel() {
    (void)QTest::qWaitFor([&] { return !controller_->modelLoading(); }, 60000);
    return controller_->modelLoaded();
  }
  bool ensureModel() {  // for a test run on its own
    if (!controller_->modelLoaded() && !controller_->modelLoading()) controller_->loadModel(model_);
    return waitForModel();
  }
  // Enter sends the pasted block: the block line goes away, the field stays empty, and the
  // message read back from the store equals `text` byte for byte (the answer, if any, ends: a
  // prompt this long cannot fit).
  void sendsBlockAsIs(const QString& text) {
    const int rowsBefore = controller_->messages()->rowCount();
    QTest::keyClick(window_, Qt::Key_Return);
    QTRY_VERIFY_WITH_TIMEOUT(controller_->messages()->rowCount() > rowsBefore, 60000);
    QTRY_VERIFY(!anyVisible(window_->contentItem(), QStringLiteral("pastedBlock")));
    QCOMPARE(item("composerInput")->property("text").toString(), QString());
    controller_->store().flush();
    const auto stored = controller_->store().message(controller_->messages()->row(rowsBefore)->id);
    QVERIFY(stored.has_value());
    QVERIFY(stored->content.toUtf8() == text.toUtf8());
    QVERIFY(QTest::qWaitFor([&] { return !controller_->generating(); }, 60000));
  }
  // The pasted block holds `text`: its line shows the character count, the field never held it.
  void expectPastedBlock(const QString& text) {
    QTRY_VERIFY(anyVisible(window_->contentItem(), QStringLiteral("pastedBlock")));
    QCOMPARE(item("composerInput")->property("length").toInt(), 0);
    const QString line = item("pastedBlock")->property("text").toString();
    QVERIFY2(line.contains(QLocale().toString(text.size())), qPrintable(line));
    QTRY_COMPARE(controller_->contextUsage().value("draft").toString(), text);
  }

 private slots:
  void initTestCase() {
    QString why;
    model_ = ember::test::findModel(kModel, &why);
    if (model_.isEmpty()) {
      if (ember::test::underCi()) QFAIL(qPrintable(why));
      QSKIP(qPrintable(why));
    }
    AppController::Options options;
    options.databasePath = dir_.filePath("ember.sqlite");
    controller_ = std::make_unique<AppController>(options);
    QVERIFY(ember::test::waitForStoreOpen(*controller_));
    AppController::setInstance(controller_.get());
    engine_ = std::make_unique<QQmlApplicationEngine>();
    engine_->load(QUrl(QStringLiteral("qrc:/qt/qml/Ember/Main.qml")));
    QVERIFY(!engine_->rootObjects().isEmpty());
    window_ = qobject_cast<QQuickWindow*>(engine_->rootObjects().first());
    QVERIFY(window_);
    window_->requestActivate();
    QVERIFY(QTest::qWaitForWindowExposed(window_));
  }

  // The composer has the keyboard focus from the start and takes typing even without a model;
  // Enter then says why it cannot send and keeps the text.
  void composerFocusedAndTypingBeforeModel() {
    QQuickItem* input = item("composerInput");
    QVERIFY(input);
    QTRY_VERIFY(input->hasActiveFocus());
    QVERIFY(input->isEnabled());
    QVERIFY(!controller_->composerBlockReason().isEmpty());
    typeText(window_, "early");
    QTest::keyClick(window_, Qt::Key_Return);
    QCOMPARE(input->property("text").toString(), QStringLiteral("early"));
    QCOMPARE(controller_->messages()->rowCount(), 0);
    QTest::keyClick(window_, Qt::Key_A, Qt::ControlModifier);
    QTest::keyClick(window_, Qt::Key_Backspace);
    QCOMPARE(input->property("text").toString(), QString());
    controller_->loadModel(model_);
    QVERIFY(waitForModel());
  }

  void ctrlNFocusesComposer() {
    QTest::keyClick(window_, Qt::Key_N, Qt::ControlModifier);
    QVERIFY(controller_->currentConversationId() != 0);
    QTRY_VERIFY(item("composerInput")->hasActiveFocus());
  }

  void enterSendsShiftEnterAddsLine() {
    QQuickItem* input = item("composerInput");
    QVERIFY(controller_->setSetting("maxTokens", "8"));
    input->forceActiveFocus();
    QSignalSpy finished(controller_.get(), &AppController::answerFinished);
    typeText(window_, "Hello");
    QTest::keyClick(window_, Qt::Key_Return, Qt::ShiftModifier);
    typeText(window_, "there");
    QCOMPARE(input->property("text").toString(), QStringLiteral("Hello\nthere"));
    QTest::keyClick(window_, Qt::Key_Return);
    QTRY_COMPARE(controller_->messages()->rowCount(), 2);
    QCOMPARE(input->property("text").toString(), QString());  // cleared once sent
    const auto sent = controller_->store().message(controller_->messages()->row(0)->id);
    QCOMPARE(sent->content, QStringLiteral("Hello\nthere"));
    QVERIFY(QTest::qWaitFor([&] { return finished.count() == 1; }, 60000));
  }

  void escapeStops() {
    QVERIFY(controller_->setSetting("maxTokens", "-1"));
    item("composerInput")->forceActiveFocus();
    QSignalSpy finished(controller_.get(), &AppController::answerFinished);
    typeText(window_, "Write a long story about the sea.");
    QTest::keyClick(window_, Qt::Key_Return);
    QTRY_VERIFY_WITH_TIMEOUT(controller_->messages()->rowCount() == 4 &&
                                 controller_->messages()->row(3)->text.size() > 5, 60000);
    QTest::keyClick(window_, Qt::Key_Escape);
    QVERIFY(QTest::qWaitFor([&] { return finished.count() == 1; }, 60000));
    QCOMPARE(controller_->messages()->row(3)->status, QStringLiteral("stopped"));
  }

  // A 1 MB paste, then Enter. The composer keeps a paste over 20,000 characters out of its text
  // field (laid out whole, Qt's TextArea held the window 0.8-1.6 s on the paste and 0.3-0.8 s on
  // clearing it at send): it is held as a pasted block, shown as one line with its size, counted
  // by the context meter and sent after what is typed. Checked by structure, through the items:
  // the field's document stays empty while the block line shows the character count, the draft
  // the meter counted is the whole text, a short paste still goes into the field. A 5 ms timer on
  // the GUI thread measures the longest gaps (figures printed; the bounds of 3 s paste and 1.5 s
  // send are the ones from before, kept as a guard for a loaded machine, not a speed claim). The
  // sent message is shown folded and stored byte for byte, Korean included. Reference: the pasted
  // bytes themselves.
  void megabytePasteKeepsTheWindowResponsive() {
    QTest::keyClick(window_, Qt::Key_N, Qt::ControlModifier);
    QQuickItem* input = item("composerInput");
    QTRY_VERIFY(input->hasActiveFocus());
    QString text;
    for (int line = 0; text.toUtf8().size() < (1 << 20); ++line)
      text += QStringLiteral("%1: 안녕하세요, 세계! the quick brown fox 한국어 문장입니다.\n")
                  .arg(line)
                  .repeated(64);
    QVERIFY(text.toUtf8().size() >= (1 << 20));
    // A short paste goes into the field as always.
    QGuiApplication::clipboard()->setText(QStringLiteral("short paste"));
    QTest::keyClick(window_, Qt::Key_V, Qt::ControlModifier);
    QTRY_COMPARE(input->property("text").toString(), QStringLiteral("short paste"));
    QVERIFY(!anyVisible(window_->contentItem(), QStringLiteral("pastedBlock")));
    QTest::keyClick(window_, Qt::Key_A, Qt::ControlModifier);
    QTest::keyClick(window_, Qt::Key_Backspace);
    QCOMPARE(input->property("text").toString(), QString());
    QGuiApplication::clipboard()->setText(text);
    QCOMPARE(QGuiApplication::clipboard()->text(), text);

    QElapsedTimer sinceTick, total;
    qint64 longestGapMs = 0;
    QTimer ticker;
    ticker.setInterval(5);
    connect(&ticker, &QTimer::timeout,
            [&] { longestGapMs = std::max(longestGapMs, sinceTick.restart()); });
    sinceTick.start();
    total.start();
    ticker.start();
    QTest::keyClick(window_, Qt::Key_V, Qt::ControlModifier);
    QTRY_VERIFY_WITH_TIMEOUT(anyVisible(window_->contentItem(), QStringLiteral("pastedBlock")),
                             60000);
    QCOMPARE(input->property("length").toInt(), 0);  // the field never held the megabyte
    QVERIFY2(item("pastedBlock")->property("text").toString().contains(
                 QLocale().toString(text.size())),
             qPrintable(item("pastedBlock")->property("text").toString()));
    QTRY_VERIFY_WITH_TIMEOUT(controller_->contextUsage().value("draft").toString() == text &&
                                 controller_->contextUsage().value("known").toBool(),
                             60000);
    const qint64 pasteGapMs = longestGapMs, countedAfterMs = total.elapsed();
    QVERIFY(!controller_->contextUsage().value("fits").toBool());  // far past 8192 tokens

    longestGapMs = 0;
    sinceTick.restart();
    total.restart();
    QSignalSpy finished(controller_.get(), &AppController::answerFinished);
    const int rowsBefore = controller_->messages()->rowCount();
    QTest::keyClick(window_, Qt::Key_Return);
    QTRY_VERIFY_WITH_TIMEOUT(controller_->messages()->rowCount() > rowsBefore, 60000);
    QTRY_VERIFY_WITH_TIMEOUT(!anyVisible(window_->contentItem(), QStringLiteral("pastedBlock")),
                             60000);
    QCOMPARE(input->property("text").toString(), QString());
    const qint64 sendGapMs = longestGapMs, sentAfterMs = total.elapsed();
    ticker.stop();
    qInfo("1 MiB paste: longest GUI gap %lld ms (counted after %lld ms); send: %lld ms (shown "
          "after %lld ms)", pasteGapMs, countedAfterMs, sendGapMs, sentAfterMs);
    QVERIFY2(pasteGapMs < 3000, qPrintable(QString::number(pasteGapMs)));
    QVERIFY2(sendGapMs < 1500, qPrintable(QString::number(sendGapMs)));
    QTRY_VERIFY(anyVisible(window_->contentItem(), QStringLiteral("showWholeMessage")));

    // Stored byte for byte; the answer, if any, ends (a prompt this long cannot fit).
    const qint64 userId = controller_->messages()->row(rowsBefore)->id;
    controller_->store().flush();
    const auto stored = controller_->store().message(userId);
    QVERIFY(stored.has_value());
    QVERIFY(stored->content.toUtf8() == text.toUtf8());
    QVERIFY(QTest::qWaitFor([&] { return !controller_->generating(); }, 60000));
  }

  // Text dragged from another program and dropped on the composer goes the way of Ctrl+V: a
  // short text into the field where it is dropped, 100,000 characters of Korean and English into
  // the pasted block, never into the field, and sent as dropped. The drop is real Qt drag events
  // (enter, move, drop) delivered by the window. Reference: the dropped text itself.
  void droppedTextGoesLikeAPaste() {
    QVERIFY(ensureModel());
    QTest::keyClick(window_, Qt::Key_N, Qt::ControlModifier);
    QQuickItem* input = item("composerInput");
    QTRY_VERIFY(input->hasActiveFocus());
    QVERIFY(ember::test::dropText(window_, ember::test::centreOf(input), "dropped 짧은 글"));
    QCOMPARE(input->property("text").toString(), QStringLiteral("dropped 짧은 글"));
    QVERIFY(!anyVisible(window_->contentItem(), QStringLiteral("pastedBlock")));
    QTest::keyClick(window_, Qt::Key_A, Qt::ControlModifier);
    QTest::keyClick(window_, Qt::Key_Backspace);

    const QString text = ember::test::koreanAndEnglishText(100000);
    QQuickItem* meter = item("contextMeter");  // any part of the composer takes the drop
    QVERIFY(meter);
    QVERIFY(ember::test::dropText(window_, ember::test::centreOf(meter), text));
    expectPastedBlock(text);
    QVERIFY(!QTest::currentTestFailed());
    sendsBlockAsIs(text);
  }

  // Files dragged from a file manager and dropped on the composer are attached: each text file
  // shows as a line with its name, and Enter sends the typed text, then each file under its name
  // in a fenced block (the store must hold exactly that). A binary file and a folder are refused
  // with the composer saying why, naming them; the text file dropped with them still goes.
  // References: the files' own bytes and the block format written out by hand.
  void droppedFilesAreAttached() {
    QVERIFY(ensureModel());
    QTest::keyClick(window_, Qt::Key_N, Qt::ControlModifier);
    QQuickItem* input = item("composerInput");
    QTRY_VERIFY(input->hasActiveFocus());
    const QString notes = QStringLiteral("회의 메모\nShip on Friday, 금요일에 배포.\n");
    const QString notesPath = dir_.filePath("메모.txt");
    const QString binaryPath = dir_.filePath("photo.png");
    const QString folderPath = dir_.filePath("a folder");
    for (const auto& [path, bytes] : {std::pair{notesPath, notes.toUtf8()},
                                      std::pair{binaryPath, QByteArray("\x89PNG\r\n\x1a\n\0\0", 10)}}) {
      QFile f(path);
      QVERIFY(f.open(QIODevice::WriteOnly));
      QCOMPARE(f.write(bytes), bytes.size());
    }
    QVERIFY(QDir().mkpath(folderPath));
    typeText(window_, "Summarise this.");
    QVERIFY(ember::test::dropUrls(window_, ember::test::centreOf(input),
                                  {QUrl::fromLocalFile(binaryPath), QUrl::fromLocalFile(notesPath),
                                   QUrl::fromLocalFile(folderPath)}));
    QTRY_VERIFY(anyVisible(window_->contentItem(), QStringLiteral("attachedFile")));
    const QString line = item("attachedFile")->property("text").toString();
    QVERIFY2(line.contains(QStringLiteral("메모.txt")) &&
                 line.contains(QLocale().toString(notes.size())), qPrintable(line));
    const QString notice = item("composerNotice")->property("text").toString();
    QVERIFY2(notice.contains(QStringLiteral("photo.png")) && notice.contains(QStringLiteral("a folder")),
             qPrintable(notice));
    QCOMPARE(input->property("text").toString(), QStringLiteral("Summarise this."));  // no paths

    const int rowsBefore = controller_->messages()->rowCount();
    QTest::keyClick(window_, Qt::Key_Return);
    QTRY_VERIFY_WITH_TIMEOUT(controller_->messages()->rowCount() > rowsBefore, 60000);
    QTRY_VERIFY(!anyVisible(window_->contentItem(), QStringLiteral("attachedFile")));
    controller_->store().flush();
    const auto stored = controller_->store().message(controller_->messages()->row(rowsBefore)->id);
    QVERIFY(stored.has_value());
    QCOMPARE(stored->content, QStringLiteral("Summarise this.\n\n메모.txt:\n```txt\n") + notes +
                                  QStringLiteral("```"));
    QTest::keyClick(window_, Qt::Key_Escape);  // the answer is not what this test is about
    QVERIFY(QTest::qWaitFor([&] { return !controller_->generating(); }, 60000));
  }

  // A middle click on the field pastes the primary selection (X11): a short one at the click,
  // 100,000 characters into the pasted block, sent as selected. The offscreen platform has no
  // selection, so this runs itself again in a child on an Xvfb of its own (xcb); the child selects the text
  // in its own clipboard and clicks with the middle button. Reference: the selected text.
  void middleClickPastesTheSelection() {
    if (QGuiApplication::platformName() != QStringLiteral("xcb")) {
      if (!ember::test::OwnXServer::available()) {
        if (ember::test::underCi()) QFAIL("Xvfb not found (apt-get install xvfb)");
        QSKIP("Xvfb not found (apt-get install xvfb)");
      }
      ember::test::OwnXServer xserver;
      const QString display = xserver.start();
      QVERIFY2(!display.isEmpty(), "Xvfb did not start");
      QProcess child;
      QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
      env.insert(QStringLiteral("EMBER_UI_TEST_PLATFORM"), QStringLiteral("xcb"));
      env.insert(QStringLiteral("DISPLAY"), display);
      child.setProcessEnvironment(env);
      child.setProcessChannelMode(QProcess::MergedChannels);
      child.start(QCoreApplication::applicationFilePath(), {"middleClickPastesTheSelection"});
      QVERIFY(child.waitForFinished(240000));
      const QByteArray output = child.readAll();
      QVERIFY2(child.exitCode() == 0 &&
                   output.contains("PASS   : UiKeyboardTest::middleClickPastesTheSelection()"),
               output.constData());
      return;
    }
    QVERIFY(QGuiApplication::clipboard()->supportsSelection());
    QVERIFY(QTest::qWaitForWindowActive(window_));
    QVERIFY(ensureModel());
    QTest::keyClick(window_, Qt::Key_N, Qt::ControlModifier);
    QQuickItem* input = item("composerInput");
    QTRY_VERIFY(input->hasActiveFocus());
    QGuiApplication::clipboard()->setText(QStringLiteral("selected 선택"), QClipboard::Selection);
    QTest::mouseClick(window_, Qt::MiddleButton, {}, ember::test::centreOf(input));
    QTRY_COMPARE(input->property("text").toString(), QStringLiteral("selected 선택"));
    QTest::keyClick(window_, Qt::Key_A, Qt::ControlModifier);  // selects: the selection changes
    QTest::keyClick(window_, Qt::Key_Backspace);
    QCOMPARE(input->property("text").toString(), QString());

    const QString text = ember::test::koreanAndEnglishText(100000);
    QGuiApplication::clipboard()->setText(text, QClipboard::Selection);
    QTest::mouseClick(window_, Qt::MiddleButton, {}, ember::test::centreOf(input));
    expectPastedBlock(text);
    QVERIFY(!QTest::currentTestFailed());
    sendsBlockAsIs(text);
  }

  void ctrlFFocusesSearch() {
    QTest::keyClick(window_, Qt::Key_F, Qt::ControlModifier);
    QTRY_VERIFY(item("searchField")->hasActiveFocus());
    typeText(window_, "sea");
    QTRY_VERIFY(controller_->searchResults()->rowCount() >= 1);
  }


  // The window comes up in its opening state before the chats are open: the open ends on the
  // store thread and reaches the GUI thread through its event loop, so the first frame shows it
  // whatever the disk. Here another program holds an exclusive lock on the file, so the open
  // fails (after the store's lock wait): the window shows why, with Try again. A message typed
  // and sent meanwhile is shown as queued; once the lock is gone, Try again (clicked) opens the
  // chats, the window shows the chat, and the message is committed once the model is there.
  // Reference: the file read over a separate SQLite connection.
  void openingAndFailedOpenAreShownInTheWindow() {
    const QString path = dir_.filePath("held.sqlite");
    ember::store::test::RawDb holder(path, ember::store::test::RawDb::Create);
    QVERIFY(holder.exec("CREATE TABLE held (x); BEGIN EXCLUSIVE; INSERT INTO held VALUES (1);"));
    AppController::Options options;
    options.databasePath = path;
    auto opening = std::make_unique<AppController>(options);
    AppController::setInstance(opening.get());
    auto engine = std::make_unique<QQmlApplicationEngine>();
    engine->load(QUrl(QStringLiteral("qrc:/qt/qml/Ember/Main.qml")));
    QVERIFY(!engine->rootObjects().isEmpty());
    auto* window = qobject_cast<QQuickWindow*>(engine->rootObjects().first());
    QVERIFY(window);
    QQuickItem* pane = findItem(window->contentItem(), "storeOpeningPane");
    QVERIFY(pane);
    QVERIFY(opening->storeOpening());
    QVERIFY(pane->isVisible());
    QCOMPARE(findItem(pane, "storeOpeningTitle")->property("text").toString(),
             QStringLiteral("Opening your chats…"));
    window->requestActivate();
    QVERIFY(QTest::qWaitForWindowExposed(window));
    QQuickItem* input = findItem(window->contentItem(), "composerInput");
    input->forceActiveFocus();
    typeText(window, "typed while held");
    QTest::keyClick(window, Qt::Key_Return);
    QCOMPARE(opening->queuedMessage(), QStringLiteral("typed while held"));
    QVERIFY(anyVisible(window->contentItem(), "queuedMessage"));
    QTRY_VERIFY_WITH_TIMEOUT(!opening->storeError().isEmpty(), 20000);
    QVERIFY(pane->isVisible());
    QCOMPARE(findItem(pane, "storeOpeningTitle")->property("text").toString(),
             QStringLiteral("Your chats could not be opened"));
    QCOMPARE(findItem(pane, "storeOpeningDetail")->property("text").toString(),
             opening->storeError());
    QCOMPARE(findItem(window->contentItem(), "queuedMessage")->property("text").toString(),
             QStringLiteral("Queued, sent once your chats are open: typed while held"));
    QQuickItem* retry = findItem(pane, "retryOpenStore");
    QVERIFY(retry && retry->isVisible());
    QVERIFY(holder.exec("COMMIT;"));  // the other program lets go
    QTest::mouseClick(window, Qt::LeftButton, {},
                      retry->mapToScene(QPointF(retry->width() / 2, retry->height() / 2)).toPoint());
    QTRY_VERIFY_WITH_TIMEOUT(!opening->storeOpening() && opening->storeError().isEmpty(), 20000);
    QTRY_VERIFY(!pane->isVisible());
    opening->loadModel(model_);
    QVERIFY(QTest::qWaitFor([&] { return !opening->modelLoading(); }, 60000));
    QTRY_VERIFY_WITH_TIMEOUT(opening->generating(), 20000);
    opening->stop();
    QVERIFY(QTest::qWaitFor([&] { return !opening->generating(); }, 60000));
    opening->store().flush();
    QCOMPARE(ember::store::test::RawDb(path).value(
                 "SELECT count(*) FROM messages WHERE role = 'user' AND content = ?1",
                 {QStringLiteral("typed while held")}),
             QStringLiteral("1"));
    engine.reset();
    AppController::setInstance(controller_.get());
    opening.reset();
  }

  void cleanupTestCase() {
    engine_.reset();
    controller_.reset();
  }
};

int main(int argc, char* argv[]) {
  // Offscreen, except where a test runs itself again under Xvfb (the middle-click paste).
  const QByteArray platform = qgetenv("EMBER_UI_TEST_PLATFORM");
  qputenv("QT_QPA_PLATFORM", platform.isEmpty() ? QByteArray("offscreen") : platform);
  QGuiApplication app(argc, argv);
  QQuickStyle::setStyle(QStringLiteral("Fusion"));
  UiKeyboardTest test;
  return QTest::qExec(&test, argc, argv);
}
#include "test_ui_keyboard.moc"
