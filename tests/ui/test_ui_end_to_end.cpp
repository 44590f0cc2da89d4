// End to end: the real `ember` executable on the real default model under Xvfb, with a fresh data
// folder. It sends a message (EMBER_TEST_AUTOSEND; see app/controller/ui_test_hook.h), waits for
// the streamed answer, reads the last bubble and its stats line from the QML items, and saves a
// screenshot. References: the text we sent (it must come back from the store byte for byte), the
// answer the model produced (the bubble must show it, and the store must hold it with its stats),
// and the stats-line format the app promises ("TTFT 120 ms · 48.2 tok/s · 64 tokens", then
// "reused N of M prompt tokens" and the backend the answer ran on). A second run streams two
// chats at once (EMBER_TEST_AUTOSEND_SECOND) and takes concurrent.png (in the build folder).
#include <QDir>
#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QRegularExpression>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QtTest>
#include <sqlite3.h>

#include "common/test_paths.h"
#include "store/chat_store.h"

namespace {
constexpr auto kModel = "SmolLM2-135M-Instruct.Q4_1.gguf";
// Korean in the question checks that CJK text survives the whole path (and shows in the picture).
const QString kQuestion = QStringLiteral("안녕하세요! What is the capital of France? Answer in one sentence.");
// Read-only look at the running app's database (WAL allows a concurrent reader): the answer's
// status and how many characters of it are saved so far.
std::pair<QString, qint64> peekAnswer(const QString& dbPath) {
  sqlite3* db = nullptr;
  std::pair<QString, qint64> result{QString(), -1};
  if (sqlite3_open_v2(dbPath.toUtf8().constData(), &db, SQLITE_OPEN_READONLY, nullptr) ==
      SQLITE_OK) {
    sqlite3_stmt* stmt = nullptr;
    if (sqlite3_prepare_v2(db, "SELECT status, length(content) FROM messages "
                               "WHERE role = 'assistant' ORDER BY id DESC LIMIT 1",
                           -1, &stmt, nullptr) == SQLITE_OK &&
        sqlite3_step(stmt) == SQLITE_ROW) {
      result = {QString::fromUtf8(reinterpret_cast<const char*>(sqlite3_column_text(stmt, 0))),
                sqlite3_column_int64(stmt, 1)};
    }
    sqlite3_finalize(stmt);
  }
  sqlite3_close(db);
  return result;
}
}  // namespace

