// One writer per chat database: while one process has the store open, a second process (and a
// second ChatStore in the same process) opens it read-only: it reads everything, never marks
// the writer's live answer as interrupted, every write fails at once with a message naming the
// writer, and an import from outside is refused. When the writer is killed, the next opener is
// the writer again and recovers the cut answer.
// The writer is this test's own executable started again with --hold (a real second process).
// References: the database read back over a raw SQLite connection; the child's process id; the
// rule that a database in use by another process is opened read-only and the user is told.
#include <QElapsedTimer>
#include <QProcess>
#include <QTemporaryDir>
#include <QTextStream>
#include <QtTest>

#include <csignal>
#include <cstdio>
#include <iostream>
#include <string>

#include "store/chat_store.h"
#include "store/export/chat_export.h"
#include "store_test_support.h"

using namespace ember::store;
using ember::store::test::RawDb;

namespace {

// The child: opens the store as its writer, starts an answer that stays streaming, and then
// obeys lines on stdin ("write <text>": adds a message and prints its id; "quit").
int holdStore(const QString& path) {
  ChatStore store;
  const OpenReport report = store.open(path);
  if (report.readOnly) {
    std::printf("error: the holder opened read-only\n");
    return 2;
  }
  const Id conversation = store.createConversation(QStringLiteral("held"));
  const Id question = store.addMessage(conversation, 0, Role::User, QStringLiteral("질문"));
  const Id answer = store.beginAssistantMessage(question, "m");
  store.checkpoint(answer, QStringLiteral("streaming still"));
  std::printf("ready %lld %lld %lld\n", static_cast<long long>(conversation),
              static_cast<long long>(question), static_cast<long long>(answer));
  std::fflush(stdout);
  std::string line;
  while (std::getline(std::cin, line)) {
    if (line == "quit") return 0;
    if (line.rfind("write ", 0) == 0) {
      const Id id = store.addMessage(conversation, question, Role::User,
                                     QString::fromStdString(line.substr(6)));
      std::printf("wrote %lld\n", static_cast<long long>(id));
      std::fflush(stdout);
    }
  }
  return 0;
}

}  // namespace

class StoreTwoProcessesTest : public QObject {
  Q_OBJECT
  QTemporaryDir dir_;
  QString path_;
  QProcess writer_;
  Id conversation_ = 0, question_ = 0, answer_ = 0;

  QString readLine() {
    if (!writer_.canReadLine() && !writer_.waitForReadyRead(30000)) return {};
    return QString::fromUtf8(writer_.readLine()).trimmed();
  }

 private slots:
  void initTestCase() {
    QVERIFY(dir_.isValid());
    path_ = dir_.filePath("chats.db");
    writer_.setProcessChannelMode(QProcess::ForwardedErrorChannel);
    writer_.start(QCoreApplication::applicationFilePath(), {"--hold", path_});
    QVERIFY(writer_.waitForStarted());
    const QStringList ready = readLine().split(' ');
    QCOMPARE(ready.value(0), QStringLiteral("ready"));
    conversation_ = ready.value(1).toLongLong();
    question_ = ready.value(2).toLongLong();
    answer_ = ready.value(3).toLongLong();
  }

