// The app on a remote model: the model picker's rows (files, then the servers' models sorted by
// server and model, then "Open file..."), and chat turns through AppController against a real
// ember-serve on a loopback port of the OS's choosing (it dies with the test: PR_SET_PDEATHSIG).
// References: for the answer, the same server's own non-streamed answer to the same messages
// (greedy), asked with cpp-httplib, its usage for the token counts; for the stored stats, the
// device string the app promises ("remote: <server> (<model>)") and the server's own timings
// object (llama.cpp's `timings` shape) kept in the stats JSON; for a failure, the server killed
// mid-answer: the text that arrived is kept and the message says the stream was cut; for the
// picker's server lines and the meter, the server's --context (its /v1/models context_length)
// and a loopback port nothing listens on.
#include <httplib.h>
#include <signal.h>
#include <sys/prctl.h>

#include <QJsonObject>
#include <QProcess>
#include <QSignalSpy>
#include <QTcpServer>
#include <QTemporaryDir>
#include <QGuiApplication>
#include <QtTest>
#include <nlohmann/json.hpp>

#include "common/store_open_wait.h"
#include "common/test_paths.h"
#include "controller/app_controller.h"

using namespace ember::app;
using ember::store::MessageStatus;

namespace {
constexpr auto kModel = "SmolLM2-135M-Instruct.Q4_1.gguf";
constexpr auto kServer = "team box";
constexpr auto kGoneServer = "gone box";  // a connection to a port nothing listens on
constexpr int kServeContext = 2048;       // ember-serve's --context: its /v1/models context_length

int freePort() {
  QTcpServer probe;
  if (!probe.listen(QHostAddress::LocalHost, 0)) return 0;
  return probe.serverPort();
}
}  // namespace

class RemoteChatTest : public QObject {
  Q_OBJECT

  QTemporaryDir dir_;
  QProcess serve_;
  int port_ = 0;
  QString modelId_;
  std::unique_ptr<AppController> controller_;
  AppController::Options options_;
  qint64 chatId_ = 0;  // the chat answered on the remote model

  bool startServe(const QString& model) {
    port_ = port_ ? port_ : freePort();
    serve_.setProgram(ember::test::builtProgram("ember-serve"));
    serve_.setArguments({"--model", model, "--port", QString::number(port_), "--threads", "1",
                         "--context", "2048", "--usage-db", dir_.filePath("serve.sqlite"),
                         "--log-file", dir_.filePath("serve.log")});
    serve_.setChildProcessModifier([] { ::prctl(PR_SET_PDEATHSIG, SIGTERM); });
    serve_.start();
    if (!serve_.waitForStarted()) return false;
    httplib::Client http("127.0.0.1", port_);
    return QTest::qWaitFor([&] {
      auto r = http.Get("/health");
      return r && r->status == 200;
    }, 60000);
  }
  QString baseUrl() const { return QStringLiteral("http://127.0.0.1:%1/v1").arg(port_); }

  // The server's own non-streamed greedy answer to one user message.
  nlohmann::json directAnswer(const QString& text, int maxTokens) {
    httplib::Client http("127.0.0.1", port_);
    http.set_read_timeout(120, 0);
    const nlohmann::json body = {
        {"model", modelId_.toStdString()},
        {"messages", {{{"role", "user"}, {"content", text.toStdString()}}}},
        {"temperature", 0}, {"max_tokens", maxTokens}};
    auto r = http.Post("/v1/chat/completions", body.dump(), "application/json");
    if (!r || r->status != 200) return {};
    return nlohmann::json::parse(r->body);
  }

  int remoteRow() const {
    ModelListModel* list = controller_->models();
    for (int row = 0; row < list->rowCount(); ++row)
      if (const RemoteModelEntry* e = list->remoteAt(row); e && e->model == modelId_) return row;
    return -1;
  }

