// Loading a model in the AppController on the real reference models: the percentage the UI
// shows only grows and reaches 100 before the model is ready; Cancel leaves a clear state: the
// model loaded before is loaded again (the engine freed it when the new load began) with a
// notice that says so, or, with none before, no model and a notice, and the composer says why it
// cannot send; a load replaced by another ends silently. References: the wording the controller
// documents ("Loading <file> N%", the notices), the load's own end (modelLoaded, an answer that
// finishes on the model gone back to), and the engine's stage split checked against gguf-py's
// byte counts in test_engine_load_progress.
#include <QRegularExpression>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QGuiApplication>
#include <QtTest>

#include "common/store_open_wait.h"
#include "common/test_paths.h"
#include "controller/app_controller.h"

using namespace ember::app;

namespace {
constexpr auto kDefaultModel = "SmolLM2-135M-Instruct.Q4_1.gguf";
constexpr auto kOtherModel = "gemma-3-270m-q4_k_m.gguf";
}  // namespace

class ModelLoadProgressTest : public QObject {
  Q_OBJECT
  QTemporaryDir dir_;
  QString smol_, gemma_;
  std::unique_ptr<AppController> controller_;

  std::unique_ptr<AppController> makeController(const QString& db) const {
    AppController::Options o;
    o.databasePath = dir_.filePath(db);
    o.modelFolders = {ember::test::modelsDir()};
    auto c = std::make_unique<AppController>(o);
    (void)ember::test::waitForStoreOpen(*c);
    return c;
  }
  static bool waitForLoadEnd(AppController& c) {
    return QTest::qWaitFor([&] { return !c.modelLoading(); }, 120000);
  }

 private slots:
  void initTestCase() {
    EMBER_REQUIRE_MODEL(smol, kDefaultModel);
    EMBER_REQUIRE_MODEL(gemma, kOtherModel);
    smol_ = smol;
    gemma_ = gemma;
    controller_ = makeController("ember.sqlite");
    QVERIFY(controller_->setSetting("maxTokens", "4"));
    QVERIFY(controller_->setSetting("backend", "cpu"));
  }

  void percentGrowsToHundredBeforeReady() {
    QList<double> fractions;
    QStringList texts;
    QObject context;
    connect(controller_.get(), &AppController::modelLoadProgressChanged, &context, [&] {
      if (!controller_->modelLoading()) return;
      fractions << controller_->modelLoadFraction();
      texts << controller_->modelLoadText();
    });
    controller_->loadModel(smol_);
    QVERIFY(controller_->modelLoading());
    QCOMPARE(controller_->modelLoadText(), QStringLiteral("Loading %1 0%").arg(kDefaultModel));
    QVERIFY(waitForLoadEnd(*controller_));
    QVERIFY(controller_->modelLoaded());
    // Whole percents of the read and the repack: many steps, never back, 100 last.
    QVERIFY2(fractions.size() >= 10, qPrintable(QString::number(fractions.size())));
    for (qsizetype i = 1; i < fractions.size(); ++i) QVERIFY(fractions[i] >= fractions[i - 1]);
    QCOMPARE(fractions.last(), 1.0);
    QCOMPARE(texts.last(), QStringLiteral("Loading %1 100%").arg(kDefaultModel));
    const QRegularExpression shape(QStringLiteral("^Loading %1 \\d{1,3}%$")
                                       .arg(QRegularExpression::escape(kDefaultModel)));
    for (const QString& t : texts) QVERIFY2(shape.match(t).hasMatch(), qPrintable(t));
    // Loaded: no bar left.
    QCOMPARE(controller_->modelLoadFraction(), 0.0);
    QCOMPARE(controller_->modelLoadText(), QString());
  }

  // Cancelled (here before the engine started it, so the outcome does not depend on timing;
  // the engine test cancels in the middle of each stage): the default model comes back.
  void cancelGoesBackToTheModelBefore() {
    controller_->loadModel(gemma_);
    QVERIFY(controller_->modelLoading());
    controller_->cancelModelLoad();
    QVERIFY(QTest::qWaitFor([&] { return controller_->notice().contains("cancelled"); }, 60000));
    QCOMPARE(controller_->notice(), QStringLiteral("Loading %1 was cancelled; going back to %2.")
                                        .arg(kOtherModel, kDefaultModel));
    QVERIFY(waitForLoadEnd(*controller_));
    QVERIFY(controller_->modelLoaded());
    QCOMPARE(controller_->modelName(), QString(kDefaultModel));
    QCOMPARE(controller_->modelError(), QString());
    // Usable: an answer runs on it.
    QSignalSpy finished(controller_.get(), &AppController::answerFinished);
    controller_->newConversation();
    QVERIFY(controller_->send(QStringLiteral("Hello")));
    QVERIFY(QTest::qWaitFor([&] { return finished.count() >= 1; }, 120000));
  }

  // A second load while one is on its way replaces it: the first ends without a notice.
  void aNewLoadReplacesTheOneOnItsWay() {
    controller_->dismissNotice();
    controller_->loadModel(gemma_);
    controller_->loadModel(smol_);
    QVERIFY(waitForLoadEnd(*controller_));
    QVERIFY(controller_->modelLoaded());
    QCOMPARE(controller_->modelName(), QString(kDefaultModel));
    QCOMPARE(controller_->notice(), QString());
    // The same file again (a reload for new settings): the first load's end is not a cancel.
    controller_->loadModel(smol_);
    controller_->loadModel(smol_);
    QVERIFY(waitForLoadEnd(*controller_));
    QVERIFY(controller_->modelLoaded());
    QCOMPARE(controller_->notice(), QString());
  }

  // Nothing loaded before: cancelled means no model, said in the notice and by the composer.
  void cancelWithNothingBeforeLeavesNoModel() {
    auto fresh = makeController("fresh.sqlite");
    fresh->loadModel(smol_);
    fresh->cancelModelLoad();
    QVERIFY(waitForLoadEnd(*fresh));
    QCOMPARE(fresh->notice(),
             QStringLiteral("Loading %1 was cancelled; no model is loaded.").arg(kDefaultModel));
    QVERIFY(!fresh->modelLoaded());
    QCOMPARE(fresh->modelName(), QString());
    QCOMPARE(fresh->modelError(), QString());
    QVERIFY(!fresh->composerBlockReason().isEmpty());
    QVERIFY(!fresh->sendOrQueue(QStringLiteral("anyone?")).isEmpty());  // refused, with why
    fresh->loadModel(smol_);  // and it loads after all
    QVERIFY(waitForLoadEnd(*fresh));
    QVERIFY(fresh->modelLoaded());
  }
};

// The controller needs a GUI application; offscreen, so the test runs without a display.
int main(int argc, char* argv[]) {
  qputenv("QT_QPA_PLATFORM", "offscreen");
  QGuiApplication app(argc, argv);
  ModelLoadProgressTest test;
  QTEST_SET_MAIN_SOURCE_PATH
  return QTest::qExec(&test, argc, argv);
}
#include "test_model_load_progress.moc"
