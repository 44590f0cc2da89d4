// ember-cli: dispatches to the subcommands in commands.h.
#include <cstdio>
#include <exception>
#include <string_view>

#include "commands.h"

namespace {

constexpr const char* kUsage =
    "usage: ember-cli <command> [options]\n"
    "  inspect FILE.gguf [--json]\n"
    "  tokenize --vocab FILE.gguf (--text S | --text-file F) [--special] [--add-bos]\n"
    "  detokenize --vocab FILE.gguf --ids \"1 2 3\" [--special]\n"
    "  render-template (--template FILE.jinja | --model FILE.gguf) --messages FILE.json\n"
    "                  [--add-generation-prompt] [--bos S] [--eos S]\n"
    "  generate --model M (--prompt S | --messages F.json) [--max-tokens N] [--temperature T]\n"
    "           [--top-p P] [--top-k K] [--min-p P] [--repeat-penalty R] [--seed S]\n"
    "           [--stop S] [--threads N] [--ctx N] [--json]\n"
    "  generate --server URL [--api-key K | --api-key-file F] --model NAME (--prompt S |\n"
    "           --messages F.json) [sampling options] [--json]   (URL: http://host:8000/v1)\n"
    "  models --server URL [--api-key K | --api-key-file F] [--json]\n"
    "  chat --model M [--system S] [sampling options as for generate]\n"
    "  logits --model M --tokens \"ids\" [--top K] [--json]\n"
    "  plan --model M [--context N] [--sequences S] [--available-bytes B]\n"
    "       [--backend auto|cpu|cuda] [--json]\n"
    "  synth-model --shape llama3-8b|smollm2-135m --type q4_0|q8_0|f16 [--layers N]\n"
    "              --out FILE [--seed S] [--threads N]\n"
    "  synth-model --arch llama|mistral3|qwen2|qwen3|gemma2|gemma3|granite|olmo2|phi3|smollm3\n"
    "              --preset tiny|tiny-yarn|tiny-longrope --out FILE [--vocab VOCAB.gguf]\n"
    "              [--seed S]\n"
    "  cut-model --model IN.gguf --layers N --out OUT.gguf\n";

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fputs(kUsage, stderr);
    return 2;
  }
  const std::string_view command = argv[1];
  const ember::cli::Args args(argv + 2, argv + argc);
  try {
    if (command == "inspect") return ember::cli::runInspect(args);
    if (command == "tokenize") return ember::cli::runTokenize(args);
    if (command == "detokenize") return ember::cli::runDetokenize(args);
    if (command == "render-template") return ember::cli::runRenderTemplate(args);
    if (command == "generate") return ember::cli::runGenerate(args);
    if (command == "chat") return ember::cli::runChat(args);
    if (command == "logits") return ember::cli::runLogits(args);
    if (command == "plan") return ember::cli::runPlan(args);
    if (command == "synth-model") return ember::cli::runSynthModel(args);
    if (command == "cut-model") return ember::cli::runCutModel(args);
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
