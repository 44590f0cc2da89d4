// The real QML window in-process (offscreen platform) driven by key presses, as a user would:
// Enter sends, Shift+Enter adds a line, Esc stops, Ctrl+N starts a chat with the composer focused,
// Ctrl+F focuses search, and the composer has the focus at start and takes typing before a model
// is loaded (Enter then says why it cannot send).
// References: the key bindings written in the issue; the store for what was sent.
#include <QGuiApplication>
#include <QQmlApplicationEngine>
#include <QQuickItem>
#include <QQuickStyle>
#include <QQuickWindow>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QtQml/qqmlextensionplugin.h>
#include <QtTest>

#include "common/test_paths.h"
#include "controller/app_controller.h"

Q_IMPORT_QML_PLUGIN(EmberPlugin)

using namespace ember::app;

namespace {
constexpr auto kModel = "SmolLM2-135M-Instruct.Q4_1.gguf";

QQuickItem* findItem(QQuickItem* item, const QString& name) {
  if (item->objectName() == name) return item;
  for (QQuickItem* child : item->childItems())
    if (QQuickItem* found = findItem(child, name)) return found;
  return nullptr;
}
// QTest::keyClicks exists only for widgets; a window gets one key at a time.
void typeText(QWindow* window, const char* text) {
  for (const char* c = text; *c; ++c) QTest::keyClick(window, *c);
}
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

  void ctrlFFocusesSearch() {
    QTest::keyClick(window_, Qt::Key_F, Qt::ControlModifier);
    QTRY_VERIFY(item("searchField")->hasActiveFocus());
    typeText(window_, "sea");
    QTRY_VERIFY(controller_->searchResults()->rowCount() >= 1);
  }

  void cleanupTestCase() {
    engine_.reset();
    controller_.reset();
  }
};

int main(int argc, char* argv[]) {
  qputenv("QT_QPA_PLATFORM", "offscreen");
  QGuiApplication app(argc, argv);
  QQuickStyle::setStyle(QStringLiteral("Fusion"));
  UiKeyboardTest test;
  return QTest::qExec(&test, argc, argv);
}
#include "test_ui_keyboard.moc"
