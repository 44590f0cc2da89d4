#pragma once
// GGUF files with random weights in a real model's shapes, for speed checks where the real file
// cannot travel (a 7-8B model on a lent GPU machine) and for tests that need a loadable model of
// a given shape. Speed depends on shapes and types, not on values. The weights are small
// (about normal * 0.02) so activations stay finite; the tokenizer is a minimal SentencePiece-style
// vocabulary of the real size (byte tokens, <unk>/<s>/</s> and filler pieces).
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "gguf/ggml_types.h"

namespace ember::model {

// The hyper-parameters of a real architecture (llama family).
struct SyntheticShape {
  std::string name;  // "llama3-8b", "smollm2-135m"
  int32_t layers = 0, embd = 0, ffn = 0, heads = 0, kvHeads = 0, headDim = 0, vocab = 0;
  int32_t context = 0;
  float ropeFreqBase = 10000.0f;
  float rmsNormEps = 1e-5f;
  bool tiedOutput = false;  // no output.weight: the token embedding is the output matrix
};

// The shape of a name listed by syntheticShapeNames(); throws ember::Error for any other name.
SyntheticShape syntheticShape(const std::string& name);
std::vector<std::string> syntheticShapeNames();

struct SyntheticModelSpec {
  std::string shape = "smollm2-135m";
  gguf::GgmlType type = gguf::GgmlType::Q4_0;  // of the matrices; norms are always F32
  int32_t layers = 0;                          // 0: the shape's own layer count
  uint64_t seed = 1;
  float weightScale = 0.02f;  // standard deviation of the random weights
  int threads = 0;            // 0: one per hardware thread
};

// "q4_0" | "q8_0" | "f16" (case-insensitive); throws ember::Error otherwise.
gguf::GgmlType syntheticTypeFromName(const std::string& name);

// Writes the model to `path`, streaming one tensor at a time (an 8B F16 file is 16 GB, too big
// to assemble in memory). The same spec gives the same bytes with any thread count. Throws
// ember::Error on a bad spec or a failed write (naming the file).
void writeSyntheticModel(const SyntheticModelSpec& spec, const std::filesystem::path& path);

// Fills `out` with the random weights of row `row` of tensor number `tensorIndex` (the values
// writeSyntheticModel quantizes), so tests can compare the stored blocks with their source.
void syntheticRowValues(uint64_t seed, uint64_t tensorIndex, uint64_t row, float scale,
                        float* out, int64_t count);

}  // namespace ember::model
