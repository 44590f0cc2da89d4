// ember-cli against a remote OpenAI-compatible server (vLLM, llama.cpp's server, ember-serve):
//   generate --server URL [--api-key K | --api-key-file F] --model NAME (--prompt S | --messages F)
//   models --server URL [--api-key K | --api-key-file F] [--json]
// The answer streams to stdout and the stats line is the same as for a local model; the timings
// are measured here, on the client, with the server's own (llama.cpp's `timings`) in --json.
#include <condition_variable>
#include <cstdio>
#include <mutex>

#include "client/remote_generator.h"
#include "commands.h"
#include "ember/error.h"
#include "engine_options.h"

namespace ember::cli {
namespace {

std::string keyFrom(const ParsedArgs& args) {
  if (auto key = args.value("--api-key")) return *key;
  if (auto file = args.value("--api-key-file")) {
    std::string key = readFile(*file);
    while (!key.empty() && (key.back() == '\n' || key.back() == '\r' || key.back() == ' '))
      key.pop_back();
    return key;
  }
  return {};
}

openai::RemoteServerOptions serverFrom(const ParsedArgs& args) {
  openai::RemoteServerOptions o;
  o.baseUrl = args.required("--server");
  o.apiKey = keyFrom(args);
  return o;
}

}  // namespace

const std::set<std::string>& remoteValueOptions() {
  static const std::set<std::string> options = {"--server", "--api-key", "--api-key-file"};
  return options;
}

int runRemoteGenerate(const ParsedArgs& args, GenerationRequest request) {
  openai::RemoteGenerator remote(serverFrom(args));
  request.model = args.value("--model").value_or("");
  std::mutex mutex;
  std::condition_variable finished;
  std::string answer;
  std::optional<RequestStats> stats;
  remote.submit(std::move(request), [&](const RequestEvent& e) {
    if (e.kind == RequestEvent::Kind::Text) {
      std::fwrite(e.text.data(), 1, e.text.size(), stdout);
      std::fflush(stdout);
      answer += e.text;
    } else if (e.kind == RequestEvent::Kind::Finished) {
      std::lock_guard lock(mutex);
      stats = *e.stats;
      finished.notify_all();
    }
  });
  std::unique_lock lock(mutex);
  finished.wait(lock, [&] { return stats.has_value(); });
  std::fputc('\n', stdout);
  std::fflush(stdout);
  if (args.flag("--json")) {
    auto j = statsJson(*stats);
    j["text"] = answer;
    j["model"] = args.value("--model").value_or("");
    j["backend"] = "remote: " + remote.name();
    if (!stats->serverTimings.is_null()) j["server_timings"] = stats->serverTimings;
    std::printf("%s\n", j.dump().c_str());
  } else {
    std::fprintf(stderr, "%s\n", statsLine(*stats).c_str());
  }
  return stats->finishReason == FinishReason::Error ? 1 : 0;
}

int runModels(const Args& raw) {
  const ParsedArgs args(raw, remoteValueOptions(), {"--json"});
  openai::RemoteGenerator remote(serverFrom(args));
  const auto models = remote.fetchModels();
  if (args.flag("--json")) {
    nlohmann::ordered_json list = nlohmann::ordered_json::array();
    for (const auto& m : models)
      list.push_back({{"id", m.id}, {"owned_by", m.ownedBy}, {"context_length", m.contextLength}});
    std::printf("%s\n", list.dump().c_str());
    return 0;
  }
  for (const auto& m : models) {
    if (m.contextLength > 0)
      std::printf("%s\tcontext %d\n", m.id.c_str(), m.contextLength);
    else
      std::printf("%s\n", m.id.c_str());
  }
  std::fprintf(stderr, "%zu model%s on %s\n", models.size(), models.size() == 1 ? "" : "s",
               remote.name().c_str());
  return 0;
}

}  // namespace ember::cli
