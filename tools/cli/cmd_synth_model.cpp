// ember-cli synth-model --shape llama3-8b|smollm2-135m --type q4_0|q8_0|f16 [--layers N]
//                       --out FILE [--seed S] [--threads N]
// Writes a GGUF with random weights in a real architecture's shapes (see model/synthetic_model.h)
// for speed checks where the real model cannot travel.
#include <charconv>
#include <chrono>
#include <cstdio>
#include <filesystem>

#include "cli_args.h"
#include "ember/error.h"
#include "model/synthetic_model.h"

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

int runSynthModel(const Args& raw) {
  const ParsedArgs args(raw, {"--shape", "--type", "--layers", "--out", "--seed", "--threads"}, {});
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