class UiEndToEndTest : public QObject {
  Q_OBJECT
 private slots:
  void sendShowsStreamedAnswerWithStats() {
    EMBER_REQUIRE_MODEL(model, kModel);
    const QString xvfbRun = QStandardPaths::findExecutable(QStringLiteral("xvfb-run"));
    if (xvfbRun.isEmpty() && qEnvironmentVariableIsEmpty("DISPLAY")) {
      if (ember::test::underCi()) QFAIL("xvfb-run not found (apt-get install xvfb xauth)");
      QSKIP("xvfb-run not found and no DISPLAY (apt-get install xvfb xauth)");
    }
    QTemporaryDir data;
    const QString outputDir = QDir(QCoreApplication::applicationDirPath()).filePath("ui-test");
    QDir(outputDir).removeRecursively();

    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert("XDG_DATA_HOME", data.path());
    env.insert("XDG_CONFIG_HOME", data.filePath("config"));
    env.insert("EMBER_MODELS_DIR", ember::test::modelsDir());
    env.insert("EMBER_TEST_AUTOSEND", kQuestion);
    env.insert("EMBER_TEST_MAX_TOKENS", "160");
    env.insert("EMBER_TEST_SHOW_PANELS", "1");  // a second picture: settings and answer details
    env.insert("EMBER_TEST_OUTPUT_DIR", outputDir);
    env.insert("QT_QPA_PLATFORM", "xcb");
    QProcess app;
    app.setProcessEnvironment(env);
    app.setProcessChannelMode(QProcess::MergedChannels);
    const QStringList appArgs = {ember::test::builtProgram("ember"), "--model", model};
    if (!xvfbRun.isEmpty())
      app.start(xvfbRun, QStringList{"-a", "-s", "-screen 0 1280x800x24"} + appArgs);
    else
      app.start(appArgs.first(), appArgs.mid(1));
    QVERIFY2(app.waitForStarted(30000), qPrintable(app.errorString()));
    QVERIFY2(app.waitForFinished(240000), "the app did not finish within 240 s");
    const QByteArray log = app.readAll();
    QVERIFY2(app.exitStatus() == QProcess::NormalExit && app.exitCode() == 0, log.constData());

    QFile reportFile(QDir(outputDir).filePath("report.json"));
    QVERIFY2(reportFile.open(QIODevice::ReadOnly), log.constData());
    const QJsonObject report = QJsonDocument::fromJson(reportFile.readAll()).object();
    const QString answer = report.value("modelText").toString();
    QVERIFY2(!answer.trimmed().isEmpty(), "the model produced no text");
    // The bubble shows the answer as rendered text; without Markdown syntax in it, that is the
    // answer itself (spacing aside).
    const QString shown = report.value("bubbleText").toString();
    QVERIFY2(!shown.trimmed().isEmpty() && shown != QStringLiteral("…"), qPrintable(shown));
    static const QRegularExpression markdownSyntax(QStringLiteral("[*_`#>|\\[\\]]|^\\s*\\d+\\.|^\\s*- "),
                                                   QRegularExpression::MultilineOption);
    if (!answer.contains(markdownSyntax)) QCOMPARE(shown.simplified(), answer.simplified());
    QVERIFY(report.value("statsVisible").toBool());
    static const QRegularExpression statsFormat(QStringLiteral(
        "^TTFT \\d+ ms · \\d+\\.\\d tok/s · \\d+ tokens · reused \\d+ of \\d+ prompt tokens · \\S.*$"));
    QVERIFY2(statsFormat.match(report.value("statsLine").toString()).hasMatch(),
             qPrintable(report.value("statsLine").toString()));
    QVERIFY(report.value("windowTitle").toString().startsWith(QStringLiteral("Ember — ")));
    const QString screenshot = report.value("screenshot").toString();
    QVERIFY(QFileInfo(screenshot).size() > 0);

    // What the window showed is what the store kept: the question as sent, the answer with stats.
    ember::store::ChatStore store;
    store.open(QDir(data.path()).filePath("ember/ember.sqlite"));
    const auto conversations = store.listConversations();
    QCOMPARE(conversations.size(), 1);
    const auto branch = store.activeBranch(conversations.first().id);
    QCOMPARE(branch.size(), 2);
    QCOMPARE(branch[0].content, kQuestion);
    QCOMPARE(branch[1].content, answer);
    QCOMPARE(branch[1].status, ember::store::MessageStatus::Complete);
    const auto stats = store.stats(branch[1].id);
    QVERIFY(stats.has_value());
    QVERIFY(stats->generatedTokens >= 1);
    QCOMPARE(qsizetype(stats->tokenTimesMs.size()) >= 1, true);
    QVERIFY(stats->ttftMs <= stats->totalMs);

    // The pictures stay in the build folder (scripts/refresh-screenshots.sh copies them into
    // docs/ for the README when wanted).
    const QString panels = QDir(outputDir).filePath("panels.png");
    QVERIFY(QFileInfo(panels).size() > 0);
    qInfo("screenshots: %s %s", qPrintable(screenshot), qPrintable(panels));
  }

  // Several chats at once, in the window: the first chat streams a long answer; the hook opens a second chat
  // and sends there; the picture is taken while both stream. Both answers end complete in the
  // store with their stats (prompt reuse, backend), each in its own conversation.
  void twoChatsStreamAtOnce() {
    EMBER_REQUIRE_MODEL(model, kModel);
    const QString xvfbRun = QStandardPaths::findExecutable(QStringLiteral("xvfb-run"));
    if (xvfbRun.isEmpty()) QSKIP("xvfb-run not found (apt-get install xvfb xauth)");
    QTemporaryDir data;
    const QString outputDir = QDir(QCoreApplication::applicationDirPath()).filePath("ui-test-2");
    QDir(outputDir).removeRecursively();
    const QString first = QStringLiteral("이야기 하나: write a long story about a dragon and a knight.");
    const QString second = QStringLiteral("Why is the sky blue? 짧게 설명해 주세요 (explain briefly).");
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert("XDG_DATA_HOME", data.path());
    env.insert("XDG_CONFIG_HOME", data.filePath("config"));
    env.insert("EMBER_MODELS_DIR", ember::test::modelsDir());
    env.insert("EMBER_TEST_AUTOSEND", first);
    env.insert("EMBER_TEST_AUTOSEND_SECOND", second);
    env.insert("EMBER_TEST_MAX_TOKENS", "240");
    env.insert("EMBER_TEST_OUTPUT_DIR", outputDir);
    env.insert("QT_QPA_PLATFORM", "xcb");
    QProcess app;
    app.setProcessEnvironment(env);
    app.setProcessChannelMode(QProcess::MergedChannels);
    app.start(xvfbRun, {"-a", "-s", "-screen 0 1280x800x24", ember::test::builtProgram("ember"),
                        "--model", model});
    QVERIFY2(app.waitForStarted(30000), qPrintable(app.errorString()));
    QVERIFY2(app.waitForFinished(240000), "the app did not finish within 240 s");
    const QByteArray log = app.readAll();
    QVERIFY2(app.exitStatus() == QProcess::NormalExit && app.exitCode() == 0, log.constData());

    QFile reportFile(QDir(outputDir).filePath("report.json"));
    QVERIFY2(reportFile.open(QIODevice::ReadOnly), log.constData());
    const QJsonObject report = QJsonDocument::fromJson(reportFile.readAll()).object();
    const QJsonObject concurrent = report.value("concurrent").toObject();
    QVERIFY2(concurrent.value("firstGenerating").toBool(), "the first chat had ended by the picture");
    QVERIFY(concurrent.value("secondGenerating").toBool());
    QCOMPARE(concurrent.value("shownConversation").toInteger(),
             concurrent.value("secondConversation").toInteger());
    const QString picture = concurrent.value("screenshot").toString();
    QVERIFY(QFileInfo(picture).size() > 0);

    ember::store::ChatStore store;
    store.open(QDir(data.path()).filePath("ember/ember.sqlite"));
    const auto conversations = store.listConversations();
    QCOMPARE(conversations.size(), 2);
    QStringList questions;
    for (const auto& conversation : conversations) {
      const auto branch = store.activeBranch(conversation.id);
      QCOMPARE(branch.size(), 2);
      questions << branch[0].content;
      QCOMPARE(branch[1].status, ember::store::MessageStatus::Complete);
      QVERIFY(!branch[1].content.isEmpty());
      const auto stats = store.stats(branch[1].id);
      QVERIFY(stats.has_value());
      QVERIFY(stats->promptTokens > 0);
      QVERIFY(stats->cachedTokens >= 0 && stats->cachedTokens <= stats->promptTokens);
      QVERIFY(!stats->backend.isEmpty());
    }
    questions.sort();
    QStringList expected{first, second};
    expected.sort();
    QCOMPARE(questions, expected);

    qInfo("screenshot: %s", qPrintable(picture));
  }

