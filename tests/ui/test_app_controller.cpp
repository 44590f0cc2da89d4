// The AppController's flows in-process, on the real default model and a fresh database:
// send, regenerate and edit (which must keep every version as a sibling), branch switching,
// stop, search, delete, a bad model file, the compute device and settings validation (two
// conversations at once: test_concurrent_chats.cpp).
// References: the ChatStore's contents (read back from the SQLite file) for what the view shows;
// RELIABILITY.md cases 15-17 and the SamplingParams documentation (ranges written by the issue,
// llama.cpp's conventions) for which settings are refused; the GGUF reader's message for a bad
// file; for the engine options, the values the settings were given.
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QtTest>

#include "common/store_open_wait.h"
#include "common/test_paths.h"
#include "controller/app_controller.h"

using namespace ember::app;
using ember::store::MessageStatus;

namespace {
constexpr auto kModel = "SmolLM2-135M-Instruct.Q4_1.gguf";

QString rowText(const MessageModel& m, int row) { return m.row(row) ? m.row(row)->text : QString(); }

}  // namespace

class AppControllerTest : public QObject {
  Q_OBJECT

  QTemporaryDir dir_;
  std::unique_ptr<AppController> controller_;

  bool waitForModel() {
    (void)QTest::qWaitFor([&] { return !controller_->modelLoading(); }, 60000);
    return controller_->modelLoaded();
  }
  static bool waitForAnswer(QSignalSpy& spy, int count) {
    return QTest::qWaitFor([&] { return spy.count() >= count; }, 120000);
  }

 private slots:
  void initTestCase() {
    EMBER_REQUIRE_MODEL(model, kModel);
    AppController::Options options;
    options.databasePath = dir_.filePath("ember.sqlite");
    options.modelFolders = {ember::test::modelsDir()};
    controller_ = std::make_unique<AppController>(options);
    QVERIFY(ember::test::waitForStoreOpen(*controller_));
    QVERIFY(!controller_->composerBlockReason().isEmpty());  // no model yet: composer disabled
    QVERIFY(!controller_->send("too early"));
    controller_->loadModel(model);
    QVERIFY(waitForModel());
    QVERIFY(controller_->composerBlockReason().isEmpty());
  }

  void settingsValidation_data() {
    QTest::addColumn<QString>("key");
    QTest::addColumn<QString>("value");
    QTest::addColumn<bool>("accepted");
    QTest::newRow("temperature 0 (greedy)") << "temperature" << "0" << true;
    QTest::newRow("temperature negative") << "temperature" << "-1" << false;
    QTest::newRow("temperature NaN") << "temperature" << "nan" << false;
    QTest::newRow("temperature inf") << "temperature" << "inf" << false;
    QTest::newRow("temperature 1e6") << "temperature" << "1e6" << false;
    QTest::newRow("top-p 0") << "topP" << "0" << true;
    QTest::newRow("top-p 1") << "topP" << "1" << true;
    QTest::newRow("top-p 1.5") << "topP" << "1.5" << false;
    QTest::newRow("top-k 0") << "topK" << "0" << true;
    QTest::newRow("top-k -1") << "topK" << "-1" << false;
    QTest::newRow("top-k > vocab") << "topK" << "1000000" << true;
    QTest::newRow("min-p 2") << "minP" << "2" << false;
    QTest::newRow("max tokens 0") << "maxTokens" << "0" << false;
    QTest::newRow("max tokens -1") << "maxTokens" << "-1" << true;
    QTest::newRow("max tokens 2^31") << "maxTokens" << "2147483648" << true;
    QTest::newRow("context > model's") << "contextLength" << "100000" << false;
    QTest::newRow("context 2048") << "contextLength" << "2048" << true;
    QTest::newRow("seed random") << "seed" << "-1" << true;
    QTest::newRow("seed 2^64-1") << "seed" << "18446744073709551615" << true;
    QTest::newRow("seed text") << "seed" << "abc" << false;
    QTest::newRow("threads -2") << "threads" << "-2" << false;
    QTest::newRow("answers at once 4") << "maxSequences" << "4" << true;
    QTest::newRow("answers at once 0") << "maxSequences" << "0" << false;
    QTest::newRow("answers at once 65") << "maxSequences" << "65" << false;
    QTest::newRow("device auto") << "backend" << "auto" << true;
    QTest::newRow("device cpu") << "backend" << "cpu" << true;
    QTest::newRow("device CUDA") << "backend" << "CUDA" << true;
    QTest::newRow("device gpu") << "backend" << "gpu" << false;
  }
  void settingsValidation() {
    QFETCH(QString, key);
    QFETCH(QString, value);
    QFETCH(bool, accepted);
    const QString error = controller_->settingError(key, value);
    QVERIFY2(error.isEmpty() == accepted, qPrintable(error));
  }

