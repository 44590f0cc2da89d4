// ember-cli generate: one answer, streamed to stdout, then its stats.
// ember-cli chat: an interactive conversation in the terminal.
#include <condition_variable>
#include <cstdio>
#include <iostream>
#include <mutex>
#include <string>

#include "commands.h"
#include "ember/engine_host.h"
#include "ember/error.h"
#include "engine_options.h"

namespace ember::cli {
namespace {

// Runs one request to the end on the host's thread, printing text as it comes (the printing
// happens there, in order); returns its stats.
RequestStats runToEnd(EngineHost& host, GenerationRequest request, std::string* answer) {
  std::mutex mutex;
  std::condition_variable done;
  bool finished = false;
  RequestStats stats;
  host.submit(std::move(request), [&](const RequestEvent& e) {
    if (e.kind == RequestEvent::Kind::Text) {
      std::fwrite(e.text.data(), 1, e.text.size(), stdout);
      std::fflush(stdout);
      if (answer) *answer += e.text;
    } else if (e.kind == RequestEvent::Kind::Finished) {
      std::lock_guard lock(mutex);
      stats = *e.stats;
      finished = true;
      done.notify_one();
    }
  });
  std::unique_lock lock(mutex);
  done.wait(lock, [&] { return finished; });
  return stats;
}

void printModelNotes(const ModelInfo& info) {
  if (!info.chatTemplateWarning.empty())
    std::fprintf(stderr, "warning: %s\n", info.chatTemplateWarning.c_str());
}

}  // namespace

int runGenerate(const Args& raw) {
  auto valueOptions = modelValueOptions();
  valueOptions.insert({"--prompt", "--messages"});
  valueOptions.insert(remoteValueOptions().begin(), remoteValueOptions().end());
  const ParsedArgs args(raw, valueOptions, {"--json"});
  GenerationRequest request;
  request.sampling = samplingFrom(args);
  request.reportPromptIds = args.flag("--json");
  if (auto prompt = args.value("--prompt")) {
    request.prompt = *prompt;
  } else if (auto messages = args.value("--messages")) {
    loadMessages(*messages, request);
  } else {
    throw Error("give --prompt TEXT or --messages FILE.json");
  }
  if (args.value("--server")) return runRemoteGenerate(args, std::move(request));
  EngineHost host;
  const ModelInfo info = host.load(engineOptionsFrom(args));
  printModelNotes(info);
  std::string answer;
  const RequestStats stats = runToEnd(host, std::move(request), &answer);
  std::fputc('\n', stdout);
  std::fflush(stdout);
  if (args.flag("--json")) {
    auto j = statsJson(stats);
    j["text"] = answer;
    j["model"] = info.path;
    j["backend"] = info.backendName;
    std::printf("%s\n", j.dump().c_str());
  } else {
    std::fprintf(stderr, "%s\n", statsLine(stats).c_str());
  }
  return stats.finishReason == FinishReason::Error ? 1 : 0;
}

int runChat(const Args& raw) {
  auto valueOptions = modelValueOptions();
  valueOptions.insert("--system");
  const ParsedArgs args(raw, valueOptions, {});
  const SamplingParams sampling = samplingFrom(args);
  EngineHost host;
  const ModelInfo info = host.load(engineOptionsFrom(args));
  printModelNotes(info);
  std::fprintf(stderr, "%s on %s, context %d. Type a message; /reset starts over, /exit or "
               "Ctrl-D quits.\n", info.architecture.c_str(), info.backendName.c_str(),
               info.contextLength);
  nlohmann::ordered_json messages = nlohmann::ordered_json::array();
  if (auto system = args.value("--system"))
    messages.push_back({{"role", "system"}, {"content", *system}});
  const size_t systemCount = messages.size();
  std::string line;
  for (;;) {
    std::fputs("\n> ", stderr);
    if (!std::getline(std::cin, line) || line == "/exit") break;
    if (line == "/reset") {
      messages.erase(messages.begin() + static_cast<ptrdiff_t>(systemCount), messages.end());
      continue;
    }
    if (line.find_first_not_of(" \t") == std::string::npos) continue;
    messages.push_back({{"role", "user"}, {"content", line}});
    GenerationRequest request;
    request.messages = messages;
    request.sampling = sampling;
    std::string answer;
    RequestStats stats;
    try {
      stats = runToEnd(host, std::move(request), &answer);
    } catch (const Error& e) {
      std::fprintf(stderr, "error: %s\n", e.what());
      messages.erase(messages.end() - 1);
      continue;
    }
    messages.push_back({{"role", "assistant"}, {"content", answer}});
    std::fprintf(stderr, "\n%s\n", statsLine(stats).c_str());
  }
  return 0;
}

}  // namespace ember::cli