  // RELIABILITY.md case 20 at the level of the whole app: SIGKILL while an answer streams. After
  // it, the store opens cleanly, the question is there as sent, and the answer is kept (marked
  // interrupted, or complete if it beat the kill).
  void killedWhileStreamingLosesNothing() {
    EMBER_REQUIRE_MODEL(model, kModel);
    const QString xvfbRun = QStandardPaths::findExecutable(QStringLiteral("xvfb-run"));
    if (xvfbRun.isEmpty()) QSKIP("xvfb-run not found (apt-get install xvfb xauth)");
    QTemporaryDir data;
    const QString question = QStringLiteral("Write a very long story about a dragon, a knight and 용.");
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert("XDG_DATA_HOME", data.path());
    env.insert("EMBER_TEST_AUTOSEND", question);
    env.insert("EMBER_TEST_OUTPUT_DIR", data.filePath("out"));
    env.insert("QT_QPA_PLATFORM", "xcb");
    // A shell records its pid and then execs the app, so the SIGKILL hits the app itself (not
    // xvfb-run, which then exits on its own).
    const QString pidFile = data.filePath("ember.pid");
    QProcess app;
    app.setProcessEnvironment(env);
    app.setProcessChannelMode(QProcess::MergedChannels);
    app.start(xvfbRun, {"-a", "-s", "-screen 0 1280x800x24", "sh", "-c",
                        QStringLiteral("echo $$ > '%1'; exec '%2' --model '%3'")
                            .arg(pidFile, ember::test::builtProgram("ember"), model)});
    QVERIFY(app.waitForStarted(30000));
    // Kill once a checkpoint of the streaming answer is on disk (or the answer is already done).
    const QString dbPath = QDir(data.path()).filePath("ember/ember.sqlite");
    std::pair<QString, qint64> seen;
    QVERIFY2(QTest::qWaitFor([&] {
               seen = peekAnswer(dbPath);
               return (seen.first == "streaming" && seen.second > 0) ||
                      (!seen.first.isEmpty() && seen.first != "streaming");
             }, 120000), "no answer was saved");
    QFile pid(pidFile);
    QVERIFY(pid.open(QIODevice::ReadOnly));
    QProcess::execute("kill", {"-9", QString::fromLatin1(pid.readAll().trimmed())});
    QVERIFY(app.waitForFinished(60000));

    ember::store::ChatStore store;
    const ember::store::OpenReport report =
        store.open(QDir(data.path()).filePath("ember/ember.sqlite"));
    QVERIFY(!report.recoveredFromCorruption);
    const auto conversations = store.listConversations();
    QCOMPARE(conversations.size(), 1);
    const auto branch = store.activeBranch(conversations.first().id);
    QCOMPARE(branch.size(), 2);
    QCOMPARE(branch[0].content, question);
    qInfo("answer after the kill: %s, %lld characters",
          qPrintable(ember::store::statusName(branch[1].status)),
          static_cast<long long>(branch[1].content.size()));
    QVERIFY2(branch[1].status == ember::store::MessageStatus::Interrupted ||
                 branch[1].status == ember::store::MessageStatus::Complete,
             qPrintable(ember::store::statusName(branch[1].status)));
    QVERIFY(branch[1].content.size() >= seen.second);  // nothing checkpointed was lost
  }
};

QTEST_GUILESS_MAIN(UiEndToEndTest)
#include "test_ui_end_to_end.moc"
