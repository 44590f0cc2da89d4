// The crash test (RELIABILITY.md case 20): a child process — this same executable run as
// `test_store_crash --child DBPATH SEED` — commits user messages and streams answers with
// frequent checkpoints; the parent kills it with SIGKILL at seeded random points, 20 times.
// After each kill: SQLite's own integrity_check is ok, the store opens without declaring the
// file corrupt, every user message the child reported as committed is there with its exact
// text, and every answer holds at least the text of its last reported checkpoint.
// References: SQLite's integrity_check and FTS5 'integrity-check', and the child's own report
// of what returned from the store (printed only after the call returned, then flushed).
#include <QCoreApplication>
#include <QHash>
#include <QProcess>
#include <QRandomGenerator>
#include <QTemporaryDir>
#include <QThread>
#include <QtTest>
#include <cstdio>
#include <cstring>

#include "store/chat_store.h"
#include "store_test_support.h"

using namespace ember::store;

namespace {

constexpr int kKills = 20;
constexpr int kPiecesPerAnswer = 40;
constexpr int kPiecesPerCheckpoint = 4;

QString userText(quint64 runSeed, int turn) {
  return QStringLiteral("질문 %1-%2: 오늘 날씨는 어때요? How is the weather?").arg(runSeed).arg(turn);
}

QString answerText(int pieces) {  // the first `pieces` pieces of every answer
  QString text;
  for (int i = 0; i < pieces; ++i) text += QStringLiteral("토큰%1 token%1 ").arg(i);
  return text;
}

void report(const QByteArray& line) {
  std::fputs(line.constData(), stdout);
  std::fputc('\n', stdout);
  std::fflush(stdout);  // one write() per line: a kill cannot split it
}

// The child: runs until killed. Every line is printed after the store call it reports returned.
int runChild(const QString& path, quint64 runSeed) {
  try {
    ChatStore store;
    store.open(path);
    report("ready");
    const Id conversation = store.createConversation(QStringLiteral("crash run %1").arg(runSeed));
    Id leaf = 0;
    for (int turn = 0;; ++turn) {
      const Id question = store.addMessage(conversation, leaf, Role::User, userText(runSeed, turn));
      report("committed " + QByteArray::number(question) + " " + QByteArray::number(runSeed) +
             " " + QByteArray::number(turn));
      const Id answer = store.beginAssistantMessage(question, "crash-model");
      for (int pieces = kPiecesPerCheckpoint; pieces <= kPiecesPerAnswer;
           pieces += kPiecesPerCheckpoint) {
        store.checkpoint(answer, answerText(pieces));
        report("checkpointed " + QByteArray::number(answer) + " " + QByteArray::number(pieces));
      }
      MessageStats stats;
      stats.generatedTokens = kPiecesPerAnswer;
      stats.tokenTimesMs = {1.0, 2.0, 3.0};
      store.finishAssistantMessage(answer, answerText(kPiecesPerAnswer), MessageStatus::Complete,
                                   stats);
      report("finished " + QByteArray::number(answer));
      leaf = answer;
    }
  } catch (const StoreError& error) {
    std::fprintf(stderr, "child: %s\n", error.what());
    return 2;
  }
}

struct Expected {
  QHash<Id, QString> userMessages;     // id -> exact text
  QHash<Id, int> checkpointedPieces;   // answer id -> pieces of its last reported checkpoint
  QSet<Id> finished;
};

void parse(const QByteArray& output, Expected& expected, int* lines) {
  for (const QByteArray& line : output.split('\n')) {
    const QList<QByteArray> w = line.split(' ');
    if (w[0] == "committed" && w.size() == 4) {
      expected.userMessages.insert(w[1].toLongLong(), userText(w[2].toULongLong(), w[3].toInt()));
    } else if (w[0] == "checkpointed" && w.size() == 3) {
      expected.checkpointedPieces.insert(w[1].toLongLong(), w[2].toInt());
    } else if (w[0] == "finished" && w.size() == 2) {
      expected.finished.insert(w[1].toLongLong());
    }
    if (!line.isEmpty()) ++*lines;
  }
}

}  // namespace

class StoreCrashTest : public QObject {
  Q_OBJECT