  void sendRegenerateEditAndBranches() {
    controller_->newConversation();
    QVERIFY(controller_->setSetting("temperature", "0.9"));
    QVERIFY(controller_->setSetting("maxTokens", "12"));
    QSignalSpy finished(controller_.get(), &AppController::answerFinished);
    QVERIFY(controller_->send(QStringLiteral("Name one color.")));
    QVERIFY(controller_->generating());
    QVERIFY(waitForAnswer(finished, 1));
    MessageModel& view = *controller_->messages();
    QCOMPARE(view.rowCount(), 2);
    const qint64 userId = view.row(0)->id;
    const qint64 firstAnswerId = view.row(1)->id;
    const QString firstAnswer = rowText(view, 1);
    auto& store = controller_->store();
    QCOMPARE(store.message(firstAnswerId)->content, firstAnswer);
    QCOMPARE(store.message(firstAnswerId)->status, MessageStatus::Complete);
    QVERIFY(store.stats(firstAnswerId).has_value());
    QVERIFY(!view.row(1)->statsLine.isEmpty());

    controller_->regenerate();
    QVERIFY(waitForAnswer(finished, 2));
    QCOMPARE(view.rowCount(), 2);
    QCOMPARE(view.row(1)->siblingCount, 2);
    QCOMPARE(view.row(1)->siblingIndex, 1);
    const qint64 secondAnswerId = view.row(1)->id;
    QVERIFY(secondAnswerId != firstAnswerId);
    controller_->switchBranch(view.row(1)->id, -1);
    QTRY_VERIFY(!controller_->messagesLoading());  // the rows come from the store thread
    QCOMPARE(view.row(1)->id, firstAnswerId);
    QCOMPARE(rowText(view, 1), firstAnswer);

    controller_->editMessage(userId, QStringLiteral("Name one animal."));
    QVERIFY(waitForAnswer(finished, 3));
    QCOMPARE(rowText(view, 0), QStringLiteral("Name one animal."));
    QCOMPARE(view.row(0)->siblingCount, 2);
    controller_->switchBranch(view.row(0)->id, -1);
    QTRY_VERIFY(!controller_->messagesLoading());  // the rows come from the store thread
    QCOMPARE(rowText(view, 0), QStringLiteral("Name one color."));
    // ChatStore::selectBranch shows the newest message below the chosen one: the regenerated answer.
    QCOMPARE(view.row(1)->id, secondAnswerId);
    QCOMPARE(view.row(1)->siblingCount, 2);
  }

  void stopKeepsPartialAnswer() {
    controller_->newConversation();
    QVERIFY(controller_->setSetting("maxTokens", "-1"));
    QSignalSpy finished(controller_.get(), &AppController::answerFinished);
    QVERIFY(controller_->send(QStringLiteral("Write a long story about a dragon and a knight.")));
    MessageModel& view = *controller_->messages();
    QTRY_VERIFY_WITH_TIMEOUT(rowText(view, 1).size() > 10, 60000);
    controller_->stop();
    QVERIFY(waitForAnswer(finished, 1));
    QCOMPARE(view.row(1)->status, QStringLiteral("stopped"));
    const auto saved = controller_->store().message(view.row(1)->id);
    QCOMPARE(saved->status, MessageStatus::Stopped);
    QCOMPARE(saved->content, rowText(view, 1));
    QVERIFY(!controller_->generating());
  }