  qint64 sendAndWait(const QString& text, QSignalSpy& finished) {
    const int before = int(finished.count());
    if (!controller_->send(text)) return 0;
    if (!QTest::qWaitFor([&] { return finished.count() > before; }, 120000)) return 0;
    return finished.last().at(0).toLongLong();
  }
  qint64 waitForAnswer(QSignalSpy& finished, int before) {
    if (!QTest::qWaitFor([&] { return finished.count() > before; }, 120000)) return 0;
    return finished.last().at(0).toLongLong();
  }
  // The answer stored as the remote model's: the text the server itself gives, and its device.
  void checkRemoteAnswer(qint64 answerId, const QString& question) {
    QVERIFY(answerId > 0);
    const nlohmann::json reference = directAnswer(question, 16);
    QVERIFY(!reference.is_null());
    const auto message = controller_->store().message(answerId);
    QVERIFY(message.has_value());
    QCOMPARE(message->status, MessageStatus::Complete);
    QCOMPARE(message->content.toStdString(),
             reference["choices"][0]["message"]["content"].get<std::string>());
    const auto stats = controller_->store().stats(answerId);
    QVERIFY(stats.has_value());
    QCOMPARE(stats->backend, QStringLiteral("remote: %1 (%2)").arg(kServer, modelId_));
    QCOMPARE(stats->promptTokens, reference["usage"]["prompt_tokens"].get<int64_t>());
  }
  std::unique_ptr<AppController> restartApp() {
    controller_.reset();
    auto c = std::make_unique<AppController>(options_);
    (void)ember::test::waitForStoreOpen(*c);
    return c;
  }

 private slots:
  void pickerRows() {
    ModelListModel list;
    ModelFileInfo file;
    file.path = "/models/a.gguf";
    file.fileName = "a.gguf";
    list.setFiles({file});
    list.setRemoteModels({{"2", "zeta", "http://z:8000/v1", "llama-70b", 32768},
                          {"1", "alpha", "http://a:8000/v1", "qwen-7b", 0},
                          {"1", "alpha", "http://a:8000/v1", "gemma-2b", 0}});
    QCOMPARE(list.rowCount(), 5);  // 1 file + 3 remote + "Open file..."
    auto at = [&](int row, int role) { return list.data(list.index(row), role); };
    QCOMPARE(at(0, ModelListModel::IsRemoteRole).toBool(), false);
    QCOMPARE(at(0, ModelListModel::FileNameRole).toString(), QString("a.gguf"));
    // Sorted by server, then model.
    QCOMPARE(at(1, ModelListModel::FileNameRole).toString(), QString("gemma-2b"));
    QCOMPARE(at(2, ModelListModel::FileNameRole).toString(), QString("qwen-7b"));
    QCOMPARE(at(3, ModelListModel::FileNameRole).toString(), QString("llama-70b"));
    QCOMPARE(at(3, ModelListModel::ServerRole).toString(), QString("zeta"));
    QCOMPARE(at(3, ModelListModel::SummaryRole).toString(),
             QString("remote · zeta · http://z:8000/v1 · ctx 32768"));
    QCOMPARE(at(1, ModelListModel::SummaryRole).toString(),
             QString("remote · alpha · http://a:8000/v1"));
    QVERIFY(at(2, ModelListModel::IsRemoteRole).toBool());
    QVERIFY(at(2, ModelListModel::FitsRole).toBool());
    QVERIFY(at(2, ModelListModel::PathRole).toString().isEmpty());
    QVERIFY(at(4, ModelListModel::IsOpenFileRole).toBool());
    QCOMPARE(at(4, ModelListModel::IsRemoteRole).toBool(), false);
    QVERIFY(!list.remoteAt(0) && !list.remoteAt(4));
    QCOMPARE(list.remoteAt(3)->connectionId, QString("2"));
    // A file opened later goes before the remote rows.
    ModelFileInfo other;
    other.path = "/elsewhere/b.gguf";
    other.fileName = "b.gguf";
    QCOMPARE(list.addFile(other), 1);
    QCOMPARE(at(2, ModelListModel::FileNameRole).toString(), QString("gemma-2b"));
    QCOMPARE(list.data(list.index(5), ModelListModel::IsOpenFileRole).toBool(), true);
  }

