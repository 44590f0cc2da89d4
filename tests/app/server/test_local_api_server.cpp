// The app's Local API server over an EngineHost with the real default model. Reference: the
// same greedy request submitted to the EngineHost directly (the answer through HTTP must be
// equal), and the OpenAI error shape for the 401 (code invalid_api_key). The key is stored by
// ConnectionSecrets: here without a keyring (the 0600 file fallback), and never in the settings.
#include <QCoreApplication>
#include <QDir>
#include <QFile>
#include <QSettings>
#include <QStandardPaths>
#include <QtTest>

#include <httplib.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <condition_variable>
#include <mutex>

#include "common/test_paths.h"
#include "ember/engine_host.h"
#include "server/local_api_server.h"

using namespace ember;
using namespace ember::app;

namespace {

int freePort() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
  socklen_t length = sizeof a;
  getsockname(fd, reinterpret_cast<sockaddr*>(&a), &length);
  close(fd);
  return ntohs(a.sin_port);
}

std::string directAnswer(EngineHost& host, const std::string& question) {
  std::mutex m;
  std::condition_variable cv;
  bool done = false;
  std::string text;
  GenerationRequest r;
  r.messages = nlohmann::ordered_json::array({{{"role", "user"}, {"content", question}}});
  r.sampling.temperature = 0;
  r.sampling.maxTokens = 12;
  host.submit(std::move(r), [&](const RequestEvent& e) {
    std::lock_guard lock(m);
    if (e.kind == RequestEvent::Kind::Text) text += e.text;
    if (e.kind == RequestEvent::Kind::Finished) done = true;
    cv.notify_all();
  });
  std::unique_lock lock(m);
  cv.wait(lock, [&] { return done; });
  return text;
}

}  // namespace

class LocalApiServerTest : public QObject {
  Q_OBJECT
 private slots:
  void initTestCase() {
    // Settings, usage database and log go under the build folder (ctest runs tests there).
    const QString root = QDir::current().absoluteFilePath(QStringLiteral("test_local_api_server.d"));
    qputenv("XDG_CONFIG_HOME", QDir(root).filePath(QStringLiteral("config")).toUtf8());
    qputenv("XDG_DATA_HOME", QDir(root).filePath(QStringLiteral("data")).toUtf8());
    QCoreApplication::setApplicationName(QStringLiteral("ember-test-local-api"));
  }

