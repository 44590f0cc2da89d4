// ember-cli cut-model --model IN.gguf --layers N --out OUT.gguf
// Writes a copy of a model with only its first N transformer blocks (model/model_cutter.h): a
// real model small enough to travel where the whole file cannot (tests on a lent GPU machine).
#include <charconv>
#include <cstdio>
#include <filesystem>

#include "cli_args.h"
#include "ember/error.h"
#include "gguf/gguf_file.h"
#include "model/model_cutter.h"

namespace ember::cli {

int runCutModel(const Args& raw) {
  const ParsedArgs args(raw, {"--model", "--layers", "--out"}, {});
  const std::string modelPath = args.required("--model");
  const std::string layersText = args.required("--layers");
  const std::filesystem::path out = args.required("--out");
  int32_t layers = 0;
  const auto [ptr, ec] =
      std::from_chars(layersText.data(), layersText.data() + layersText.size(), layers);
  if (ec != std::errc() || ptr != layersText.data() + layersText.size() || layers < 1)
    throw Error("option --layers: '" + layersText + "' is not a positive whole number");
  const auto source = gguf::GgufFile::open(modelPath);
  const model::CutSummary s = model::cutModelLayers(*source, layers, out);
  std::printf("wrote %s: %d of %d layers, %zu tensors (%zu left out), %.1f MiB\n",
              out.string().c_str(), s.keptLayers, s.sourceLayers, s.keptTensors,
              s.droppedTensors, double(s.fileBytes) / (1024.0 * 1024.0));
  return 0;
}

}  // namespace ember::cli