  void initTestCase() {
    EMBER_REQUIRE_MODEL(model, kModel);
    QVERIFY(startServe(model));
    modelId_ = QFileInfo(model).completeBaseName();
    // The connection as Settings → Connections saves it (no key: a loopback ember-serve).
    const QString settings = dir_.filePath("connections.ini");
    {
      ConnectionsModel connections(settings, dir_.filePath("keys"), false);
      QCOMPARE(connections.add(kServer, baseUrl(), QString()), QString());
      const QString gone = QStringLiteral("http://127.0.0.1:%1/v1").arg(freePort());
      QCOMPARE(connections.add(kGoneServer, gone, QString()), QString());
      QVERIFY(QTest::qWaitFor([&] { return connections.at(0).keyStorage != KeyStorage::File; }, 100));
    }
    options_.databasePath = dir_.filePath("ember.sqlite");
    options_.modelFolders = {dir_.filePath("no-models-here")};
    options_.connectionsSettingsPath = settings;
    options_.connectionsKeyDir = dir_.filePath("keys");
    controller_ = std::make_unique<AppController>(options_);
    QVERIFY(!controller_->composerBlockReason().isEmpty());  // nothing chosen yet
    // While the servers are asked, the picker says so, one line per server.
    QCOMPARE(controller_->remoteServerLines(),
             QStringList({QStringLiteral("asking %1…").arg(kServer),
                          QStringLiteral("asking %1…").arg(kGoneServer)}));
    QVERIFY(ember::test::waitForStoreOpen(*controller_));
    QVERIFY(!controller_->restoreRemoteModel());  // nothing chosen before either
    QVERIFY(QTest::qWaitFor([&] { return remoteRow() >= 0; }, 20000));
    // The unreachable server gets a line with its reason (the client's "unreachable" error,
    // naming the server); the one that answered gets none: its models are the rows.
    QVERIFY(QTest::qWaitFor([&] {
      return !controller_->remoteServerLines().value(0).startsWith(QStringLiteral("asking"));
    }, 20000));
    const QStringList lines = controller_->remoteServerLines();
    QCOMPARE(lines.size(), 1);
    QVERIFY2(lines[0].startsWith(QStringLiteral("%1 did not answer: ").arg(kGoneServer)) &&
                 lines[0].size() > QString("%1 did not answer: ").arg(kGoneServer).size() + 5,
             qPrintable(lines[0]));
    // ember-serve reports the context it runs with; the row shows it.
    const RemoteModelEntry* entry = controller_->models()->remoteAt(remoteRow());
    QCOMPARE(entry->contextLength, kServeContext);
    QVERIFY(remoteModelSummary(*entry).endsWith(QStringLiteral(" · ctx %1").arg(kServeContext)));
    QVERIFY(controller_->setSetting("temperature", 0));
    QVERIFY(controller_->setSetting("maxTokens", 16));
  }

