#pragma once
// Cuts a GGUF model down to its first N transformer blocks: the same metadata and tokenizer,
// <arch>.block_count set to N, the tensors of blocks 0..N-1 (names "blk.<i>.*") and every tensor
// outside the blocks (token_embd, output_norm, output, rope_freqs, ...) copied byte for byte, the
// blocks from N on left out. The result is a smaller model of the same architecture and types,
// for tests that must carry a real model where the whole file does not fit (a lent GPU machine
// receives at most 64 MiB). Its outputs are not the full model's, but any two backends given the
// cut file must agree on it as on the original.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string_view>

namespace ember::gguf {
class GgufFile;
}

namespace ember::model {

struct CutSummary {
  int32_t sourceLayers = 0;
  int32_t keptLayers = 0;
  size_t keptTensors = 0;
  size_t droppedTensors = 0;
  uint64_t fileBytes = 0;  // of the written file
};

// The block index of a tensor name "blk.<i>.<rest>", or nullopt for tensors outside the blocks.
std::optional<int32_t> tensorBlockIndex(std::string_view name);

// Writes the first `layers` blocks of `source` to `out` (streamed: tensors are copied from the
// mapping one at a time). Layer-indexed metadata keeps its meaning because the kept blocks keep
// their indices: gemma3's sliding-window period (every 6th layer global) still falls on the same
// layers, and an <arch>.* array with one entry per layer (a per-layer pattern or head count) is
// truncated to its first `layers` entries. Throws ember::Error when `layers` is not in
// [1, block_count], when a block tensor's index is out of range, when `out` is the source file,
// or when the write fails (naming the file).
CutSummary cutModelLayers(const gguf::GgufFile& source, int32_t layers,
                          const std::filesystem::path& out);

}  // namespace ember::model
