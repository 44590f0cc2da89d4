// `ember-cli generate --server` and `ember-cli models --server` against the misbehaving upstream
// (misbehaving_upstream.py): the answer on stdout, the same stats line as a local answer on
// stderr (tools/cli statsLine), --json with the usage the server reported, and a clear error with
// exit status 1.
#include <QtTest>

#include "common/test_paths.h"
#include "remote_test_support.h"

using namespace ember::test;

class TestRemoteCli : public QObject {
  Q_OBJECT
  QProcess upstream_;
  QString base_;

 private slots:
  void initTestCase() {
    upstream_.start(EMBER_PYTHON, {sourceDir() + "/tests/openai/client/misbehaving_upstream.py",
                                   "--api-key", "k-cli", "--lifetime", "60"});
    QVERIFY(upstream_.waitForReadyRead(10000));
    base_ = "http://127.0.0.1:" + QString::number(upstream_.readLine().trimmed().toInt()) + "/v1";
  }
  void cleanupTestCase() {
    upstream_.closeWriteChannel();
    if (!upstream_.waitForFinished(3000)) upstream_.kill();
  }

  void modelsListsTheServersModels() {
    QByteArray out, err;
    QCOMPARE(runProcess(ember::test::builtProgram("ember-cli"), {"models", "--server", base_, "--api-key", "k-cli"}, &out,
                        &err),
             0);
    QVERIFY(out.split('\n').contains("good"));
    QVERIFY2(err.contains("11 models on 127.0.0.1:"), err.constData());
  }

  void generatePrintsTextAndStats() {
    QByteArray out, err;
    QCOMPARE(runProcess(ember::test::builtProgram("ember-cli"), {"generate", "--server", base_, "--api-key", "k-cli",
                                         "--model", "good", "--prompt", "hi"},
                        &out, &err),
             0);
    QCOMPARE(out, QByteArray("Hello there! \xC3\xA9t\xC3\xA9\n"));
    // The stats line of a local answer: reason, prompt tokens (reused), TTFT, tokens, ITL.
    QVERIFY2(err.startsWith("[stop] prompt 11 tok (3 reused)"), err.constData());
    QVERIFY(err.contains("| TTFT ") && err.contains("| 5 tok at ") && err.contains("ITL p50"));
    QCOMPARE(runProcess(ember::test::builtProgram("ember-cli"), {"generate", "--server", base_, "--api-key", "k-cli",
                                         "--model", "good", "--prompt", "hi", "--json"},
                        &out, &err),
             0);
    const auto j = nlohmann::json::parse(out.split('\n').at(1).toStdString());
    QCOMPARE(j["text"].get<std::string>(), std::string("Hello there! \u00e9t\u00e9"));
    QCOMPARE(j["prompt_tokens"].get<int>(), 11);
    QCOMPARE(j["cached_prompt_tokens"].get<int>(), 3);
    QCOMPARE(j["finish_reason"].get<std::string>(), std::string("stop"));
    QVERIFY(j["backend"].get<std::string>().starts_with("remote: 127.0.0.1:"));
  }

  void errorsAreOneClearLine() {
    QByteArray out, err;
    QCOMPARE(runProcess(ember::test::builtProgram("ember-cli"), {"generate", "--server", base_, "--api-key", "wrong",
                                         "--model", "good", "--prompt", "hi"},
                        &out, &err),
             1);
    QVERIFY2(err.contains("refused the API key (HTTP 401"), err.constData());
    QCOMPARE(runProcess(ember::test::builtProgram("ember-cli"), {"generate", "--server", base_, "--api-key", "k-cli",
                                         "--model", "cut", "--prompt", "hi"},
                        &out, &err),
             1);
    QCOMPARE(out, QByteArray("partial\n"));  // what arrived is kept
    QVERIFY(err.contains("cut the stream"));
    QCOMPARE(runProcess(ember::test::builtProgram("ember-cli"),
                        {"models", "--server", "http://127.0.0.1:" + QString::number(freePort()) +
                                                   "/v1"},
                        &out, &err),
             1);
    QVERIFY2(err.contains("cannot reach"), err.constData());
  }
};

QTEST_GUILESS_MAIN(TestRemoteCli)
#include "test_remote_cli.moc"
