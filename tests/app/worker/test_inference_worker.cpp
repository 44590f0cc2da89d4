// InferenceWorker on its own thread with the real default model.
// References: the GGUF reader's own error message for a bad file (GgufFile::open, called here
// directly), and `ember-cli generate` — a separate process with no Qt and no worker — for the
// greedy answer the worker must stream piece by piece.
#include <QCoreApplication>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QThread>
#include <QtTest>
#include <atomic>
#include <optional>

#include "common/test_paths.h"
#include "gguf/gguf_file.h"
#include "worker/inference_worker.h"

using namespace ember;
using namespace ember::app;

namespace {
constexpr auto kModel = "SmolLM2-135M-Instruct.Q4_1.gguf";
constexpr auto kQuestion = "Name three colors.";

EngineOptions optionsFor(const QString& path) {
  EngineOptions o;
  o.modelPath = path.toStdString();
  o.threads = 2;
  o.contextLength = 1024;
  return o;
}

WorkerRequest greedyRequest(const QString& key, int maxTokens) {
  WorkerRequest r;
  r.key = key;
  r.messages = nlohmann::ordered_json::array({{{"role", "user"}, {"content", kQuestion}}});
  r.sampling.temperature = 0.0f;
  r.sampling.maxTokens = maxTokens;
  return r;
}
// Loads the model and waits for `loaded`, received on the GUI thread like every signal here (a
// QSignalSpy would record on the worker thread and could miss a signal sent before its wait()).
bool loadOn(InferenceThread& thread, const QString& path) {
  bool loaded = false, failed = false;
  QObject context;
  QObject::connect(thread.worker(), &InferenceWorker::loaded, &context, [&] { loaded = true; });
  QObject::connect(thread.worker(), &InferenceWorker::loadFailed, &context, [&] { failed = true; });
  QMetaObject::invokeMethod(thread.worker(), "loadModel", Qt::QueuedConnection,
                            Q_ARG(ember::EngineOptions, optionsFor(path)));
  return QTest::qWaitFor([&] { return loaded || failed; }, 60000) && loaded;
}
}  // namespace

class InferenceWorkerTest : public QObject {
  Q_OBJECT
 private slots:
  void initTestCase() { registerWorkerMetaTypes(); }

  void badFileFailsWithReaderMessage_data() {
    QTest::addColumn<QByteArray>("bytes");
    QTest::newRow("empty") << QByteArray();
    QTest::newRow("wrong magic") << QByteArray("GGUX\x03\0\0\0", 8);
    QTest::newRow("truncated header") << QByteArray("GGUF\x03\0\0\0\x01", 9);
  }
  void badFileFailsWithReaderMessage() {
    QFETCH(QByteArray, bytes);
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("bad.gguf"));
    QFile f(path);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write(bytes);
    f.close();
    QString readerMessage;
    try {
      gguf::GgufFile::open(path.toStdString());
    } catch (const Error& e) {
      readerMessage = QString::fromUtf8(e.what());
    }
    QVERIFY2(!readerMessage.isEmpty(), "the reader accepted a bad file");

    InferenceThread thread;
    QStringList failure;  // path, message
    QString requestFailure;
    QObject context;
    connect(thread.worker(), &InferenceWorker::loadFailed, &context,
            [&](const QString& p, const QString& m) { failure = {p, m}; });
    connect(thread.worker(), &InferenceWorker::failed, &context,
            [&](const QString&, const QString& m) { requestFailure = m; });
    QVERIFY(!loadOn(thread, path));
    QCOMPARE(failure.size(), 2);
    QCOMPARE(failure[0], path);
    QVERIFY2(failure[1].contains(readerMessage), qPrintable(failure[1]));

