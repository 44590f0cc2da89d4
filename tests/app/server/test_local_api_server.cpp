// The app's Local API server over an EngineHost with the real default model. Reference: the
// same greedy request submitted to the EngineHost directly (the answer through HTTP must be
// equal), and the OpenAI error shape for the 401 (code invalid_api_key).
#include <QCoreApplication>
#include <QDir>
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

    LocalApiServer server(&host);
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
};

QTEST_GUILESS_MAIN(LocalApiServerTest)
#include "test_local_api_server.moc"