  // The app's engine options: 4 answers at once and the automatic device by default; the
  // settings change them on the next load.
  void engineOptionsFollowSettings() {
    QList<ember::EngineOptions> loads;
    QObject context;
    connect(controller_.get(), &AppController::loadInWorker, &context,
            [&](const ember::EngineOptions& o) { loads << o; });
    controller_->newConversation();
    controller_->reloadModel();
    QVERIFY(waitForModel());
    QVERIFY(controller_->setSetting("maxSequences", "6"));
    QVERIFY(controller_->setSetting("backend", "CPU"));
    controller_->reloadModel();
    QVERIFY(waitForModel());
    QCOMPARE(loads.size(), 2);
    QCOMPARE(loads[0].maxSequences, 4);
    QCOMPARE(loads[0].backend, std::string("auto"));
    QCOMPARE(loads[1].maxSequences, 6);
    QCOMPARE(loads[1].backend, std::string("cpu"));
  }

  // Choosing CUDA: where it cannot be used, the load fails with the engine's message, the
  // composer says why, and choosing the CPU again brings the app back. Where it can (a GPU, or
  // an engine that does not yet tell devices apart) the model loads.
  void cudaChoiceFailsClearlyOrLoads() {
    controller_->newConversation();
    QVERIFY(controller_->setSetting("backend", "cuda"));
    controller_->reloadModel();
    if (!waitForModel()) {
      qInfo("cuda refused: %s", qPrintable(controller_->modelError()));
      QVERIFY(controller_->modelError().contains(QStringLiteral("cuda"), Qt::CaseInsensitive));
      QVERIFY(!controller_->composerBlockReason().isEmpty());
      QVERIFY(!controller_->send(QStringLiteral("hello")));
    } else {
      qInfo("cuda accepted: %s", qPrintable(controller_->modelDetails()));
    }
    QVERIFY(controller_->setSetting("backend", "cpu"));
    controller_->reloadModel();
    QVERIFY(waitForModel());
    QVERIFY(controller_->modelError().isEmpty());
    QVERIFY(controller_->composerBlockReason().isEmpty());
  }

  void searchJumpsToHit() {
    controller_->search(QStringLiteral("animal"));
    SearchResultModel& results = *controller_->searchResults();
    QTRY_VERIFY(!controller_->searching());  // the search runs on the store thread
    QVERIFY(results.rowCount() >= 1);
    const QModelIndex hit = results.index(0);
    const qint64 conversation = results.data(hit, SearchResultModel::ConversationIdRole).toLongLong();
    const qint64 message = results.data(hit, SearchResultModel::MessageIdRole).toLongLong();
    QVERIFY(results.data(hit, SearchResultModel::SnippetRole).toString().contains("<b>"));
    QSignalSpy scrolled(controller_.get(), &AppController::scrollToMessage);
    controller_->openSearchHit(conversation, message);
    QCOMPARE(controller_->currentConversationId(), conversation);
    QTRY_COMPARE(scrolled.count(), 1);  // once the hit's rows are shown
    QVERIFY(controller_->messageRow(message) >= 0);  // the hit's branch is the one shown
  }

  void renameAndDelete() {
    const int before = controller_->conversations()->rowCount();
    const qint64 id = controller_->currentConversationId();
    controller_->renameConversation(id, QStringLiteral("대화 renamed"));
    QCOMPARE(controller_->currentTitle(), QStringLiteral("대화 renamed"));
    controller_->deleteConversation(id);
    QCOMPARE(controller_->conversations()->rowCount(), before - 1);
    // In the trash until the undo time passes (test_undo_delete.cpp follows it to the end).
    QVERIFY(controller_->store().conversation(id)->deletedAt.isValid());
    QCOMPARE(controller_->undoDeleteTitle(), QStringLiteral("대화 renamed"));
  }

  void badModelKeepsAppUsable() {
    QTemporaryDir tmp;
    const QString bad = tmp.filePath("bad.gguf");
    QFile f(bad);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write("not a gguf file at all");
    f.close();
    controller_->loadModel(bad);
    QVERIFY(!waitForModel());
    QVERIFY(controller_->modelError().contains(QStringLiteral("bad.gguf")));
    QVERIFY(!controller_->composerBlockReason().isEmpty());
    QVERIFY(!controller_->send("hello"));
    EMBER_REQUIRE_MODEL(model, kModel);
    controller_->loadModel(model);
    QVERIFY(waitForModel());
    QVERIFY(controller_->modelError().isEmpty());
  }