  void chatTurnOnRemoteModel() {
    controller_->useRemoteModel(remoteRow());
    QVERIFY(QTest::qWaitFor([&] { return controller_->usingRemoteModel(); }, 5000));
    QVERIFY(controller_->composerBlockReason().isEmpty());
    QCOMPARE(controller_->modelName(), modelId_);
    // The context meter: the server's context length; no local count for the server's tokenizer.
    QVERIFY(QTest::qWaitFor([&] { return controller_->contextUsage().value("remote").toBool(); },
                            5000));  // the meter recounts shortly after a model change
    const QVariantMap usage = controller_->contextUsage();
    QCOMPARE(usage.value("known").toBool(), false);
    QCOMPARE(usage.value("remote").toBool(), true);
    QCOMPARE(usage.value("contextLength").toInt(), kServeContext);
    QSignalSpy finished(controller_.get(), &AppController::answerFinished);
    const QString question = QStringLiteral("Name three colours of the rainbow.");
    const qint64 answerId = sendAndWait(question, finished);
    QVERIFY(answerId > 0);
    const nlohmann::json reference = directAnswer(question, 16);
    QVERIFY(!reference.is_null());
    const auto message = controller_->store().message(answerId);
    QVERIFY(message.has_value());
    QCOMPARE(message->status, MessageStatus::Complete);
    QCOMPARE(message->content.toStdString(),
             reference["choices"][0]["message"]["content"].get<std::string>());
    const auto stats = controller_->store().stats(answerId);
    QVERIFY(stats.has_value());
    QCOMPARE(stats->backend, QStringLiteral("remote: %1 (%2)").arg(kServer, modelId_));
    QCOMPARE(stats->model, modelId_);
    QCOMPARE(stats->promptTokens, reference["usage"]["prompt_tokens"].get<int64_t>());
    QCOMPARE(stats->generatedTokens, reference["usage"]["completion_tokens"].get<int64_t>());
    QVERIFY(stats->ttftMs > 0 && stats->totalMs >= stats->ttftMs);
    // The server's own timings beside the client's: ember-serve's llama.cpp-shaped object.
    const QJsonObject server = stats->sampling.value("server_timings").toObject();
    QCOMPARE(server.value("predicted_n").toInteger(), stats->generatedTokens);
    QCOMPARE(server.value("prompt_n").toInteger() + server.value("cache_n").toInteger(),
             stats->promptTokens);
    QVERIFY(server.value("ttft_ms").toDouble() > 0);
    // The server ran the prompt before answering, so its TTFT is within the client's.
    QVERIFY(server.value("ttft_ms").toDouble() <= stats->ttftMs + 1);
    chatId_ = controller_->currentConversationId();
  }

  // Regenerate and Edit on the remote model go to the server too: the new answers are the
  // server's own greedy answers (cpp-httplib, same messages) with the remote device.
  void regenerateAndEditOnRemoteModel() {
    QSignalSpy finished(controller_.get(), &AppController::answerFinished);
    const MessageModel* view = controller_->messages();
    QVERIFY(chatId_ > 0 && view->rowCount() >= 2);
    const qint64 firstAnswer = view->row(view->rowCount() - 1)->id;
    controller_->regenerate();
    const qint64 again = waitForAnswer(finished, 0);
    QVERIFY(again > 0 && again != firstAnswer);
    QCOMPARE(controller_->store().siblings(again).count(), 2);
    checkRemoteAnswer(again, QStringLiteral("Name three colours of the rainbow."));
    int questionRow = view->rowCount() - 1;
    while (questionRow >= 0 && view->row(questionRow)->role != QLatin1String("user")) --questionRow;
    QVERIFY(questionRow >= 0);
    const qint64 question = view->row(questionRow)->id;
    const QString edited = QStringLiteral("Name two animals that live in the sea.");
    controller_->editMessage(question, edited);
    const qint64 editedAnswer = waitForAnswer(finished, 1);
    QVERIFY(editedAnswer > 0 && editedAnswer != again);
    checkRemoteAnswer(editedAnswer, edited);
    QCOMPARE(view->row(questionRow)->text, edited);
  }

  // The remote model chosen survives a restart (as the local file does), before its server has
  // been asked again; and the context length arrives once it has.
  void choiceSurvivesRestart() {
    controller_->newConversation();  // the app reopens this empty chat, which follows no model
    controller_ = restartApp();
    QVERIFY(!controller_->usingRemoteModel());
    QVERIFY(controller_->restoreRemoteModel());
    QVERIFY(QTest::qWaitFor([&] { return controller_->usingRemoteModel(); }, 5000));
    QCOMPARE(controller_->modelName(), modelId_);
    QCOMPARE(controller_->modelDetails(), QStringLiteral("remote: %1 (%2)").arg(kServer, modelId_));
    QVERIFY(QTest::qWaitFor([&] {
      return controller_->contextUsage().value("contextLength").toInt() == kServeContext;
    }, 20000));
    QSignalSpy finished(controller_.get(), &AppController::answerFinished);
    const QString question = QStringLiteral("Name three colours of the rainbow.");
    controller_->newConversation();
    QVERIFY(controller_->setSetting("temperature", 0));  // greedy, as the reference
    QVERIFY(controller_->setSetting("maxTokens", 16));
    checkRemoteAnswer(sendAndWait(question, finished), question);
  }

