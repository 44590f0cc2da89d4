// ChatStore when things go wrong: an answer cut short (checkpointed, never finished), damaged
// database files, a database locked by another process, a full disk and an unopenable path.
// References: SQLite's integrity_check over a separate connection, the damaged files' original
// bytes (the backup must hold them unchanged), and the rules (nothing saved is lost; the
// user is told).
#include <QRandomGenerator>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QtTest>

#include "store/chat_store.h"
#include "store_test_support.h"

using namespace ember::store;
using ember::store::test::RawDb;
using ember::store::test::integrityCheck;

namespace {

// A valid database holding enough messages to span many pages.
void writeHistory(const QString& path, int messages) {
  ChatStore store;
  store.open(path);
  const Id conversation = store.createConversation("history");
  Id parent = 0;
  for (int i = 0; i < messages; ++i)
    parent = store.addMessage(conversation, parent, Role::User,
                              QString("message %1 ").arg(i) + QString(1000, QChar(u'가' + i)));
}

template <class Action>
StoreError expectError(Action action) {
  try {
    action();
  } catch (const StoreError& error) {
    return error;
  }
  return StoreError(StoreError::Kind::Internal, "<no error was thrown>");
}

}  // namespace

class StoreRecoveryTest : public QObject {
  Q_OBJECT

 private slots:
  void init() {
    dir_.reset(new QTemporaryDir);
    QVERIFY(dir_->isValid());
    path_ = dir_->filePath("chats.db");
  }

  void checkpointedAnswerSurvivesAsInterrupted() {
    Id answer = 0;
    {
      ChatStore store;
      store.open(path_);
      const Id conversation = store.createConversation("crash");
      const Id question = store.addMessage(conversation, 0, Role::User, "질문입니다");
      answer = store.beginAssistantMessage(question, "m");
      store.checkpoint(answer, "첫 부분");
      store.checkpoint(answer, "첫 부분, 둘째 부분");
      // Dropped without finishing: what a crash leaves (the kill itself is test_store_crash).
    }
    ChatStore store;
    const OpenReport report = store.open(path_);
    QCOMPARE(report.interruptedMessages, 1);
    const std::optional<Message> m = store.message(answer);
    QCOMPARE(m->status, MessageStatus::Interrupted);
    QCOMPARE(m->content, QStringLiteral("첫 부분, 둘째 부분"));
    QCOMPARE(m->finishReason, QStringLiteral("interrupted"));
    QCOMPARE(store.search("둘째").value(0).messageId, answer);  // indexed once recovered
    store.close();
    QCOMPARE(ChatStore().open(path_).interruptedMessages, 0);  // recovered once only
  }

  void corruptFileIsSetAside_data() {
    QTest::addColumn<QString>("damage");
    QTest::newRow("garbage bytes") << "garbage";
    QTest::newRow("text file") << "text";
    QTest::newRow("header overwritten") << "header";
    QTest::newRow("truncated database") << "truncate";
    QTest::newRow("page overwritten") << "page";
  }

  void corruptFileIsSetAside() {
    QFETCH(QString, damage);
    QByteArray bytes;
    if (damage == "garbage") {
      QRandomGenerator random(42);  // seeded: the same bytes every run
      bytes.resize(8192);
      random.fillRange(reinterpret_cast<quint32*>(bytes.data()), bytes.size() / 4);
    } else if (damage == "text") {
      bytes = QByteArray("this is not a database\n").repeated(50);
    } else {
      writeHistory(path_, 120);
      bytes = ember::store::test::readAll(path_);
      QVERIFY(bytes.size() > 40 * 4096);
      if (damage == "header") bytes.replace(0, 16, QByteArray(16, '\0'));
      if (damage == "truncate") bytes.truncate(bytes.size() * 2 / 5);
      if (damage == "page") bytes.replace(9 * 4096, 4096, QByteArray(4096, '\xA5'));
    }
    QVERIFY(ember::store::test::writeAll(path_, bytes));

    ChatStore store;
    const OpenReport report = store.open(path_);
    QVERIFY(report.recoveredFromCorruption);
    QVERIFY(report.createdNew);
    QVERIFY(!report.corruptionDetail.isEmpty());
    static const QRegularExpression backupName(QStringLiteral("\\.corrupt-\\d{8}-\\d{6}$"));
    QVERIFY2(backupName.match(report.corruptBackupPath).hasMatch(),
             qPrintable(report.corruptBackupPath));
    QVERIFY(report.corruptBackupPath.startsWith(path_));
    QCOMPARE(ember::store::test::readAll(report.corruptBackupPath), bytes);  // kept as it was

    QCOMPARE(store.listConversations().size(), 0);
    const Id id = store.createConversation("a fresh start");
    store.addMessage(id, 0, Role::User, "works");
    store.close();
    QCOMPARE(integrityCheck(path_), QStringLiteral("ok"));
  }

