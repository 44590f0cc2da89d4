// Several conversations generating at once through the AppController, in-process, on the real
// default model and a fresh database: send in chat A, switch to chat B, send there;
// both stream, each Stop is its own, both answers end in the store with their stats. And
// Regenerate/Edit resend exactly the history of the answer they replace, which is what lets the
// engine's prefix cache serve the shared part.
// References: the pieces each answer received (in arrival order, from the controller's
// pieceReceived signal) against what the view shows and the store keeps; for Regenerate and
// Edit, the messages of the request they replace (captured from submitToWorker).
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QtTest>
#include <algorithm>

#include "common/store_open_wait.h"
#include "common/test_paths.h"
#include "controller/app_controller.h"

using namespace ember::app;
using ember::store::MessageStatus;

namespace {
constexpr auto kModel = "SmolLM2-135M-Instruct.Q4_1.gguf";

// Every streamed piece, in arrival order, for answers shown or not.
struct PieceLog {
  struct Piece {
    qint64 conversationId;
    qint64 messageId;
    QString text;
  };
  QList<Piece> pieces;
  QList<qint64> finished;  // answer ids in the order they were committed
  int count(qint64 message) const {
    return int(std::count_if(pieces.begin(), pieces.end(),
                             [&](const Piece& p) { return p.messageId == message; }));
  }
  QString text(qint64 message) const {
    QString all;
    for (const Piece& p : pieces)
      if (p.messageId == message) all += p.text;
    return all;
  }
  int first(qint64 message) const {
    for (int i = 0; i < pieces.size(); ++i)
      if (pieces[i].messageId == message) return i;
    return -1;
  }
  int last(qint64 message) const {
    for (int i = int(pieces.size()) - 1; i >= 0; --i)
      if (pieces[i].messageId == message) return i;
    return -1;
  }
};

bool sidebarMarks(AppController& c, qint64 conversationId) {
  ConversationListModel& list = *c.conversations();
  return list.data(list.index(list.rowOf(conversationId)), ConversationListModel::GeneratingRole)
      .toBool();
}
}  // namespace

class ConcurrentChatsTest : public QObject {
  Q_OBJECT