  void secondProcessReadsButNeverWrites() {
    ChatStore reader;
    const OpenReport report = reader.open(path_);
    QVERIFY(report.readOnly);
    QCOMPARE(report.writerPid, static_cast<long>(writer_.processId()));
    QCOMPARE(report.interruptedMessages, 0);
    // It reads what the writer saved, including the answer being streamed.
    QCOMPARE(reader.listConversations().size(), 1);
    QCOMPARE(reader.message(answer_)->content, QStringLiteral("streaming still"));
    // The writer's live answer was not touched: the bug two windows had.
    RawDb raw(path_);
    QCOMPARE(raw.value("SELECT status FROM messages WHERE id = ?1", {QString::number(answer_)}),
             QStringLiteral("streaming"));
    // Every kind of write fails at once (no busy wait) and says who the writer is.
    const QString pid = QString::number(writer_.processId());
    const std::function<void()> writes[] = {
        [&] { reader.addMessage(conversation_, question_, Role::User, QStringLiteral("x")); },
        [&] { reader.renameConversation(conversation_, QStringLiteral("renamed")); },
        [&] { reader.checkpoint(answer_, QStringLiteral("overwritten")); },
        [&] { reader.setReasoning(answer_, QStringLiteral("r"), 1); },
        [&] { reader.setAppSetting(QStringLiteral("k"), QStringLiteral("v")); },
        [&] { reader.createConversation(QStringLiteral("new")); },
    };
    for (const auto& write : writes) {
      QElapsedTimer timer;
      timer.start();
      try {
        write();
        QFAIL("a write on the read-only store succeeded");
      } catch (const StoreError& error) {
        QCOMPARE(error.kind(), StoreError::Kind::ReadOnly);
        QVERIFY2(error.userMessage().contains(pid), qPrintable(error.userMessage()));
        QVERIFY2(error.userMessage().contains(path_), qPrintable(error.userMessage()));
      }
      QVERIFY2(timer.elapsed() < 1000, "a refused write waited for a lock");
    }
    QCOMPARE(raw.value("SELECT content FROM messages WHERE id = ?1", {QString::number(answer_)}),
             QStringLiteral("streaming still"));
    QCOMPARE(raw.value("SELECT title FROM conversations"), QStringLiteral("held"));
    // The writer goes on writing, and the reader sees it.
    writer_.write("write 새 메시지\n");
    const QStringList wrote = readLine().split(' ');
    QCOMPARE(wrote.value(0), QStringLiteral("wrote"));
    QCOMPARE(reader.message(wrote.value(1).toLongLong())->content, QStringLiteral("새 메시지"));
  }

  void importFromOutsideIsRefused() {
    namespace ce = ember::chatexport;
    const ce::Json document = ce::exportJson(path_.toStdString());  // reading is allowed
    RawDb raw(path_);
    const QString before = raw.value("SELECT count(*) FROM messages");
    try {
      ce::importJson(path_.toStdString(), document);
      QFAIL("an import into a database held by another process went through");
    } catch (const ce::ExportError& error) {
      const QString message = QString::fromUtf8(error.what());
      QVERIFY2(message.contains("in use by another Ember process"), qPrintable(message));
      QVERIFY2(message.contains(QString::number(writer_.processId())), qPrintable(message));
    }
    QCOMPARE(raw.value("SELECT count(*) FROM messages"), before);
  }

  void secondStoreInTheSameProcessIsReadOnlyToo() {
    const QString other = dir_.filePath("same-process.db");
    ChatStore first;
    QVERIFY(!first.open(other).readOnly);
    ChatStore second;
    const OpenReport report = second.open(other);
    QVERIFY(report.readOnly);
    QCOMPARE(report.writerPid, static_cast<long>(QCoreApplication::applicationPid()));
    first.close();
    // Closed: the next opener is the writer.
    ChatStore third;
    QVERIFY(!third.open(other).readOnly);
    third.createConversation(QStringLiteral("writable again"));
  }

  void killedWriterLeavesNoStaleLock() {
    ::kill(static_cast<pid_t>(writer_.processId()), SIGKILL);
    QVERIFY(writer_.waitForFinished(10000));
    ChatStore store;
    const OpenReport report = store.open(path_);
    QVERIFY(!report.readOnly);
    QCOMPARE(report.interruptedMessages, 1);  // the writer's answer, cut by the kill
    QCOMPARE(store.message(answer_)->status, MessageStatus::Interrupted);
    QCOMPARE(store.message(answer_)->content, QStringLiteral("streaming still"));
    store.addMessage(conversation_, question_, Role::User, QStringLiteral("after the kill"));
  }

  void cleanupTestCase() {
    if (writer_.state() != QProcess::NotRunning) {
      writer_.write("quit\n");
      writer_.waitForFinished(10000);
    }
  }
};

int main(int argc, char** argv) {
  QCoreApplication app(argc, argv);
  if (argc == 3 && std::string(argv[1]) == "--hold") return holdStore(QString::fromLocal8Bit(argv[2]));
  StoreTwoProcessesTest test;
  return QTest::qExec(&test, argc, argv);
}

#include "test_store_two_processes.moc"
