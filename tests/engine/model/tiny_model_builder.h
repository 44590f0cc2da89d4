#pragma once
// Builds tiny GGUF model files in memory (F32 tensors, zero-filled) for configuration tests:
// the metadata keys and tensor names and shapes llama.cpp's converter writes for each
// architecture, with switches to drop a key or a tensor or to change a shape.
#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "gguf/gguf_file.h"
#include "gguf/gguf_writer.h"

namespace ember::test {

struct TinyModelSpec {
  std::string architecture = "llama";
  int layers = 2, embd = 8, ff = 16, heads = 2, kvHeads = 1, vocab = 10, context = 64;
  std::set<std::string> dropKeys;     // full key names to leave out
  std::set<std::string> dropTensors;  // tensor names to leave out
  std::map<std::string, std::vector<uint64_t>> shapeOverrides;
  std::map<std::string, gguf::Value> extraKeys;  // added or replacing defaults
  bool separateOutput = false;                   // write output.weight (else tied to token_embd)
};

inline std::unique_ptr<gguf::GgufFile> buildTinyModel(const TinyModelSpec& spec,
                                                      const std::string& name = "tiny-model.gguf") {
  using gguf::Value;
  const std::string a = spec.architecture;
  std::vector<std::pair<std::string, Value>> keys = {
      {"general.architecture", Value::makeString(a)},
      {a + ".block_count", Value::makeUInt32(uint32_t(spec.layers))},
      {a + ".context_length", Value::makeUInt32(uint32_t(spec.context))},
      {a + ".embedding_length", Value::makeUInt32(uint32_t(spec.embd))},
      {a + ".feed_forward_length", Value::makeUInt32(uint32_t(spec.ff))},
      {a + ".attention.head_count", Value::makeUInt32(uint32_t(spec.heads))},
      {a + ".attention.head_count_kv", Value::makeUInt32(uint32_t(spec.kvHeads))},
      {a + ".attention.layer_norm_rms_epsilon", Value::makeFloat32(1e-5f)},
      {a + ".rope.freq_base", Value::makeFloat32(10000.0f)},
  };
  gguf::GgufWriter w;
  for (auto& [key, value] : keys) {
    if (spec.dropKeys.count(key)) continue;
    auto extra = spec.extraKeys.find(key);
    w.add(key, extra != spec.extraKeys.end() ? extra->second : value);
  }
  for (const auto& [key, value] : spec.extraKeys)
    if (std::none_of(keys.begin(), keys.end(), [&](auto& kv) { return kv.first == key; }))
      w.add(key, value);

  const uint64_t embd = uint64_t(spec.embd), ff = uint64_t(spec.ff);
  const uint64_t headDim = embd / uint64_t(spec.heads);
  const uint64_t kvDim = headDim * uint64_t(spec.kvHeads);
  const auto tensor = [&](const std::string& tensorName, std::vector<uint64_t> shape) {
    if (spec.dropTensors.count(tensorName)) return;
    if (auto o = spec.shapeOverrides.find(tensorName); o != spec.shapeOverrides.end())
      shape = o->second;
    uint64_t count = 1;
    for (uint64_t d : shape) count *= d;
    const std::vector<uint8_t> zeros(count * sizeof(float), 0);
    w.addTensor(tensorName, gguf::GgmlType::F32, shape, zeros);
  };
  tensor("token_embd.weight", {embd, uint64_t(spec.vocab)});
  tensor("output_norm.weight", {embd});
  if (spec.separateOutput) tensor("output.weight", {embd, uint64_t(spec.vocab)});
  for (int il = 0; il < spec.layers; ++il) {
    const std::string p = "blk." + std::to_string(il) + ".";
    tensor(p + "attn_norm.weight", {embd});
    tensor(p + "attn_q.weight", {embd, embd});
    tensor(p + "attn_k.weight", {embd, kvDim});
    tensor(p + "attn_v.weight", {embd, kvDim});
    tensor(p + "attn_output.weight", {embd, embd});
    tensor(p + "ffn_norm.weight", {embd});
    tensor(p + "ffn_gate.weight", {embd, ff});
    tensor(p + "ffn_up.weight", {embd, ff});
    tensor(p + "ffn_down.weight", {ff, embd});
    if (a == "qwen2") {
      tensor(p + "attn_q.bias", {embd});
      tensor(p + "attn_k.bias", {kvDim});
      tensor(p + "attn_v.bias", {kvDim});
    }
    if (a == "gemma3") {
      tensor(p + "attn_q_norm.weight", {headDim});
      tensor(p + "attn_k_norm.weight", {headDim});
      tensor(p + "post_attention_norm.weight", {embd});
      tensor(p + "post_ffw_norm.weight", {embd});
    }
  }
  return gguf::GgufFile::fromBuffer(w.bytes(), name);
}

}  // namespace ember::test
