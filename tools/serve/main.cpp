// ember-serve: the OpenAI-compatible local API server on Ember's engine.
//   ember-serve --model M [--host 127.0.0.1] [--port 8080] [--api-key K | --api-key-file F]
//               [--parallel N] [--queue N] [--context N] [--threads N] [--rpm N] [--tpm N]
//               [--allow-origin O] [--allow-host H] [--usage-db F] [--log-file F]
//               [--max-body-bytes N] [--request-timeout S] [--log-prompts]
//   ember-serve usage [--usage-db F] [--json] [--price-prompt P --price-completion P]
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <thread>

#include "cli/cli_args.h"
#include "ember/engine_host.h"
#include "ember/error.h"
#include "serve/serve_usage.h"
#include "server/api_server.h"

using namespace ember;

namespace {

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
       "--log-file", "--max-body-bytes", "--request-timeout", "--backend"},
      {"--log-prompts"});
  EngineOptions engine;
  engine.modelPath = args.required("--model");
  engine.maxSequences = int32_t(integerOption(args, "--parallel", 4, 1, 256));
  engine.contextLength = int32_t(integerOption(args, "--context", 0, 0, 1 << 20));
  engine.threads = int(integerOption(args, "--threads", 0, 0, 1024));
  engine.backend = args.value("--backend").value_or("auto");

  openai::ServerOptions options;
  options.host = args.value("--host").value_or("127.0.0.1");
  options.port = int(integerOption(args, "--port", 8080, 0, 65535));
  options.apiKeys = keysFrom(args);
  options.runningSlots = engine.maxSequences;
  options.queueLimit = int(integerOption(args, "--queue", 64, 0, 4096));
  options.requestsPerMinute = double(integerOption(args, "--rpm", 0, 0, 1000000000));
  options.tokensPerMinute = double(integerOption(args, "--tpm", 0, 0, 1000000000000LL));
  if (auto o = args.value("--allow-origin")) options.allowedOrigins.push_back(*o);
  if (auto h = args.value("--allow-host")) options.allowedHosts.push_back(*h);
  options.maxBodyBytes = size_t(integerOption(args, "--max-body-bytes", 8 << 20, 1024, 1LL << 32));
  options.requestTimeoutSeconds = int(integerOption(args, "--request-timeout", 30, 0, 3600));
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
  openai::ApiServer server(host, options);
  server.start();  // /health answers 503 while the model loads
  std::fprintf(stderr, "ember-serve: %s (loading %s)\n", server.address().c_str(),
               engine.modelPath.c_str());
  std::thread loader([&] {
    try {
      const ModelInfo info = host.load(engine);
      std::fprintf(stderr, "ember-serve: ready: %s, %s, context %d, %d slots\n",
                   info.architecture.c_str(), info.backendName.c_str(), info.contextLength,
                   engine.maxSequences);
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
  return host.status().state == GeneratorStatus::State::Failed ? 1 : 0;
}

}  // namespace

int main(int argc, char** argv) {
  const cli::Args args(argv + 1, argv + argc);
  try {
    if (!args.empty() && args[0] == "usage")
      return serve::printUsage(cli::Args(args.begin() + 1, args.end()), dataDir());
    return runServer(args);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ember-serve: error: %s\n", e.what());
    return 2;
  }
}