  // RELIABILITY.md 10: an empty or whitespace-only message is not sent.
  void emptyMessageRefused() {
    controller_->newConversation();
    QVERIFY(!controller_->send(QString()));
    QVERIFY(!controller_->send(QStringLiteral(" \n\t ")));
    QCOMPARE(controller_->messages()->rowCount(), 0);
  }

  // RELIABILITY.md 14: a 1 MB paste is kept intact and the app carries on (the answer either
  // comes, with the oldest text dropped, or fails with a message; it never takes the app down).
  void hugePasteKeptIntact() {
    controller_->newConversation();
    QVERIFY(controller_->setSetting("maxTokens", "4"));
    QString huge;
    while (huge.size() < 1024 * 1024) huge += QStringLiteral("The quick brown fox jumps. ");
    QSignalSpy finished(controller_.get(), &AppController::answerFinished);
    QVERIFY(controller_->send(huge));
    QVERIFY(waitForAnswer(finished, 1));
    const MessageRow* answer = controller_->messages()->row(1);
    QVERIFY(answer->status == QLatin1String("complete") || answer->status == QLatin1String("error"));
    QVERIFY(answer->status != QLatin1String("error") || !answer->error.isEmpty());
    QCOMPARE(controller_->store().message(controller_->messages()->row(0)->id)->content, huge);
    QVERIFY(!controller_->generating());
  }

  // RELIABILITY.md 23: switching the model mid-answer ends that answer with a message, keeps
  // what arrived, and the new model is ready afterwards.
  void switchModelWhileStreaming() {
    EMBER_REQUIRE_MODEL(model, kModel);
    controller_->newConversation();
    QVERIFY(controller_->setSetting("maxTokens", "-1"));
    QSignalSpy finished(controller_.get(), &AppController::answerFinished);
    QVERIFY(controller_->send(QStringLiteral("Tell me a long story about the moon.")));
    QTRY_VERIFY_WITH_TIMEOUT(rowText(*controller_->messages(), 1).size() > 5, 60000);
    controller_->loadModel(model);
    QVERIFY(waitForAnswer(finished, 1));
    QVERIFY(waitForModel());
    const MessageRow* answer = controller_->messages()->row(1);
    QCOMPARE(answer->status, QStringLiteral("error"));
    QVERIFY(!answer->error.isEmpty());
    QCOMPARE(controller_->store().message(answer->id)->content, answer->text);
    QVERIFY(!controller_->generating());
  }

  void quitWhileStreamingSavesPartialAnswer() {
    controller_->newConversation();
    QVERIFY(controller_->send(QStringLiteral("Tell me a long story.")));
    const qint64 answerId = controller_->messages()->lastId();
    QTRY_VERIFY_WITH_TIMEOUT(rowText(*controller_->messages(), 1).size() > 5, 60000);
    controller_.reset();  // as when the window closes mid-answer
    ember::store::ChatStore store;
    store.open(dir_.filePath("ember.sqlite"));
    const auto saved = store.message(answerId);
    QVERIFY(saved.has_value());
    QCOMPARE(saved->status, MessageStatus::Stopped);
    QVERIFY(!saved->content.isEmpty());
  }

  // After a restart, answers come back with their stats line and their status.
  void restartShowsSavedAnswersAndStats() {
    AppController::Options options;
    options.databasePath = dir_.filePath("ember.sqlite");
    AppController again(options);
    QVERIFY(ember::test::waitForStoreOpen(again));
    auto& store = again.store();
    int answersWithStats = 0;
    for (const auto& conversation : store.listConversations()) {
      again.openConversation(conversation.id);
      QTRY_VERIFY(!again.messagesLoading());  // the rows come from the store thread
      const MessageModel& view = *again.messages();
      for (int row = 0; row < view.rowCount(); ++row) {
        const MessageRow* m = view.row(row);
        const auto stored = store.message(m->id);
        QCOMPARE(m->text, stored->content);
        QCOMPARE(m->status, ember::store::statusName(stored->status));
        if (store.stats(m->id)) {
          QVERIFY(!m->statsLine.isEmpty());
          QVERIFY(!again.statsDetails(m->id).value("tokenTimes").toList().isEmpty());
          ++answersWithStats;
        }
      }
    }
    QVERIFY(answersWithStats >= 1);
  }
};

QTEST_GUILESS_MAIN(AppControllerTest)
#include "test_app_controller.moc"