  QTemporaryDir dir_;
  std::unique_ptr<AppController> controller_;

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
    controller_->loadModel(model);
    QVERIFY(QTest::qWaitFor([&] { return !controller_->modelLoading(); }, 60000));
    QVERIFY(controller_->modelLoaded());
  }

  // Send in chat A, switch to chat B, send there: both stream at once; opening A
  // mid-stream shows its partial answer still filling; A's own Stop leaves B running; both
  // answers end in the store with their stats.
  void twoConversationsStreamAtOnce() {
    PieceLog log;
    QObject context;
    connect(controller_.get(), &AppController::pieceReceived, &context,
            [&](qint64 c, qint64 m, const QString& t) { log.pieces << PieceLog::Piece{c, m, t}; });
    connect(controller_.get(), &AppController::answerFinished, &context,
            [&](qint64 m) { log.finished << m; });
    MessageModel& view = *controller_->messages();

    // A: a long greedy story, unbounded, so that it is still running when B starts.
    controller_->newConversation();
    const qint64 a = controller_->currentConversationId();
    QVERIFY(controller_->setSetting("temperature", "0"));
    QVERIFY(controller_->setSetting("maxTokens", "-1"));
    QVERIFY(controller_->send(QStringLiteral("Write a long story about a dragon and a knight.")));
    const qint64 answerA = view.lastId();
    QVERIFY(QTest::qWaitFor([&] { return log.count(answerA) >= 1; }, 60000));

    // B, while A streams: the composer of B is free.
    controller_->newConversation();
    const qint64 b = controller_->currentConversationId();
    QVERIFY(b != a);
    QCOMPARE(view.rowCount(), 0);
    QVERIFY(!controller_->generating());  // the shown conversation, B
    QVERIFY(controller_->isGenerating(a));
    QVERIFY(controller_->setSetting("temperature", "0"));
    QVERIFY(controller_->setSetting("maxTokens", "200"));
    QVERIFY(controller_->send(QStringLiteral("Count from 1 to 100, separated by commas.")));
    const qint64 answerB = view.lastId();
    QVERIFY(answerB != answerA);
    QVERIFY(QTest::qWaitFor([&] { return log.count(answerB) >= 1; }, 60000));
    QVERIFY2(!log.finished.contains(answerA), "A ended before B's first piece: no overlap");
    // Interleaved: A receives pieces after B's first one.
    QVERIFY(QTest::qWaitFor([&] { return log.last(answerA) > log.first(answerB); }, 60000));
    QVERIFY(sidebarMarks(*controller_, a));
    QVERIFY(sidebarMarks(*controller_, b));
    QCOMPARE(controller_->messageRow(answerA), -1);  // B is shown: A's text stays out of view

    // Back to A mid-stream: the partial answer is there and keeps filling.
    controller_->openConversation(a);
    QVERIFY(controller_->generating());
    QTRY_VERIFY(!controller_->messagesLoading());  // the rows come from the store thread
    QCOMPARE(view.rowCount(), 2);
    QCOMPARE(view.row(1)->id, answerA);
    QCOMPARE(view.row(1)->status, QStringLiteral("streaming"));
    QCOMPARE(view.row(1)->text, log.text(answerA));
    const qsizetype shown = view.row(1)->text.size();
    QVERIFY(QTest::qWaitFor([&] { return view.row(1)->text.size() > shown; }, 60000));
    QCOMPARE(view.row(1)->text, log.text(answerA));

    // A's Stop stops A only.
    QVERIFY2(controller_->isGenerating(b), "B ended before A was stopped; nothing to compare");
    controller_->stop();
    QVERIFY(QTest::qWaitFor([&] { return log.finished.contains(answerA); }, 60000));
    const int aStoppedAt = int(log.pieces.size());
    QVERIFY(!sidebarMarks(*controller_, a));
    QCOMPARE(view.row(1)->status, QStringLiteral("stopped"));
    QVERIFY(QTest::qWaitFor([&] { return log.finished.contains(answerB); }, 120000));
    QVERIFY2(log.last(answerB) >= aStoppedAt, "B received nothing after A was stopped");
    QVERIFY(!sidebarMarks(*controller_, b));

    // Both in SQLite with what streamed and their stats.
    auto& store = controller_->store();
    const auto savedA = store.message(answerA);
    const auto savedB = store.message(answerB);
    QCOMPARE(savedA->status, MessageStatus::Stopped);
    QCOMPARE(savedA->content, log.text(answerA));
    QCOMPARE(savedB->status, MessageStatus::Complete);
    QCOMPARE(savedB->content, log.text(answerB));
    const auto statsA = store.stats(answerA);
    const auto statsB = store.stats(answerB);
    QVERIFY(statsA && statsB);
    QCOMPARE(statsA->finishReason, QStringLiteral("cancelled"));
    QVERIFY(statsB->finishReason != QLatin1String("cancelled"));
    QCOMPARE(qsizetype(statsB->tokenTimesMs.size()), qsizetype(log.count(answerB)));
    for (const auto& stats : {*statsA, *statsB}) {
      QVERIFY(stats.promptTokens > 0);
      QVERIFY(stats.cachedTokens >= 0 && stats.cachedTokens <= stats.promptTokens);
      QVERIFY(!stats.backend.isEmpty());
      QVERIFY(controller_->modelDetails().endsWith(stats.backend));  // "… · <backendName>"
    }
    // B's line, as reloaded from the store, names the reuse and the backend.
    controller_->openConversation(b);
    QTRY_VERIFY(!controller_->messagesLoading());  // the rows come from the store thread
    QCOMPARE(view.row(1)->id, answerB);
    QVERIFY2(view.row(1)->statsLine.contains(QStringLiteral("reused %1 of %2 prompt tokens")
                                                 .arg(statsB->cachedTokens)
                                                 .arg(statsB->promptTokens)),
             qPrintable(view.row(1)->statsLine));
    QVERIFY(view.row(1)->statsLine.endsWith(statsB->backend));
  }

  // Regenerate resends exactly the messages of the answer it replaces (so the prefix cache can
  // serve all of it); Edit resends the same earlier turns with only the edited text changed.
  void regenerateAndEditResendTheSameHistory() {
    QList<nlohmann::ordered_json> sent;
    QObject context;
    connect(controller_.get(), &AppController::submitToWorker, &context,
            [&](const WorkerRequest& r) { sent << r.messages; });
    QSignalSpy finished(controller_.get(), &AppController::answerFinished);
    controller_->newConversation();
    QVERIFY(controller_->setSetting("systemPrompt", "You are brief."));
    QVERIFY(controller_->setSetting("maxTokens", "8"));
    QVERIFY(controller_->send(QStringLiteral("Hello! 안녕하세요")));
    QVERIFY(waitForAnswer(finished, 1));
    QVERIFY(controller_->send(QStringLiteral("Name a fruit.")));
    QVERIFY(waitForAnswer(finished, 2));
    const qint64 secondUser = controller_->messages()->row(2)->id;
    controller_->regenerate();
    QVERIFY(waitForAnswer(finished, 3));
    controller_->editMessage(secondUser, QStringLiteral("Name a vegetable."));
    QVERIFY(waitForAnswer(finished, 4));
    QCOMPARE(sent.size(), 4);
    QCOMPARE(sent[1].size(), size_t(4));  // system, user, assistant, user
    QCOMPARE(QString::fromStdString(sent[2].dump()), QString::fromStdString(sent[1].dump()));
    nlohmann::ordered_json edited = sent[1];
    edited.back()["content"] = "Name a vegetable.";
    QCOMPARE(QString::fromStdString(sent[3].dump()), QString::fromStdString(edited.dump()));
  }
};

QTEST_GUILESS_MAIN(ConcurrentChatsTest)
#include "test_concurrent_chats.moc"