 private slots:
  void killedAgainAndAgain() {
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const QString path = dir.filePath("crash.db");
    const quint64 seed = qEnvironmentVariableIsSet("EMBER_CRASH_SEED")
                             ? qEnvironmentVariable("EMBER_CRASH_SEED").toULongLong()
                             : 20240611;
    qInfo("seed %llu (set EMBER_CRASH_SEED to replay another)", seed);
    QRandomGenerator random(seed);
    Expected expected;

    for (int run = 0; run < kKills; ++run) {
      const quint64 runSeed = random.generate64() % 1000000;
      // Every fifth run is killed a few milliseconds after it starts, wherever it is (opening,
      // migrating the new file on run 0, recovering); the others after a random number of
      // reported steps, while committing, checkpointing or finishing.
      const bool early = run % 5 == 0;
      const int killAfterLines = 2 + static_cast<int>(random.bounded(150));
      const int earlyDelayMs = static_cast<int>(random.bounded(25));

      QProcess child;
      child.setProgram(QCoreApplication::applicationFilePath());
      child.setArguments({"--child", path, QString::number(runSeed)});
      child.start();
      QVERIFY2(child.waitForStarted(10000), qPrintable(child.errorString()));
      QByteArray output;
      int lines = 0;
      if (early) {
        QThread::msleep(static_cast<unsigned long>(earlyDelayMs));
      } else {
        while (output.count('\n') < killAfterLines && child.state() == QProcess::Running) {
          child.waitForReadyRead(10000);
          output += child.readAllStandardOutput();
        }
      }
      child.kill();  // SIGKILL on Unix
      QVERIFY(child.waitForFinished(10000));
      output += child.readAllStandardOutput();
      QVERIFY2(child.exitStatus() == QProcess::CrashExit,
               qPrintable("the child stopped on its own: " + child.readAllStandardError()));
      parse(output, expected, &lines);
      qInfo("run %d: killed after %d lines%s", run, lines, early ? " (early)" : "");

      checkAfterCrash(path, expected);
      if (QTest::currentTestFailed()) {
        qWarning("failed after run %d, seed %llu", run, seed);
        return;
      }
    }
    QVERIFY(expected.userMessages.size() > kKills);  // the test exercised real work
    QCOMPARE(ember::store::test::ftsIntegrityCheck(path, "message_words"), QStringLiteral("ok"));
    QCOMPARE(ember::store::test::ftsIntegrityCheck(path, "message_grams"), QStringLiteral("ok"));
  }

 private:
  void checkAfterCrash(const QString& path, const Expected& expected) {
    if (!QFileInfo::exists(path)) {  // killed before it created the file
      QVERIFY(expected.userMessages.isEmpty());
      return;
    }
    // The file as the crash left it (with its WAL), before ChatStore touches it.
    QCOMPARE(ember::store::test::integrityCheck(path), QStringLiteral("ok"));

    ChatStore store;
    const OpenReport report = store.open(path);
    QVERIFY(!report.recoveredFromCorruption);
    for (auto it = expected.userMessages.begin(); it != expected.userMessages.end(); ++it) {
      const std::optional<Message> m = store.message(it.key());
      QVERIFY2(m, qPrintable(QString("committed message %1 is missing").arg(it.key())));
      QCOMPARE(m->content, it.value());
      QCOMPARE(m->role, Role::User);
    }
    const QString fullAnswer = answerText(kPiecesPerAnswer);
    for (auto it = expected.checkpointedPieces.begin(); it != expected.checkpointedPieces.end();
         ++it) {
      const std::optional<Message> m = store.message(it.key());
      QVERIFY(m);
      QVERIFY(m->status == MessageStatus::Interrupted || m->status == MessageStatus::Complete);
      // At least the reported checkpoint (a later one may have landed before the kill).
      QVERIFY(m->content.size() >= answerText(it.value()).size());
      QVERIFY(fullAnswer.startsWith(m->content));
      if (expected.finished.contains(it.key())) {
        QCOMPARE(m->status, MessageStatus::Complete);
        QCOMPARE(m->content, fullAnswer);
        QVERIFY(store.stats(it.key()));
      }
    }
    store.close();
    ember::store::test::RawDb raw(path);
    QCOMPARE(raw.value("SELECT count(*) FROM messages WHERE status = 'streaming'"),
             QStringLiteral("0"));
  }
};

int main(int argc, char** argv) {
  if (argc == 4 && std::strcmp(argv[1], "--child") == 0)
    return runChild(QString::fromLocal8Bit(argv[2]), std::strtoull(argv[3], nullptr, 10));
  QCoreApplication app(argc, argv);
  StoreCrashTest test;
  QTEST_SET_MAIN_SOURCE_PATH
  return QTest::qExec(&test, argc, argv);
}

#include "test_store_crash.moc"
