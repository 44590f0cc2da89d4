// ember-serve: the OpenAI-compatible API server on Ember's engine, and a gateway in front of
// other OpenAI-compatible servers (--upstream); see kHelp below.
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <thread>

#include "cli/cli_args.h"
#include "ember/engine_host.h"
#include "ember/error.h"
#include "router/upstream_metrics.h"
#include "router/upstream_spec.h"
#include "serve/serve_usage.h"
#include "server/api_server.h"

using namespace ember;

namespace {

constexpr const char* kHelp = R"(usage: ember-serve [--model M] [--upstream NAME=URL[,KEY-FILE]]... [options]
       ember-serve usage [--usage-db F] [--json] [--price-prompt P --price-completion P]

An OpenAI-compatible API server (/v1/chat/completions, /v1/completions, /v1/models, /health,
/metrics) on a local GGUF model, on other OpenAI-compatible servers, or both.

Models (at least one of the two):
  --model M               a GGUF file served by Ember's engine ("local" upstream)
  --upstream NAME=URL[,KEY-FILE]
                          another server, repeatable: URL is its OpenAI base URL as clients
                          write it (http://10.0.0.5:8000/v1), KEY-FILE a file holding its API
                          key. Requests are routed by their model to the local engine or to the
                          upstreams serving it, to the least busy one, keeping a conversation on
                          the upstream that served its earlier turns (its prefix cache holds
                          them); /v1/models lists the local model and every healthy upstream's.
  --health-interval MS    upstream health checks (/health, else /v1/models) every MS ms
                          (default 2000); an upstream is ejected after 3 failed checks or
                          refused requests in a row and re-admitted after 2 good checks
  --no-affinity           route every request to the least busy upstream (no conversation
                          affinity)

Server:
  --host H                address to listen on (default 127.0.0.1; others need a key)
  --port N                port (default 8080; 0: any free port)
  --api-key K | --api-key-file F
                          keys clients must send (file: one a line; else EMBER_API_KEY)
  --parallel N            requests the local engine computes at once (default 4); the gateway
                          admits N per upstream beside the queue
  --queue N               admitted requests waiting beyond the running ones (default 64)
  --context N             context length of the local model (default: the model's)
  --threads N             CPU threads (default: all cores)
  --backend B             auto | cpu | cuda (default auto)
  --rpm N, --tpm N        per-key requests / tokens per minute (default: no limit)
  --allow-origin O        a CORS origin allowed to call the API ("*": any)
  --allow-host H          a Host name accepted besides the bound address
  --usage-db F            the usage meter (default: the data folder's serve-usage.sqlite)
  --log-file F            the request log (default: stderr)
  --max-body-bytes N      largest request body (default 8 MiB)
  --request-timeout S     the whole request must arrive within S seconds, else 408 (default 30;
                          0: none)
  --write-timeout S       a client that reads nothing of its answer for S seconds is cut off and
                          its request aborted (default 15)
  --log-prompts           the request log holds the request bodies (off by default)
)";

long long integerOption(const cli::ParsedArgs& args, const std::string& name, long long fallback,
                        long long lo, long long hi) {
  const auto v = args.value(name);
  if (!v) return fallback;
  char* end = nullptr;
  errno = 0;
  const long long x = std::strtoll(v->c_str(), &end, 10);
  if (errno || end == v->c_str() || *end || x < lo || x > hi)
    throw Error(name + " must be an integer from " + std::to_string(lo) + " to " +
                std::to_string(hi) + ", got \"" + *v + "\"");
  return x;
}

std::vector<std::string> keysFrom(const cli::ParsedArgs& args) {
  std::vector<std::string> keys;
  if (auto key = args.value("--api-key")) keys.push_back(*key);
  if (auto file = args.value("--api-key-file")) {
    std::ifstream in(*file);
    if (!in) throw Error("cannot read the key file " + *file);
    std::string line;
    while (std::getline(in, line)) {
      while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.pop_back();
      if (!line.empty() && line[0] != '#') keys.push_back(line);
    }
    if (keys.empty()) throw Error("the key file " + *file + " holds no key");
  }
  if (auto env = std::getenv("EMBER_API_KEY"); env && *env && keys.empty()) keys.push_back(env);
  return keys;
}

std::string dataDir() {
  const char* xdg = std::getenv("XDG_DATA_HOME");
  const char* home = std::getenv("HOME");
  std::filesystem::path dir = xdg && *xdg ? std::filesystem::path(xdg)
                              : home      ? std::filesystem::path(home) / ".local/share"
                                          : std::filesystem::temp_directory_path();
  dir /= "ember";
  std::filesystem::create_directories(dir);
  return dir.string();
}

int runServer(const cli::Args& raw) {
  const cli::ParsedArgs args(
      raw,
      {"--model", "--host", "--port", "--api-key", "--api-key-file", "--parallel", "--queue",
       "--context", "--threads", "--rpm", "--tpm", "--allow-origin", "--allow-host", "--usage-db",
       "--log-file", "--max-body-bytes", "--request-timeout", "--backend", "--upstream",
       "--health-interval", "--write-timeout"},
      {"--log-prompts", "--no-affinity"});
  const std::vector<std::string> upstreams = args.values("--upstream");
  const bool local = args.value("--model").has_value();
  if (!local && upstreams.empty())
    throw Error("give a model to serve: --model FILE.gguf, --upstream NAME=URL, or both "
                "(ember-serve --help)");
  EngineOptions engine;
  engine.modelPath = args.value("--model").value_or("");
  engine.maxSequences = int32_t(integerOption(args, "--parallel", 4, 1, 256));
  engine.contextLength = int32_t(integerOption(args, "--context", 0, 0, 1 << 20));
  engine.threads = int(integerOption(args, "--threads", 0, 0, 1024));
  engine.backend = args.value("--backend").value_or("auto");

  openai::ServerOptions options;
  options.host = args.value("--host").value_or("127.0.0.1");
  options.port = int(integerOption(args, "--port", 8080, 0, 65535));
  options.apiKeys = keysFrom(args);
  options.runningSlots = engine.maxSequences * int((local ? 1 : 0) + upstreams.size());
  options.queueLimit = int(integerOption(args, "--queue", 64, 0, 4096));
  options.requestsPerMinute = double(integerOption(args, "--rpm", 0, 0, 1000000000));
  options.tokensPerMinute = double(integerOption(args, "--tpm", 0, 0, 1000000000000LL));
  if (auto o = args.value("--allow-origin")) options.allowedOrigins.push_back(*o);
  if (auto h = args.value("--allow-host")) options.allowedHosts.push_back(*h);
  options.maxBodyBytes = size_t(integerOption(args, "--max-body-bytes", 8 << 20, 1024, 1LL << 32));
  options.requestTimeoutSeconds = int(integerOption(args, "--request-timeout", 30, 0, 3600));
  options.writeTimeoutSeconds = int(integerOption(args, "--write-timeout", 15, 1, 3600));
  options.usageDatabase = args.value("--usage-db").value_or(dataDir() + "/serve-usage.sqlite");
  options.logFile = args.value("--log-file").value_or("");
  options.logPrompts = args.flag("--log-prompts");

  // SIGINT/SIGTERM are taken by sigwait below, on this thread; every other thread blocks them.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  std::signal(SIGPIPE, SIG_IGN);

  EngineHost host;
  openai::RouterOptions routing;
  routing.healthInterval =
      std::chrono::milliseconds(integerOption(args, "--health-interval", 2000, 50, 3600000));
  routing.affinity = !args.flag("--no-affinity");
  // Without upstreams the engine is the server's generator; with them, a router over both.
  std::unique_ptr<openai::Router> router;
  if (!upstreams.empty()) {
    router = openai::routerFor(upstreams, local ? &host : nullptr, routing);
    options.extraMetrics = [&router] { return openai::renderUpstreamMetrics(router->counters()); };
    for (const openai::UpstreamCounters& u : router->counters())
      std::fprintf(stderr, "ember-serve: upstream %s: %s%s\n", u.name.c_str(),
                   u.healthy ? "healthy" : "not answering yet",
                   u.lastError.empty() ? "" : (" (" + u.lastError + ")").c_str());
  }
  Generator& generator = router ? static_cast<Generator&>(*router) : host;
  openai::ApiServer server(generator, options);
  server.start();  // /health answers 503 while the model loads
  std::fprintf(stderr, "ember-serve: %s%s%s\n", server.address().c_str(),
               local ? " (loading " : "", local ? (engine.modelPath + ")").c_str() : "");
  std::thread loader([&] {
    if (!local) return;
    try {
      const ModelInfo info = host.load(engine);
      std::fprintf(stderr, "ember-serve: ready: %s, %s, context %d, %d slots\n",
                   info.architecture.c_str(), info.backendName.c_str(), info.contextLength,
                   engine.maxSequences);
      // Admit the local engine now rather than after the next health checks.
      for (int i = 0; router && i < routing.readmitAfterSuccesses; ++i) router->checkHealthNow();
    } catch (const std::exception& e) {
      std::fprintf(stderr, "ember-serve: cannot load the model: %s\n", e.what());
      kill(getpid(), SIGTERM);
    }
  });
  int received = 0;
  sigwait(&signals, &received);
  std::fprintf(stderr, "ember-serve: stopping (%s)\n", received == SIGINT ? "SIGINT" : "SIGTERM");
  loader.join();
  server.stop();  // open streams end with an error event
  router.reset();  // before the engine host it routes to
  return local && host.status().state == GeneratorStatus::State::Failed ? 1 : 0;
}

}  // namespace

int main(int argc, char** argv) {
  const cli::Args args(argv + 1, argv + argc);
  try {
    if (args.empty() || args[0] == "--help" || args[0] == "-h") {
      std::fputs(kHelp, args.empty() ? stderr : stdout);
      return args.empty() ? 2 : 0;
    }
    if (!args.empty() && args[0] == "usage")
      return serve::printUsage(cli::Args(args.begin() + 1, args.end()), dataDir());
    return runServer(args);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ember-serve: error: %s\n", e.what());
    return 2;
  }
}
