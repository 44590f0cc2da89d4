// ThreadedChatStore: the ChatStore on a thread of its own. Queued writes return at once and land
// in order; every later call sees them; a checkpoint still queued is superseded by the next one
// of the same answer; a queued write's failure reaches the error handler on the store thread; a
// waited-for call's StoreError is rethrown in the caller; what is queued at destruction is saved
// and the writer lock is given back. References: the rows read back through a plain ChatStore
// and over a separate SQLite connection, and thread ids from std::this_thread.
#include <QScopeGuard>
#include <QTemporaryDir>
#include <QtTest>
#include <atomic>
#include <future>
#include <thread>
#include <tuple>
#include <vector>

#include "store/threaded_chat_store.h"
#include "store_test_support.h"

using namespace ember::store;
using ember::store::test::RawDb;

class StoreThreadedTest : public QObject {
  Q_OBJECT
  QTemporaryDir dir_{QDir::currentPath() + "/store-threaded-XXXXXX"};  // in the build folder
  int counter_ = 0;
  QString nextPath() { return dir_.filePath(QStringLiteral("threaded-%1.db").arg(++counter_)); }

  // A streaming answer under a user message, made through the waited-for calls.
  static Id startAnswer(ThreadedChatStore& store) {
    const Id conversation = store.createConversation(QStringLiteral("threaded"));
    const Id user = store.addMessage(conversation, 0, Role::User, QStringLiteral("question"));
    return store.beginAssistantMessage(user, QStringLiteral("model.gguf"));
  }

 private slots:
  void callsRunOnTheStoreThread() {
    ThreadedChatStore store;
    store.open(nextPath());
    const std::thread::id storeThread =
        store.call([](ChatStore&) { return std::this_thread::get_id(); });
    QVERIFY(storeThread != std::this_thread::get_id());
  }

  void laterCallsSeeQueuedWrites() {
    ThreadedChatStore store;
    store.open(nextPath());
    const Id answer = startAnswer(store);
    store.checkpoint(answer, QStringLiteral("Hel"));
    store.finishAssistantMessage(answer, QStringLiteral("Hello."), MessageStatus::Complete);
    const auto saved = store.message(answer);  // waits for both queued writes
    QVERIFY(saved.has_value());
    QCOMPARE(saved->content, QStringLiteral("Hello."));
    QCOMPARE(saved->status, MessageStatus::Complete);
    QCOMPARE(store.pendingWrites(), 0);
  }

  // While the store thread is busy, queued writes return at once; of three checkpoints of one
  // answer still waiting, only the last runs.
  void queuedWritesDoNotWaitAndCheckpointsCoalesce() {
    const QString path = nextPath();
    ThreadedChatStore store;
    store.open(path);
    const Id answer = startAnswer(store);
    std::promise<void> release;
    std::shared_future<void> released = release.get_future().share();
    store.post([released](ChatStore&) { released.wait(); });  // holds the store thread
    bool letGo = false;
    const auto letGoOnFailure = qScopeGuard([&] {
      if (!letGo) release.set_value();  // a failed check below must not leave it held
    });
    QElapsedTimer timer;
    timer.start();
    for (const char* text : {"O", "On", "Once"}) store.checkpoint(answer, QString::fromLatin1(text));
    QVERIFY2(timer.elapsed() < 1000, "a queued write waited for the busy store thread");
    QCOMPARE(store.pendingWrites(), 2);  // the holder and one checkpoint
    release.set_value();
    letGo = true;
    store.flush();
    QCOMPARE(store.pendingWrites(), 0);
    RawDb raw(path);
    QCOMPARE(raw.value("SELECT content FROM messages WHERE id = ?1", {QString::number(answer)}),
             QStringLiteral("Once"));
    QCOMPARE(raw.value("SELECT status FROM messages WHERE id = ?1", {QString::number(answer)}),
             QStringLiteral("streaming"));
  }

  // A checkpoint of an answer already finished is refused (ChatStore: InvalidInput); queued, the
  // refusal reaches the handler, on the store thread, with the store's message.
  void queuedFailureReachesTheHandler() {
    ThreadedChatStore store;
    std::atomic<int> failures{0};
    QString message;
    std::thread::id handlerThread;
    store.setErrorHandler([&](const QString& m) {
      message = m;
      handlerThread = std::this_thread::get_id();
      ++failures;
    });
    store.open(nextPath());
    const Id answer = startAnswer(store);
    store.finishAssistantMessage(answer, QStringLiteral("done"), MessageStatus::Complete);
    store.checkpoint(answer, QStringLiteral("late"));
    store.flush();
    QCOMPARE(failures.load(), 1);
    QVERIFY(!message.isEmpty());
    QVERIFY(handlerThread != std::this_thread::get_id());
    QCOMPARE(store.message(answer)->content, QStringLiteral("done"));  // the refused one changed nothing
  }