  void busyWhileAnotherProcessWrites() {
    ChatStore store;
    store.open(path_, {.busyTimeoutMs = 100});
    const Id conversation = store.createConversation("busy");
    const Id first = store.addMessage(conversation, 0, Role::User, "saved before the lock");

    RawDb other(path_);
    QVERIFY(other.exec("BEGIN EXCLUSIVE"));
    const StoreError error =
        expectError([&] { store.addMessage(conversation, first, Role::User, "blocked"); });
    QCOMPARE(error.kind(), StoreError::Kind::Busy);
    QVERIFY2(error.userMessage().contains("locked by another program"),
             qPrintable(error.userMessage()));
    QVERIFY(error.userMessage().contains(path_));
    QVERIFY(other.exec("ROLLBACK"));

    // The failed write left nothing behind, and the store works again.
    QCOMPARE(store.children(conversation, first).size(), 0);
    const Id retried = store.addMessage(conversation, first, Role::User, "after the lock");
    QCOMPARE(store.activeBranch(conversation).size(), 2);
    QCOMPARE(store.message(retried)->content, QStringLiteral("after the lock"));
  }

  void busyAtOpenIsNotCorruption() {
    writeHistory(path_, 3);
    RawDb other(path_);
    QVERIFY(other.exec("PRAGMA locking_mode = EXCLUSIVE; BEGIN EXCLUSIVE; COMMIT;"));
    ChatStore store;
    const StoreError error = expectError([&] { store.open(path_, {.busyTimeoutMs = 100}); });
    QCOMPARE(error.kind(), StoreError::Kind::Busy);
    QVERIFY(!store.isOpen());
    QCOMPARE(QDir(dir_->path()).entryList({"*.corrupt-*"}), QStringList());
  }

  void diskFullLosesNothing() {
    ChatStore store;
    store.open(path_, {.maxDatabaseBytes = 256 * 1024});
    const Id conversation = store.createConversation("full");
    const Id question = store.addMessage(conversation, 0, Role::User, "short question");
    const Id answer = store.beginAssistantMessage(question, "m");
    store.checkpoint(answer, "partial answer");
    const QString huge(600 * 1024, QChar(u'x'));

    StoreError error = expectError([&] { store.addMessage(conversation, answer, Role::User, huge); });
    QCOMPARE(error.kind(), StoreError::Kind::DiskFull);
    QVERIFY2(error.userMessage().contains("is full"), qPrintable(error.userMessage()));
    error = expectError([&] {
      store.finishAssistantMessage(answer, huge, MessageStatus::Complete);
    });
    QCOMPARE(error.kind(), StoreError::Kind::DiskFull);

    // Everything from before is intact and the store still takes small writes.
    QCOMPARE(store.message(question)->content, QStringLiteral("short question"));
    QCOMPARE(store.message(answer)->content, QStringLiteral("partial answer"));
    QCOMPARE(store.message(answer)->status, MessageStatus::Streaming);
    QCOMPARE(store.children(conversation, answer).size(), 0);
    store.finishAssistantMessage(answer, "a short answer", MessageStatus::Complete);
    store.close();
    QCOMPARE(integrityCheck(path_), QStringLiteral("ok"));
  }

  void unopenablePathIsAnIoError() {
    ChatStore store;
    const StoreError error = expectError([&] { store.open(dir_->path()); });  // a directory
    QCOMPARE(error.kind(), StoreError::Kind::Io);
    QVERIFY2(error.userMessage().contains(dir_->path()), qPrintable(error.userMessage()));
    QVERIFY(QFileInfo(dir_->path()).isDir());  // not "moved aside"
  }

 private:
  std::unique_ptr<QTemporaryDir> dir_;
  QString path_;
};

QTEST_GUILESS_MAIN(StoreRecoveryTest)
#include "test_store_recovery.moc"
