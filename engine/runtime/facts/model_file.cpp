#include "ember/model_file.h"

#include <map>
#include <memory>

#include "gguf/gguf_file.h"
#include "model/memory_plan.h"
#include "model/model_config.h"

namespace ember {

const ModelTensor* ModelFile::findTensor(const std::string& name) const {
  for (const ModelTensor& t : tensors)
    if (t.name == name) return &t;
  return nullptr;
}

ModelFile inspectModelFile(const std::string& path) {
  const auto file = gguf::GgufFile::open(path);
  ModelFile facts;
  facts.path = path;
  facts.fileBytes = file->fileSize();
  facts.architecture = file->architecture();
  facts.trainedContext = file->findInt(facts.architecture + ".context_length").value_or(0);
  std::map<std::string, uint64_t> bytesByType;
  for (const gguf::TensorInfo& t : file->tensors()) {
    ModelTensor tensor;
    tensor.name = t.name;
    tensor.type = std::string(ggmlTypeName(t.type));
    tensor.shape = t.shape;
    tensor.elements = t.elementCount;
    tensor.bytes = t.byteSize;
    facts.parameterCount += t.elementCount;
    bytesByType[tensor.type] += t.byteSize;
    facts.tensors.push_back(std::move(tensor));
  }
  uint64_t most = 0;
  for (const auto& [type, bytes] : bytesByType)
    if (bytes > most) {
      most = bytes;
      facts.mainType = type;
    }
  facts.weightBytes = model::weightBytes(*file);
  try {
    const auto config = std::make_shared<const model::ModelConfig>(model::readModelConfig(*file));
    facts.description = config->describe();
    facts.configContext = config->contextLength;
    facts.kvBytesPerToken = model::kvBytesPerToken(*config);
    facts.workspaceBytes = [config](int32_t stepTokens, int32_t sequences) {
      return model::estimateWorkspaceBytes(*config, stepTokens, sequences);
    };
  } catch (const std::exception& e) {  // the engine would refuse it the same way at load
    facts.configError = e.what();
    if (facts.configError.empty()) facts.configError = "the model cannot be configured";
  }
  return facts;
}

}  // namespace ember