  void servesTheAppsEngineBehindItsKey() {
    EMBER_REQUIRE_MODEL(path, "SmolLM2-135M-Instruct.Q4_1.gguf");
    EngineHost host;
    EngineOptions o;
    o.modelPath = path.toStdString();
    o.threads = 2;
    o.contextLength = 512;
    host.load(o);
    const std::string reference = directAnswer(host, "Name three colors.");

    LocalApiServer server(&host, nullptr, /*useKeyring=*/false);
    server.setEnabled(false);
    QVERIFY(server.available());
    QVERIFY(server.address().isEmpty());
    const int port = freePort();
    server.setPort(port);
    server.setApiKey(QStringLiteral("sk-test-key"));
    server.setEnabled(true);
    QVERIFY2(server.error().isEmpty(), qPrintable(server.error()));
    QCOMPARE(server.address(), QStringLiteral("http://127.0.0.1:%1/v1").arg(port));

    httplib::Client client("127.0.0.1", port);
    client.set_read_timeout(120, 0);
    auto unauthorized = client.Get("/v1/models");
    QVERIFY(unauthorized);
    QCOMPARE(unauthorized->status, 401);
    QCOMPARE(nlohmann::json::parse(unauthorized->body)["error"]["code"].get<std::string>(),
             std::string("invalid_api_key"));

    const httplib::Headers auth{{"Authorization", "Bearer sk-test-key"}};
    auto models = client.Get("/v1/models", auth);
    QVERIFY(models);
    QCOMPARE(models->status, 200);
    QCOMPARE(nlohmann::json::parse(models->body)["data"][0]["id"].get<std::string>(),
             std::string("SmolLM2-135M-Instruct.Q4_1"));

    const std::string body = R"({"model": "SmolLM2-135M-Instruct.Q4_1", "temperature": 0,
      "max_tokens": 12, "messages": [{"role": "user", "content": "Name three colors."}]})";
    auto answer = client.Post("/v1/chat/completions", auth, body, "application/json");
    QVERIFY(answer);
    QCOMPARE(answer->status, 200);
    const auto parsed = nlohmann::json::parse(answer->body);
    QCOMPARE(parsed["choices"][0]["message"]["content"].get<std::string>(), reference);
    // The chat's prompt was computed by the direct request: the API's reuses it.
    QVERIFY(parsed["usage"]["prompt_tokens_details"]["cached_tokens"].get<int>() > 0);

    server.setEnabled(false);
    QVERIFY(server.address().isEmpty());
    httplib::Client after("127.0.0.1", port);
    QVERIFY(!after.Get("/health"));  // nothing listens any more
  }

  // Switching the server on and off at once, again and again: cpp-httplib's stop() is a no-op
  // until its accept loop runs, so a stop that came first left the listening thread in accept()
  // and the switch-off never returned (seen as a hang here; the test then fails on Qt Test's
  // function timeout). Each round must also leave the port free for the next.
  void switchedOffRightAfterSwitchingOn() {
    EMBER_REQUIRE_MODEL(path, "SmolLM2-135M-Instruct.Q4_1.gguf");
    EngineHost host;
    EngineOptions o;
    o.modelPath = path.toStdString();
    o.threads = 2;
    o.contextLength = 256;
    host.load(o);
    LocalApiServer server(&host, nullptr, /*useKeyring=*/false);
    server.setEnabled(false);
    server.setPort(freePort());
    server.setApiKey(QStringLiteral("sk-test-key"));
    for (int round = 0; round < 300; ++round) {
      server.setEnabled(true);
      QVERIFY2(server.error().isEmpty(), qPrintable(server.error()));
      QVERIFY(!server.address().isEmpty());
      server.setEnabled(false);
      QVERIFY(server.address().isEmpty());
    }
  }

  // The key is kept out of the settings file (in the key file here, no keyring), a key an
  // earlier version left in the settings is moved out, and a restarted app serves with it.
  void keyLivesOutsideTheSettings() {
    EMBER_REQUIRE_MODEL(path, "SmolLM2-135M-Instruct.Q4_1.gguf");
    EngineHost host;
    EngineOptions o;
    o.modelPath = path.toStdString();
    o.threads = 2;
    o.contextLength = 256;
    host.load(o);
    const int port = freePort();
    {
      QSettings legacy;
      legacy.setValue(QStringLiteral("localApiServer/apiKey"), QStringLiteral("sk-old-settings-key"));
      legacy.setValue(QStringLiteral("localApiServer/port"), port);
      legacy.setValue(QStringLiteral("localApiServer/enabled"), true);
    }
    {
      LocalApiServer server(&host, nullptr, /*useKeyring=*/false);
      QVERIFY(server.keyLoaded());
      QCOMPARE(server.apiKey(), QStringLiteral("sk-old-settings-key"));
      QVERIFY2(server.error().isEmpty(), qPrintable(server.error()));
      QVERIFY(!server.keyStorageText().isEmpty());  // the page says where the key is
    }
    QSettings settings;
    settings.sync();
    QVERIFY(!settings.contains(QStringLiteral("localApiServer/apiKey")));
    QFile ini(settings.fileName());
    QVERIFY(ini.open(QIODevice::ReadOnly));
    QVERIFY(!ini.readAll().contains("sk-old-settings-key"));
    const QString keyFile = QStandardPaths::writableLocation(QStandardPaths::AppDataLocation) +
                            QStringLiteral("/keys/local-api-server.key");
    QVERIFY(QFile::exists(keyFile));
    QCOMPARE(QFile(keyFile).permissions() & (QFileDevice::ReadGroup | QFileDevice::ReadOther),
             QFileDevice::Permissions());

    // A restart: the key comes back from its store and the server is on behind it.
    LocalApiServer again(&host, nullptr, /*useKeyring=*/false);
    QCOMPARE(again.apiKey(), QStringLiteral("sk-old-settings-key"));
    QVERIFY(again.enabled());
    httplib::Client client("127.0.0.1", port);
    auto refused = client.Get("/v1/models");
    QVERIFY(refused);
    QCOMPARE(refused->status, 401);
    auto allowed = client.Get("/v1/models", {{"Authorization", "Bearer sk-old-settings-key"}});
    QVERIFY(allowed);
    QCOMPARE(allowed->status, 200);
    again.setApiKey(QString());  // no key: the file goes too
    QVERIFY(!QFile::exists(keyFile));
    again.setEnabled(false);
  }
};

QTEST_GUILESS_MAIN(LocalApiServerTest)
#include "test_local_api_server.moc"