  // A chat answered on the remote model goes on there when it is opened (also the chat the app
  // reopens at start), even when the app was started without taking up the last choice.
  void chatKeepsItsRemoteModel() {
    controller_->newConversation();
    controller_ = restartApp();
    QVERIFY(!controller_->usingRemoteModel());
    QVERIFY(chatId_ > 0);
    controller_->openConversation(chatId_);
    QVERIFY(QTest::qWaitFor([&] { return controller_->usingRemoteModel(); }, 5000));
    QTRY_VERIFY(!controller_->messagesLoading());  // the rows come from the store thread
    QCOMPARE(controller_->modelName(), modelId_);
    QVERIFY(controller_->composerBlockReason().isEmpty());
    QVERIFY(controller_->setSetting("maxTokens", 16));
  }

  void cutAnswerKeepsWhatArrived() {
    QVERIFY(controller_->setSetting("maxTokens", 4000));
    QSignalSpy finished(controller_.get(), &AppController::answerFinished);
    QSignalSpy pieces(controller_.get(), &AppController::pieceReceived);
    QVERIFY(controller_->send(QStringLiteral("Write a very long story about a lighthouse.")));
    QVERIFY(QTest::qWaitFor([&] { return pieces.count() >= 8; }, 60000));
    serve_.kill();  // the server dies mid-answer
    QVERIFY(QTest::qWaitFor([&] { return finished.count() == 1; }, 30000));
    const qint64 answerId = finished.last().at(0).toLongLong();
    const auto message = controller_->store().message(answerId);
    QVERIFY(message.has_value());
    QCOMPARE(message->status, MessageStatus::Error);
    QVERIFY2(message->content.size() > 0, "the text that arrived was not kept");
    const MessageModel* view = controller_->messages();
    const MessageRow* row = view->row(view->rowCount() - 1);
    QVERIFY(row && row->id == answerId);
    QVERIFY2(row->error.contains(kServer) && row->error.contains("cut the stream"),
             qPrintable(row->error));
  }

  // The server in use is gone (killed above): the picker says why, and so does a notice.
  void goneServerSaysSo() {
    controller_->rescanModels();
    QVERIFY(QTest::qWaitFor([&] {
      return controller_->remoteServerLines().filter(QStringLiteral("%1 did not answer").arg(kServer))
                 .size() == 1;
    }, 20000));
    QVERIFY2(controller_->notice().startsWith(QStringLiteral("%1 did not answer").arg(kServer)),
             qPrintable(controller_->notice()));
    // Removed from Settings → Connections: the next start says so and takes up no remote model.
    {
      ConnectionsModel connections(options_.connectionsSettingsPath, options_.connectionsKeyDir,
                                   false);
      connections.remove(0);
    }
    controller_ = restartApp();
    QVERIFY(!controller_->restoreRemoteModel());
    QVERIFY2(controller_->notice().contains(QStringLiteral("%1 is no longer in Settings").arg(kServer)),
             qPrintable(controller_->notice()));
    QVERIFY(!controller_->usingRemoteModel());
  }

  void cleanupTestCase() {
    controller_.reset();
    if (serve_.state() != QProcess::NotRunning) {
      serve_.terminate();
      serve_.waitForFinished(20000);
    }
  }
};

// The controller needs a GUI application; offscreen, so the test runs without a display.
int main(int argc, char* argv[]) {
  qputenv("QT_QPA_PLATFORM", "offscreen");
  QGuiApplication app(argc, argv);
  RemoteChatTest test;
  QTEST_SET_MAIN_SOURCE_PATH
  return QTest::qExec(&test, argc, argv);
}
#include "test_remote_chat.moc"
