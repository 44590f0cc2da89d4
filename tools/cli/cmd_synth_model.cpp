// ember-cli synth-model --shape llama3-8b|smollm2-135m --type q4_0|q8_0|f16 [--layers N]
//                       --out FILE [--seed S] [--threads N]
// ember-cli synth-model --arch A --preset tiny|tiny-yarn|tiny-longrope|tiny-ffn-bias|tiny-mxfp4
//                       --out FILE [--vocab FILE] [--seed S]
// The first writes a GGUF with random weights in a real model's shapes (model/synthetic_model.h)
// for speed checks where the real model cannot travel; the second a tiny model of architecture A
// with the architecture's real structure and the tokenizer of the vocabulary GGUF --vocab
// (default: tokenizer/ggml-vocab-llama-spm.gguf under $EMBER_TESTDATA), see model/tiny_model.h.
#include <charconv>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include "cli_args.h"
#include "ember/error.h"
#include "model/synthetic_model.h"
#include "model/tiny_model.h"

namespace ember::cli {
namespace {

template <class T>
T wholeNumber(const std::string& name, const std::string& text) {
  T value{};
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || ptr != text.data() + text.size() || value < 0)
    throw Error("option " + name + ": '" + text + "' is not a whole number");
  return value;
}

}  // namespace

namespace {

int writeTiny(const ParsedArgs& args) {
  model::TinyModelSpec spec;
  spec.preset = args.value("--preset").value_or("tiny");
  spec.architecture = args.required("--arch");
  if (auto v = args.value("--vocab")) {
    spec.vocabulary = *v;
  } else if (const char* testdata = std::getenv("EMBER_TESTDATA")) {
    spec.vocabulary = std::filesystem::path(testdata) / "tokenizer" / "ggml-vocab-llama-spm.gguf";
  } else {
    throw Error("synth-model --arch needs --vocab FILE (a GGUF with a tokenizer) or EMBER_TESTDATA");
  }
  if (auto v = args.value("--seed")) spec.seed = wholeNumber<uint64_t>("--seed", *v);
  const std::filesystem::path out = args.required("--out");
  model::writeTinyModel(spec, out);
  std::printf("wrote %s (%.1f MiB): tiny %s, tokenizer of %s\n", out.string().c_str(),
              double(std::filesystem::file_size(out)) / (1024.0 * 1024.0),
              spec.architecture.c_str(), spec.vocabulary.filename().string().c_str());
  return 0;
}

}  // namespace

int runSynthModel(const Args& raw) {
  const ParsedArgs args(raw,
                        {"--shape", "--type", "--layers", "--out", "--seed", "--threads", "--arch",
                         "--preset", "--vocab"},
                        {});
  if (args.value("--arch")) return writeTiny(args);
  model::SyntheticModelSpec spec;
  spec.shape = args.required("--shape");
  spec.type = model::syntheticTypeFromName(args.value("--type").value_or("q4_0"));
  if (auto v = args.value("--layers")) spec.layers = wholeNumber<int32_t>("--layers", *v);
  if (auto v = args.value("--seed")) spec.seed = wholeNumber<uint64_t>("--seed", *v);
  if (auto v = args.value("--threads")) spec.threads = wholeNumber<int>("--threads", *v);
  const std::filesystem::path out = args.required("--out");
  const auto start = std::chrono::steady_clock::now();
  model::writeSyntheticModel(spec, out);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("wrote %s (%.1f MiB) in %.1f s\n", out.string().c_str(),
              double(std::filesystem::file_size(out)) / (1024.0 * 1024.0), seconds);
  return 0;
}

}  // namespace ember::cli
