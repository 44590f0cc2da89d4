#pragma once
// Facts about a GGUF model file from its header and tensor table, without loading the weights
// (the file is mapped, not read): what the model picker, ember-cli and the benchmarks' rooflines
// and memory plans need.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace ember {

struct ModelTensor {
  std::string name;
  std::string type;              // "Q4_1", "F32", ...
  std::vector<uint64_t> shape;   // ggml order: shape[0] is the contiguous dimension
  uint64_t elements = 0;
  uint64_t bytes = 0;            // as stored in the file
};

struct ModelFile {
  std::string path;
  uint64_t fileBytes = 0;
  std::string architecture;      // general.architecture, "" when absent
  int64_t trainedContext = 0;    // <arch>.context_length, 0 when absent
  std::vector<ModelTensor> tensors;
  uint64_t parameterCount = 0;   // sum of the tensors' element counts
  uint64_t weightBytes = 0;      // sum of the tensors' bytes (what a backend uploads)
  std::string mainType;          // the tensor type holding most of the bytes, e.g. "Q4_1"

  // The configuration the engine would load it with. When it cannot (an unsupported
  // architecture, a missing key: Engine::load refuses the file the same way), configError says
  // why and the fields below are unset.
  std::string configError;
  std::string description;       // the configuration in one line: layers, dimensions, heads
  int32_t configContext = 0;     // the context the configuration allows
  uint64_t kvBytesPerToken = 0;  // fp16 keys and values of one token over all layers
  // The working memory besides weights and KV cache for steps of `stepTokens` tokens over
  // `sequences` sequences (the estimate the engine's load check uses). Empty without a
  // configuration.
  std::function<uint64_t(int32_t stepTokens, int32_t sequences)> workspaceBytes;

  bool configured() const { return configError.empty() && kvBytesPerToken > 0; }
  const ModelTensor* findTensor(const std::string& name) const;
};

// Throws ember::Error (naming the file, the offset and what was expected) when the file cannot
// be read as GGUF. A file the engine cannot configure is not an error: see configError.
ModelFile inspectModelFile(const std::string& path);

}  // namespace ember
