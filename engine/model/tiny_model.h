#pragma once
// Tiny GGUF models of every supported architecture: random F32 weights in the architecture's
// real structure (its tensors, norms, fused projections and metadata keys), a few layers of
// n_embd 64, and a real tokenizer copied from a vocabulary GGUF (9-17 MB with a 32000-piece
// vocabulary, mostly its F32 embedding). They let tests check each architecture against llama.cpp
// logit for logit, and let anyone try an architecture without its multi-GB file. The same spec
// gives the same bytes on every machine.
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace ember::model {

struct TinyModelSpec {
  std::string architecture;          // general.architecture, one of tinyModelArchitectures()
  // "tiny", or a variant with a RoPE scaling: "tiny-yarn" (YaRN, factor 4 over an original
  // context of 64), "tiny-longrope" (LongRoPE short/long factors and attn_factor, as Phi-3.5 and
  // Phi-4-mini files carry); "tiny-ffn-bias": biases on ffn_gate, ffn_up and ffn_down (a valid
  // model for llama, mistral3 and granite, which load them as llama.cpp does; for the other
  // architectures a file the loader refuses, naming the bias); or "tiny-mxfp4" (qwen3moe and
  // gpt-oss: the experts in MXFP4, as the published gpt-oss files store them).
  std::string preset = "tiny";
  std::filesystem::path vocabulary;  // a GGUF whose tokenizer.* metadata is copied
  uint64_t seed = 1;
};

// The architectures writeTinyModel knows (every architecture readModelConfig accepts).
std::vector<std::string> tinyModelArchitectures();

// Writes the model; throws ember::Error for an unknown architecture, a vocabulary file without
// tokenizer.ggml.tokens, or a failed write (naming the file).
void writeTinyModel(const TinyModelSpec& spec, const std::filesystem::path& path);

}  // namespace ember::model
