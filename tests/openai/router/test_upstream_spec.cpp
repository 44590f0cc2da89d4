// `--upstream NAME=URL[,KEY-FILE]`: the accepted forms and the errors for the rest (hand-made
// cases), the key read from its file without its newline.
#include <QTemporaryDir>
#include <QtTest>

#include "ember/error.h"
#include "router/upstream_metrics.h"
#include "router/upstream_spec.h"

using namespace ember;
using namespace ember::openai;

class TestUpstreamSpec : public QObject {
  Q_OBJECT
 private slots:
  void parses() {
    const UpstreamSpec a = parseUpstreamSpec("gpu1=http://10.0.0.5:8000/v1");
    QCOMPARE(a.name, std::string("gpu1"));
    QCOMPARE(a.baseUrl, std::string("http://10.0.0.5:8000/v1"));
    QVERIFY(a.keyFile.empty());
    const UpstreamSpec b = parseUpstreamSpec("team.vllm=https://llm.example/v1,/etc/ember/key");
    QCOMPARE(b.baseUrl, std::string("https://llm.example/v1"));
    QCOMPARE(b.keyFile, std::string("/etc/ember/key"));
  }
  void rejects_data() {
    QTest::addColumn<QString>("text");
    QTest::addColumn<QString>("why");
    QTest::newRow("no name") << "http://h/v1" << "no NAME=";
    QTest::newRow("empty name") << "=http://h/v1" << "no NAME=";
    QTest::newRow("bad name") << "a b=http://h/v1" << "letters, digits";
    QTest::newRow("no scheme") << "a=h:8000/v1" << "must start with http://";
    QTest::newRow("empty key file") << "a=http://h/v1," << "nothing after the comma";
  }
  void rejects() {
    QFETCH(QString, text);
    QFETCH(QString, why);
    try {
      parseUpstreamSpec(text.toStdString());
      QFAIL("accepted");
    } catch (const Error& e) {
      QVERIFY2(std::string(e.what()).find(why.toStdString()) != std::string::npos, e.what());
    }
  }
  void readsTheKeyFile() {
    QTemporaryDir dir;
    const QString path = dir.filePath("key");
    QFile f(path);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write("sk-abc\n");
    f.close();
    const auto o = remoteOptionsFor(parseUpstreamSpec("a=http://h/v1," + path.toStdString()));
    QCOMPARE(o.apiKey, std::string("sk-abc"));
    QCOMPARE(o.name, std::string("a"));
    QVERIFY_THROWS_EXCEPTION(Error, remoteOptionsFor(parseUpstreamSpec("a=http://h/v1,/nonexistent/k")));
  }

  // The exposition format's rules (prometheus.io, "Exposition formats"): HELP and TYPE lines,
  // label values with \\, \" and \n escaped.
  void metricsText() {
    UpstreamCounters a;
    a.name = "gpu\"1";
    a.healthy = true;
    a.routed = 12;
    a.cachedPromptTokens = 1584;
    const std::string text = renderUpstreamMetrics({a});
    QVERIFY(text.find("# TYPE ember_upstream_requests_total counter\n") != std::string::npos);
    QVERIFY(text.find("ember_upstream_requests_total{upstream=\"gpu\\\"1\"} 12\n") !=
            std::string::npos);
    QVERIFY(text.find("ember_upstream_healthy{upstream=\"gpu\\\"1\"} 1\n") != std::string::npos);
    QVERIFY(text.find("ember_upstream_cached_prompt_tokens_total{upstream=\"gpu\\\"1\"} 1584\n") !=
            std::string::npos);
  }
};

QTEST_APPLESS_MAIN(TestUpstreamSpec)
#include "test_upstream_spec.moc"
