#pragma once
// The per-architecture part of reading a ModelConfig: what each architecture adds to or changes
// in the common hyper-parameters. Each fact here mirrors llama.cpp's hparams loading and graph
// builders for that architecture (src/llama-model.cpp, src/models/*.cpp), so that our logits
// match llama.cpp's on the same file.
#include "model/metadata_keys.h"
#include "model/model_config.h"

namespace ember::model {

// Fills the architecture-specific fields of `config` (whose common fields are already read).
void applyArchitectureRules(ModelConfig& config, const MetadataKeys& keys);

}  // namespace ember::model
