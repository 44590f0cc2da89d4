// The app's Local API server while the user switches models: streams running on the old model
// must each end with an SSE error event as the last frame (no [DONE] after it: 400 tokens with
// ignore_eos cannot finish in the moment the switch takes), nothing hangs or crashes, the old
// model's name is then unknown and the next request is answered by the new model. References: the OpenAI streaming error shape (a data frame holding
// {"error": {"message", "type"}}, as the server sends any error after the 200 header), the
// EngineHost's documented message for requests cut by a load ("the model was changed"), the
// spec's 404 model_not_found for an unknown model, and the new model's greedy answer to the same
// question submitted to the EngineHost directly.
#include <QCoreApplication>
#include <QDir>
#include <QtTest>

#include <httplib.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "common/test_paths.h"
#include "ember/engine_host.h"
#include "server/local_api_server.h"

using namespace ember;
using namespace ember::app;

namespace {

constexpr auto kKey = "sk-switch-test";

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

EngineOptions optionsFor(const QString& path) {
  EngineOptions o;
  o.modelPath = path.toStdString();
  o.threads = 2;
  o.contextLength = 512;
  o.maxSequences = 4;
  return o;
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

// The `data: ` payloads of an SSE body, in order.
QStringList dataFrames(const std::string& body) {
  QStringList frames;
  for (const QString& event : QString::fromStdString(body).split(QStringLiteral("\n\n"))) {
    const QString line = event.trimmed();
    if (line.startsWith(QStringLiteral("data: "))) frames << line.mid(6);
  }
  return frames;
}

struct StreamClient {
  std::thread thread;
  std::atomic<int> contentFrames{0};
  std::atomic<bool> ended{false};
  std::mutex m;
  std::string body;
  int status = 0;
  bool transportOk = false;

  void start(int port, const std::string& model, const std::string& question) {
    thread = std::thread([this, port, model, question] {
      httplib::Client client("127.0.0.1", port);
      client.set_read_timeout(60, 0);
      httplib::Request req;
      req.method = "POST";
      req.path = "/v1/chat/completions";
      req.headers = {{"Authorization", std::string("Bearer ") + kKey},
                     {"Content-Type", "application/json"}};
      req.body = nlohmann::json{{"model", model},
                                {"stream", true},
                                {"temperature", 0},
                                {"max_tokens", 400},
                                {"ignore_eos", true},
                                {"messages", {{{"role", "user"}, {"content", question}}}}}
                     .dump();
      req.content_receiver = [this](const char* data, size_t size, uint64_t, uint64_t) {
        std::lock_guard lock(m);
        body.append(data, size);
        contentFrames = int(dataFrames(body).size());
        return true;
      };
      httplib::Response res;
      httplib::Error error = httplib::Error::Success;
      transportOk = client.send(req, res, error);
      status = res.status;
      ended = true;
    });
  }
};

}  // namespace

class ServerModelSwitchTest : public QObject {
  Q_OBJECT
 private slots:
  void initTestCase() {
    const QString root = QDir::current().absoluteFilePath(QStringLiteral("test_server_model_switch.d"));
    qputenv("XDG_CONFIG_HOME", QDir(root).filePath(QStringLiteral("config")).toUtf8());
    qputenv("XDG_DATA_HOME", QDir(root).filePath(QStringLiteral("data")).toUtf8());
    QCoreApplication::setApplicationName(QStringLiteral("ember-test-server-switch"));
  }

  void switchWhileStreamingEndsEachStream() {
    EMBER_REQUIRE_MODEL(first, "SmolLM2-135M-Instruct.Q4_1.gguf");
    EMBER_REQUIRE_MODEL(second, "gemma-3-270m-q4_k_m.gguf");
    EngineHost host;
    host.load(optionsFor(first));
    LocalApiServer server(&host, nullptr, /*useKeyring=*/false);
    server.setEnabled(false);
    const int port = freePort();
    server.setPort(port);
    server.setApiKey(QString::fromLatin1(kKey));
    server.setEnabled(true);
    QVERIFY2(server.error().isEmpty(), qPrintable(server.error()));

    // Three streams on the first model, each well into its answer when the model changes.
    std::vector<std::unique_ptr<StreamClient>> streams;
    for (const char* q : {"Count to one hundred.", "Tell a long story.", "List many animals."}) {
      streams.push_back(std::make_unique<StreamClient>());
      streams.back()->start(port, "SmolLM2-135M-Instruct.Q4_1", q);
    }
    QVERIFY(QTest::qWaitFor([&] {
      return std::all_of(streams.begin(), streams.end(),
                         [](const auto& s) { return s->contentFrames >= 3; });
    }, 60000));
    host.load(optionsFor(second));  // what the app's model picker does

    for (auto& s : streams) s->thread.join();  // bounded by the 60 s read timeout
    for (auto& s : streams) {
      QVERIFY(s->transportOk);
      QCOMPARE(s->status, 200);
      const QStringList frames = dataFrames(s->body);
      QVERIFY(frames.size() >= 3);
      const QString last = frames.last();
      // Ended by an error event, which is the last frame (no [DONE] after it).
      const auto error = nlohmann::json::parse(last.toStdString());
      QVERIFY2(error.contains("error"), qPrintable(last));
      const QString message = QString::fromStdString(error["error"]["message"].get<std::string>());
      QVERIFY2(message.contains(QStringLiteral("model was changed")), qPrintable(message));
      QVERIFY(error["error"].contains("type"));
      QVERIFY(!s->body.empty() && !QString::fromStdString(s->body).contains("[DONE]"));
    }

    // The next requests: the old name is unknown, the new model answers as it does alone.
    httplib::Client client("127.0.0.1", port);
    client.set_read_timeout(120, 0);
    const httplib::Headers auth{{"Authorization", std::string("Bearer ") + kKey}};
    const auto body = [](const char* model) {
      return nlohmann::json{{"model", model},
                            {"temperature", 0},
                            {"max_tokens", 12},
                            {"messages", {{{"role", "user"}, {"content", "Name three colors."}}}}}
          .dump();
    };
    auto old = client.Post("/v1/chat/completions", auth, body("SmolLM2-135M-Instruct.Q4_1"),
                           "application/json");
    QVERIFY(old);
    QCOMPARE(old->status, 404);
    QCOMPARE(nlohmann::json::parse(old->body)["error"]["code"].get<std::string>(),
             std::string("model_not_found"));
    const std::string reference = directAnswer(host, "Name three colors.");
    auto answer = client.Post("/v1/chat/completions", auth, body("gemma-3-270m-q4_k_m"),
                              "application/json");
    QVERIFY(answer);
    QCOMPARE(answer->status, 200);
    QCOMPARE(nlohmann::json::parse(answer->body)["choices"][0]["message"]["content"]
                 .get<std::string>(),
             reference);
    server.setEnabled(false);
  }
};

QTEST_GUILESS_MAIN(ServerModelSwitchTest)
#include "test_server_model_switch.moc"
