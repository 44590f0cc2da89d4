// ember-cli: dispatches to the subcommands in commands.h.
#include <cstdio>
#include <algorithm>
#include <exception>
#include <string>
#include <string_view>

#include "commands.h"
#include "ember/version.h"

namespace {

constexpr const char* kUsage =
    "usage: ember-cli <command> [options]      ember-cli <command> --help      ember-cli --version\n"
    "  inspect FILE.gguf [--json]\n"
    "  tokenize --vocab FILE.gguf (--text S | --text-file F) [--special] [--add-bos]\n"
    "  detokenize --vocab FILE.gguf --ids \"1 2 3\" [--special]\n"
    "  tokenize-bench --vocab FILE.gguf --text-file F [--repetitions R] [--special]\n"
    "  render-template (--template FILE.jinja | --model FILE.gguf) --messages FILE.json\n"
    "                  [--add-generation-prompt] [--bos S] [--eos S]\n"
    "  generate --model M (--prompt S | --messages F.json) [--max-tokens N] [--temperature T]\n"
    "           [--top-p P] [--top-k K] [--min-p P] [--repeat-penalty R] [--seed S]\n"
    "           [--stop S] [--threads N] [--ctx N] [--kernels fast|reference|approx] [--json]\n"
    "  generate --server URL [--api-key K | --api-key-file F] --model NAME (--prompt S |\n"
    "           --messages F.json) [sampling options] [--json]   (URL: http://host:8000/v1)\n"
    "  models --server URL [--api-key K | --api-key-file F] [--json]\n"
    "  chat --model M [--system S] [sampling options as for generate]\n"
    "  logits --model M --tokens \"ids\" [--top K] [--json]\n"
    "  plan --model M [--context N] [--sequences S] [--available-bytes B]\n"
    "       [--backend auto|cpu|cuda] [--json]\n"
    "  synth-model --shape llama3-8b|smollm2-135m --type q4_0|q8_0|f16 [--layers N]\n"
    "              --out FILE [--seed S] [--threads N]\n"
    "  synth-model --arch llama|mistral3|qwen2|qwen3|qwen3moe|gpt-oss|gemma2|gemma3|granite|\n"
    "              olmo2|phi3|smollm3\n"
    "              --preset tiny|tiny-yarn|tiny-longrope|tiny-ffn-bias|tiny-mxfp4 --out FILE\n"
    "              [--vocab VOCAB.gguf] [--seed S]\n"
    "  cut-model --model IN.gguf --layers N --out OUT.gguf\n"
    "  export --db ember.sqlite [--conversation ID] [--format md|json] [--out FILE]\n"
    "  import --db ember.sqlite --file EXPORT.json\n";

// The usage lines of one command (its first line and the continuation lines under it).
std::string commandUsage(std::string_view command) {
  const std::string_view all(kUsage);
  std::string out;
  bool inside = false;
  size_t at = 0;
  while (at < all.size()) {
    const size_t end = std::min(all.find('\n', at), all.size());
    const std::string_view line = all.substr(at, end - at);
    at = end + 1;
    const bool continuation = line.rfind("    ", 0) == 0;
    if (!continuation) inside = line.rfind("  " + std::string(command) + " ", 0) == 0 ||
                                line == "  " + std::string(command);
    if (inside) out += std::string(line) + "\n";
  }
  return out.empty() ? std::string() : "usage: ember-cli\n" + out;
}

bool asksForHelp(const ember::cli::Args& args) {
  for (const auto& a : args)
    if (a == "--help" || a == "-h") return true;
  return false;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fputs(kUsage, stderr);
    return 2;
  }
  const std::string_view command = argv[1];
  const ember::cli::Args args(argv + 2, argv + argc);
  if (command == "--version" || command == "-V") {
    std::puts(EMBER_VERSION_LINE("ember-cli"));
    return 0;
  }
  if (asksForHelp(args)) {
    const std::string usage = commandUsage(command);
    if (!usage.empty()) {
      std::fputs(usage.c_str(), stdout);
      return 0;
    }
  }
  try {
    if (command == "inspect") return ember::cli::runInspect(args);
    if (command == "tokenize") return ember::cli::runTokenize(args);
    if (command == "detokenize") return ember::cli::runDetokenize(args);
    if (command == "tokenize-bench") return ember::cli::runTokenizeBench(args);
    if (command == "render-template") return ember::cli::runRenderTemplate(args);
    if (command == "generate") return ember::cli::runGenerate(args);
    if (command == "chat") return ember::cli::runChat(args);
    if (command == "logits") return ember::cli::runLogits(args);
    if (command == "plan") return ember::cli::runPlan(args);
    if (command == "synth-model") return ember::cli::runSynthModel(args);
    if (command == "cut-model") return ember::cli::runCutModel(args);
    if (command == "export") return ember::cli::runExport(args);
    if (command == "import") return ember::cli::runImport(args);
    if (command == "models") return ember::cli::runModels(args);
    if (command == "--help" || command == "-h" || command == "help") {
      std::fputs(kUsage, stdout);
      return 0;
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ember-cli %s: error: %s\n", argv[1], e.what());
    return 1;
  }
  std::fprintf(stderr, "ember-cli: unknown command '%s'\n%s", argv[1], kUsage);
  return 2;
}