    // The worker stays usable: a request without a model fails with a message, no crash.
    QMetaObject::invokeMethod(thread.worker(), "submit", Qt::QueuedConnection,
                              Q_ARG(ember::app::WorkerRequest, greedyRequest("r", 4)));
    QTRY_VERIFY_WITH_TIMEOUT(!requestFailure.isEmpty(), 10000);
  }

  void piecesArriveInOrderOnGuiThread() {
    EMBER_REQUIRE_MODEL(model, kModel);
    const int maxTokens = 24;
    // Reference: the same greedy request through ember-cli, as JSON.
    QTemporaryDir dir;
    const QString messagesPath = dir.filePath(QStringLiteral("messages.json"));
    {
      QFile f(messagesPath);
      QVERIFY(f.open(QIODevice::WriteOnly));
      f.write(QJsonDocument(QJsonArray{QJsonObject{{"role", "user"}, {"content", kQuestion}}})
                  .toJson());
    }
    QByteArray out, err;
    const int rc = test::runProcess(
        ember::test::builtProgram("ember-cli"),
        {"generate", "--model", model, "--threads", "2", "--ctx", "1024", "--temperature", "0",
         "--max-tokens", QString::number(maxTokens), "--json", "--messages", messagesPath},
        &out, &err);
    QVERIFY2(rc == 0, err.constData());
    const QJsonObject reference =
        QJsonDocument::fromJson(out.mid(out.lastIndexOf("\n{") + 1)).object();
    QVERIFY2(reference.contains("text"), out.constData());

    InferenceThread thread;
    QVERIFY(loadOn(thread, model));

    QStringList pieces;
    QList<double> times;
    bool allOnGuiThread = true;
    RequestStats stats;
    bool done = false;
    QObject context;
    connect(thread.worker(), &InferenceWorker::pieceReady, &context,
            [&](const QString& key, const QString& text, double ms) {
              allOnGuiThread &= QThread::currentThread() == qApp->thread();
              QCOMPARE(key, QStringLiteral("a"));
              pieces << text;
              times << ms;
            });
    connect(thread.worker(), &InferenceWorker::finished, &context,
            [&](const QString&, const RequestStats& s) { stats = s; done = true; });
    QMetaObject::invokeMethod(thread.worker(), "submit", Qt::QueuedConnection,
                              Q_ARG(ember::app::WorkerRequest, greedyRequest("a", maxTokens)));
    QTRY_VERIFY_WITH_TIMEOUT(done, 120000);

    QVERIFY(allOnGuiThread);
    QCOMPARE(pieces.join(QString()), reference.value("text").toString());
    for (int i = 1; i < times.size(); ++i) QVERIFY(times[i] >= times[i - 1]);
    QVERIFY(stats.ttftMs > 0);
    QVERIFY(stats.ttftMs <= stats.totalMs);
    QCOMPARE(stats.generatedTokens, reference.value("generated_tokens").toInt(stats.generatedTokens));
    QVERIFY(pieces.size() <= stats.generatedTokens);  // a piece never splits a token's text
    QCOMPARE(qsizetype(stats.interTokenMs.size()), pieces.size() - 1);
  }

  void stopEndsWithinOneStep() {
    EMBER_REQUIRE_MODEL(model, kModel);
    InferenceThread thread;
    QVERIFY(loadOn(thread, model));
    // Counted on the worker thread as they are emitted (pieces still queued for the GUI do not
    // blur the count), and Stop is pressed right there at the third piece, inside an engine step,
    // as a click landing mid-step would: the greedy answer is short enough that a Stop sent from
    // the GUI thread could arrive after it has already ended.
    std::atomic<int> emitted{0};
    std::atomic<int> atAbort{-1};
    InferenceWorker* worker = thread.worker();
    connect(worker, &InferenceWorker::pieceReady, worker,
            [&](const QString&, const QString&, double) {
              if (emitted.fetch_add(1) + 1 == 3) {
                worker->abort(QStringLiteral("s"));
                atAbort = emitted.load();
              }
            },
            Qt::DirectConnection);
    std::optional<RequestStats> stats;
    QObject context;
    connect(worker, &InferenceWorker::finished, &context,
            [&](const QString&, const RequestStats& s) { stats = s; });
    QMetaObject::invokeMethod(worker, "submit", Qt::QueuedConnection,
                              Q_ARG(ember::app::WorkerRequest, greedyRequest("s", -1)));
    QTRY_VERIFY_WITH_TIMEOUT(stats.has_value(), 60000);
    QVERIFY2(atAbort.load() == 3, "the answer ended before its third piece");
    // The abort is applied before the next step: at most the piece of the step in flight.
    QVERIFY2(emitted.load() - atAbort.load() <= 1,
             qPrintable(QString::number(emitted.load() - atAbort.load())));
    QCOMPARE(stats->finishReason, FinishReason::Cancelled);
  }
};

QTEST_GUILESS_MAIN(InferenceWorkerTest)
#include "test_inference_worker.moc"
