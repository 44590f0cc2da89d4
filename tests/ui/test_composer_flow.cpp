// The composer's flow in the AppController, on the real default model and a fresh database:
// a message typed while the model loads, or while an answer streams, is queued and sent when it
// can be (never dropped), a second one is refused with a reason; the answer bubble's live line
// goes through reading the prompt, then the live speed, and is cleared at the end; the window
// geometry survives a restart. References: the ChatStore's contents (the messages in the order a
// person sent them), the stage wording LiveStatus documents, and the values saved.
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QtTest>

#include "common/store_open_wait.h"
#include "common/test_paths.h"
#include "controller/app_controller.h"

using namespace ember::app;

namespace {
constexpr auto kModel = "SmolLM2-135M-Instruct.Q4_1.gguf";
}

class ComposerFlowTest : public QObject {
  Q_OBJECT
  QTemporaryDir dir_;
  QString model_;
  std::unique_ptr<AppController> controller_;

  AppController::Options options() const {
    AppController::Options o;
    o.databasePath = dir_.filePath("ember.sqlite");
    o.modelFolders = {ember::test::modelsDir()};
    return o;
  }
  QStringList activeBranchTexts() {
    QStringList out;
    for (const auto& m : controller_->store().activeBranch(controller_->currentConversationId()))
      out << m.content;
    return out;
  }

 private slots:
  void initTestCase() {
    EMBER_REQUIRE_MODEL(model, kModel);
    model_ = model;
    controller_ = std::make_unique<AppController>(options());
    QVERIFY(ember::test::waitForStoreOpen(*controller_));
    QVERIFY(controller_->setSetting("maxTokens", "8"));
    // As every chat's default: the chats made below answer in at most 8 tokens too (with only
    // the first chat's own setting they had no limit and now and then ran for minutes).
    controller_->saveSettingsAsDefaults();
  }

  void typedWhileLoadingIsSentOnceLoaded() {
    QVERIFY(!controller_->modelLoaded());
    // Not loading and no model: refused, with the reason.
    QVERIFY(!controller_->sendOrQueue(QStringLiteral("nothing loaded")).isEmpty());
    QSignalSpy finished(controller_.get(), &AppController::answerFinished);
    controller_->loadModel(model_);
    QVERIFY(controller_->modelLoading());
    QCOMPARE(controller_->sendOrQueue(QStringLiteral("Say hello.")), QString());
    QCOMPARE(controller_->queuedMessage(), QStringLiteral("Say hello."));
    QVERIFY(QTest::qWaitFor([&] { return finished.count() >= 1; }, 120000));
    QCOMPARE(controller_->queuedMessage(), QString());
    const QStringList texts = activeBranchTexts();
    QCOMPARE(texts.size(), 2);
    QCOMPARE(texts.first(), QStringLiteral("Say hello."));
  }

  // The meter's count for history + draft is the prompt the engine then runs for that message
  // (the answer's stats, saved in the store, are the reference).
  void contextMeterCountsWhatTheEngineRuns() {
    controller_->newConversation();
    auto& store = controller_->store();
    for (const QString& question : {QStringLiteral("What is two plus two?"),
                                    QStringLiteral("그리고 셋 더하기 셋은?")}) {
      controller_->setDraft(question);
      QVERIFY(QTest::qWaitFor([&] {
        const QVariantMap u = controller_->contextUsage();
        return u.value("known").toBool() && u.value("draft").toString() == question;
      }, 30000));
      const QVariantMap usage = controller_->contextUsage();
      QCOMPARE(usage.value("droppedTurns").toInt(), 0);
      QVERIFY(usage.value("fits").toBool());
      QSignalSpy finished(controller_.get(), &AppController::answerFinished);
      QVERIFY(controller_->send(question));
      controller_->setDraft({});
      QVERIFY(QTest::qWaitFor([&] { return finished.count() >= 1; }, 120000));
      QCOMPARE(controller_->settings().value("maxTokens").toInt(), 8);  // bounded, see above
      const auto branch = store.activeBranch(controller_->currentConversationId());
      const auto stats = store.stats(branch.last().id);
      QVERIFY(stats.has_value());
      QCOMPARE(usage.value("tokens").toLongLong(), stats->promptTokens);
      QCOMPARE(usage.value("contextLength").toInt() > 0, true);
    }
  }

  void enterWhileStreamingQueuesOneMessage() {
    controller_->newConversation();
    QVERIFY(controller_->setSetting("maxTokens", "24"));
    MessageModel& view = *controller_->messages();
    QStringList liveLines;
    const auto watch = connect(&view, &MessageModel::dataChanged, this, [&](const QModelIndex& at) {
      const QString live = view.row(at.row()) ? view.row(at.row())->liveText : QString();
      if (!live.isEmpty() && (liveLines.isEmpty() || liveLines.last() != live)) liveLines << live;
    });
    QSignalSpy finished(controller_.get(), &AppController::answerFinished);
    QVERIFY(controller_->send(QStringLiteral("Name a fruit.")));
    QVERIFY(controller_->generating());
    QCOMPARE(controller_->sendOrQueue(QStringLiteral("And a vegetable?")), QString());
    const QString refused = controller_->sendOrQueue(QStringLiteral("And a tree?"));
    QVERIFY2(refused.contains(QStringLiteral("already waiting")), qPrintable(refused));
    QVERIFY(QTest::qWaitFor([&] { return finished.count() >= 2; }, 120000));
    disconnect(watch);  // it captures this function's locals
    const QStringList texts = activeBranchTexts();
    QCOMPARE(texts.size(), 4);
    QCOMPARE(texts.at(0), QStringLiteral("Name a fruit."));
    QCOMPARE(texts.at(2), QStringLiteral("And a vegetable?"));
    // The live line went through the prompt read, then the speed, and is gone at the end.
    const auto has = [&](const QString& prefix) {
      return std::any_of(liveLines.cbegin(), liveLines.cend(),
                         [&](const QString& l) { return l.startsWith(prefix); });
    };
    QVERIFY2(has(QStringLiteral("Reading prompt")), qPrintable(liveLines.join(" | ")));
    QVERIFY2(has(QStringLiteral("Writing")), qPrintable(liveLines.join(" | ")));
    QCOMPARE(view.row(view.rowCount() - 1)->liveText, QString());
  }

  void cancelQueuedDropsIt() {
    QVERIFY(controller_->setSetting("maxTokens", "8"));
    QSignalSpy finished(controller_.get(), &AppController::answerFinished);
    QVERIFY(controller_->send(QStringLiteral("Count to three.")));
    QCOMPARE(controller_->sendOrQueue(QStringLiteral("never sent")), QString());
    controller_->cancelQueued();
    QCOMPARE(controller_->queuedMessage(), QString());
    QVERIFY(QTest::qWaitFor([&] { return finished.count() >= 1; }, 120000));
    QTest::qWait(200);
    QVERIFY(!controller_->generating());
    QVERIFY(!activeBranchTexts().contains(QStringLiteral("never sent")));
  }

  void windowGeometrySurvivesRestart() {
    QVERIFY(controller_->savedWindowGeometry().isEmpty());
    controller_->saveWindowGeometry(10, 20, 900, 600, false);
    controller_.reset();
    controller_ = std::make_unique<AppController>(options());
    QVERIFY(ember::test::waitForStoreOpen(*controller_));
    const QVariantList g = controller_->savedWindowGeometry();
    QCOMPARE(g, (QVariantList{10, 20, 900, 600}));
    QVERIFY(!controller_->savedWindowMaximized());
  }
};

QTEST_GUILESS_MAIN(ComposerFlowTest)
#include "test_composer_flow.moc"