  void waitedForErrorsAreRethrown() {
    ThreadedChatStore store;
    store.open(nextPath());
    const Id conversation = store.createConversation(QStringLiteral("errors"));
    try {
      store.addMessage(conversation, 0, Role::User, QStringLiteral("   "));
      QFAIL("a whitespace-only message was accepted");
    } catch (const StoreError& e) {
      QCOMPARE(e.kind(), StoreError::Kind::InvalidInput);
    }
    QVERIFY(store.activeBranch(conversation).isEmpty());
  }

  // Destruction runs what is still queued, closes the database and drops the writer lock: a
  // plain ChatStore opened next is the writer and reads the answer whole.
  void destructionSavesWhatIsQueued() {
    const QString path = nextPath();
    Id answer = 0;
    {
      ThreadedChatStore store;
      store.open(path);
      answer = startAnswer(store);
      store.post([](ChatStore&) { std::this_thread::sleep_for(std::chrono::milliseconds(200)); });
      store.finishAssistantMessage(answer, QStringLiteral("saved at quit"), MessageStatus::Stopped);
    }
    ChatStore again;
    const OpenReport report = again.open(path);
    QVERIFY(!report.readOnly);
    QCOMPARE(report.interruptedMessages, 0);
    QCOMPARE(again.message(answer)->content, QStringLiteral("saved at quit"));
    QCOMPARE(again.message(answer)->status, MessageStatus::Stopped);
  }

  // openQueued returns before the open has run (it waits behind a task holding the store thread
  // here), then runs its callback on the store thread with the id counters already past every
  // row of the file: the first reserved ids follow the largest ones the file holds. The progress
  // callback told the check as step 1 of 1 (a current file: no copy, no migration). A failing
  // open hands its message to the callback and leaves the store closed.
  void openQueuedSetsTheIdCountersFirst() {
    const QString path = nextPath();
    Id largestConversation = 0, largestMessage = 0;
    {
      ChatStore plain;
      plain.open(path);
      for (int i = 0; i < 3; ++i) {
        largestConversation = plain.createConversation(QStringLiteral("chat %1").arg(i));
        largestMessage = plain.addMessage(largestConversation, 0, Role::User, QStringLiteral("hi"));
      }
    }
    ThreadedChatStore store;
    std::promise<void> release;
    std::shared_future<void> released = release.get_future().share();
    store.read([released](ChatStore&) { released.wait(); });  // holds the store thread
    std::promise<std::tuple<QString, Id, Id, std::thread::id>> opened;
    std::vector<std::tuple<int, int, int>> steps;
    ChatStore::Options options;
    options.progress = [&](OpenStage stage, int step, int count) {
      steps.emplace_back(static_cast<int>(stage), step, count);
    };
    store.openQueued(path, options,
                     [&](ChatStore&, const OpenReport&, const QString& error) {
                       opened.set_value({error, store.reserveConversationId(),
                                         store.reserveMessageId(), std::this_thread::get_id()});
                     });
    auto result = opened.get_future();
    QVERIFY(result.wait_for(std::chrono::milliseconds(100)) == std::future_status::timeout);
    release.set_value();
    const auto [error, conversationId, messageId, thread] = result.get();
    QCOMPARE(error, QString());
    QCOMPARE(conversationId, largestConversation + 1);
    QCOMPARE(messageId, largestMessage + 1);
    QVERIFY(thread != std::this_thread::get_id());
    QCOMPARE(steps.size(), size_t(1));
    QCOMPARE(steps[0], std::make_tuple(static_cast<int>(OpenStage::Checking), 1, 1));

    ThreadedChatStore failing;
    const QString folder = dir_.filePath("a-folder.db");
    QVERIFY(QDir().mkpath(folder));  // a folder where the file should be: cannot be opened
    std::promise<QString> failed;
    failing.openQueued(folder, {}, [&](ChatStore&, const OpenReport&, const QString& message) {
      failed.set_value(message);
    });
    QVERIFY(!failed.get_future().get().isEmpty());
    QVERIFY(!failing.isOpen());
  }
};

QTEST_GUILESS_MAIN(StoreThreadedTest)
#include "test_store_threaded.moc"
