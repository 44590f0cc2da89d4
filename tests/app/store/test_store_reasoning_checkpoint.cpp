// An answer's reasoning is checkpointed with its text while it streams, so a crash keeps the
// reasoning that had arrived, like the text. A child process (this executable run as
// `test_store_reasoning_checkpoint --child DBPATH`) streams an answer that thinks first, then
// writes, checkpointing after every piece and reporting each checkpoint once it returned, one
// piece per line the parent sends (so the parent knows exactly where it is); the parent kills it
// with SIGKILL while it thinks, and again while it writes, and each time opens the file in a
// fresh store as the app does at its next start. References: the child's own
// reports (printed only after the store call returned) and the texts it was given.
#include <QCoreApplication>
#include <QProcess>
#include <QThread>
#include <QTemporaryDir>
#include <QtTest>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <cstring>

#include "store/chat_store.h"
#include "store_test_support.h"

using namespace ember::store;

namespace {

constexpr int kReasoningPieces = 30;
constexpr int kAnswerPieces = 30;

QString reasoningText(int pieces) {
  QString text;
  for (int i = 0; i < pieces; ++i) text += QStringLiteral("생각 %1 thought %1. ").arg(i);
  return text;
}
QString answerText(int pieces) {
  QString text;
  for (int i = 0; i < pieces; ++i) text += QStringLiteral("답 %1 word%1 ").arg(i);
  return text;
}

void report(const QByteArray& line) {
  std::fputs(line.constData(), stdout);
  std::fputc('\n', stdout);
  std::fflush(stdout);
}

void waitForGo() {  // one line from the parent per piece
  for (int c = std::getchar(); c != '\n'; c = std::getchar())
    if (c == EOF) std::exit(3);
}

// Streams one answer and then waits to be killed. Reasoning takes 10 ms a piece (its duration
// so far is saved with it); the answer's pieces leave the reasoning as it ended.
int runChild(const QString& path) {
  try {
    ChatStore store;
    store.open(path);
    const Id conversation = store.createConversation(QStringLiteral("thinking"));
    const Id question = store.addMessage(conversation, 0, Role::User, QStringLiteral("Why?"));
    const Id answer = store.beginAssistantMessage(question, "thinking-model");
    report("answer " + QByteArray::number(answer));
    for (int i = 1; i <= kReasoningPieces; ++i) {
      waitForGo();
      store.checkpoint(answer, QString(), reasoningText(i), 10.0 * i);
      report("thought " + QByteArray::number(i));
    }
    for (int i = 1; i <= kAnswerPieces; ++i) {
      waitForGo();
      store.checkpoint(answer, answerText(i), reasoningText(kReasoningPieces),
                       10.0 * kReasoningPieces);
      report("wrote " + QByteArray::number(i));
    }
    report("done");
    for (;;) QThread::sleep(1);  // killed
  } catch (const StoreError& error) {
    std::fprintf(stderr, "child: %s\n", error.what());
    return 2;
  }
}

struct Reported {
  Id answer = 0;
  int thought = 0;
  int wrote = 0;
};

// Runs the child until `until` says stop (or it is done), then SIGKILL.
Reported runAndKill(const QString& path, const std::function<bool(const Reported&)>& until) {
  QProcess child;
  child.setProgram(QCoreApplication::applicationFilePath());
  child.setArguments({"--child", path});
  child.start();
  Reported r;
  QByteArray pending;
  bool stop = false;
  while (!stop && child.waitForReadyRead(20000)) {
    pending += child.readAllStandardOutput();
    qsizetype nl;
    while (!stop && (nl = pending.indexOf('\n')) >= 0) {
      const QList<QByteArray> w = pending.left(nl).split(' ');
      pending.remove(0, nl + 1);
      if (w[0] == "answer") r.answer = w[1].toLongLong();
      if (w[0] == "thought") r.thought = w[1].toInt();
      if (w[0] == "wrote") r.wrote = w[1].toInt();
      stop = until(r) || w[0] == "done";
      if (!stop) child.write("\n");  // the next piece
    }
  }
  child.kill();
  child.waitForFinished(10000);
  return r;
}

}  // namespace

class StoreReasoningCheckpointTest : public QObject {
  Q_OBJECT

 private slots:
  void crashWhileThinkingKeepsTheReasoning() {
    QTemporaryDir dir;
    const QString path = dir.filePath("think.db");
    const Reported r = runAndKill(path, [](const Reported& r) { return r.thought >= 12; });
    QVERIFY(r.answer > 0);
    QCOMPARE(r.thought, 12);
    ChatStore store;  // the next start
    store.open(path);
    const std::optional<Message> m = store.message(r.answer);
    QVERIFY(m);
    QCOMPARE(m->status, MessageStatus::Interrupted);
    // Exactly the reasoning that had arrived (the child was waiting for its next piece).
    QCOMPARE(m->reasoning, reasoningText(r.thought));
    QCOMPARE(m->reasoningMs, 10.0 * r.thought);
    QCOMPARE(m->content, QString());
  }

  void crashWhileWritingKeepsBoth() {
    QTemporaryDir dir;
    const QString path = dir.filePath("write.db");
    const Reported r = runAndKill(path, [](const Reported& r) { return r.wrote >= 7; });
    QCOMPARE(r.wrote, 7);
    ChatStore store;
    store.open(path);
    const std::optional<Message> m = store.message(r.answer);
    QVERIFY(m);
    QCOMPARE(m->status, MessageStatus::Interrupted);
    QCOMPARE(m->reasoning, reasoningText(kReasoningPieces));
    QCOMPARE(m->reasoningMs, 10.0 * kReasoningPieces);
    QCOMPARE(m->content, answerText(r.wrote));
  }

  // The text-only checkpoint leaves a saved reasoning alone.
  void textOnlyCheckpointKeepsReasoning() {
    QTemporaryDir dir;
    ChatStore store;
    store.open(dir.filePath("plain.db"));
    const Id c = store.createConversation(QStringLiteral("t"));
    const Id q = store.addMessage(c, 0, Role::User, QStringLiteral("Hi"));
    const Id a = store.beginAssistantMessage(q, "m");
    store.checkpoint(a, QString(), QStringLiteral("thinking"), 42.0);
    store.checkpoint(a, QStringLiteral("Hello"));
    const std::optional<Message> m = store.message(a);
    QCOMPARE(m->reasoning, QStringLiteral("thinking"));
    QCOMPARE(m->reasoningMs, 42.0);
    QCOMPARE(m->content, QStringLiteral("Hello"));
  }
};

int main(int argc, char** argv) {
  if (argc == 3 && std::strcmp(argv[1], "--child") == 0)
    return runChild(QString::fromLocal8Bit(argv[2]));
  QCoreApplication app(argc, argv);
  StoreReasoningCheckpointTest test;
  return QTest::qExec(&test, argc, argv);
}
#include "test_store_reasoning_checkpoint.moc"
