#include "model/synthetic_model.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <fstream>
#include <thread>

#include "common/checked_math.h"
#include "ember/error.h"
#include "gguf/gguf_encoder.h"
#include "model/synthetic_quantize.h"
#include "model/synthetic_vocabulary.h"

namespace ember::model {
namespace {

using gguf::GgmlType;
using gguf::Value;

constexpr uint64_t kAlignment = 32;  // GGUF's default data alignment (no general.alignment key)

struct PlannedTensor {
  std::string name;
  GgmlType type;
  std::vector<uint64_t> shape;  // ggml order: shape[0] is a row
  bool norm = false;            // F32 ones instead of random values
  uint64_t rowLength() const { return shape[0]; }
  uint64_t rows() const { return shape.size() > 1 ? shape[1] : 1; }
  uint64_t bytes() const { return rows() * rowBytes(type, int64_t(rowLength())); }
};

// The tensors llama.cpp's converter writes for a llama-architecture model, in its order.
std::vector<PlannedTensor> planTensors(const SyntheticShape& s, GgmlType type) {
  const uint64_t embd = uint64_t(s.embd), ffn = uint64_t(s.ffn), vocab = uint64_t(s.vocab);
  const uint64_t qDim = uint64_t(s.heads) * uint64_t(s.headDim);
  const uint64_t kvDim = uint64_t(s.kvHeads) * uint64_t(s.headDim);
  std::vector<PlannedTensor> tensors;
  tensors.push_back({"token_embd.weight", type, {embd, vocab}});
  tensors.push_back({"output_norm.weight", GgmlType::F32, {embd}, true});
  if (!s.tiedOutput) tensors.push_back({"output.weight", type, {embd, vocab}});
  for (int32_t layer = 0; layer < s.layers; ++layer) {
    const std::string p = "blk." + std::to_string(layer) + ".";
    tensors.push_back({p + "attn_norm.weight", GgmlType::F32, {embd}, true});
    tensors.push_back({p + "attn_q.weight", type, {embd, qDim}});
    tensors.push_back({p + "attn_k.weight", type, {embd, kvDim}});
    tensors.push_back({p + "attn_v.weight", type, {embd, kvDim}});
    tensors.push_back({p + "attn_output.weight", type, {qDim, embd}});
    tensors.push_back({p + "ffn_norm.weight", GgmlType::F32, {embd}, true});
    tensors.push_back({p + "ffn_gate.weight", type, {embd, ffn}});
    tensors.push_back({p + "ffn_up.weight", type, {embd, ffn}});
    tensors.push_back({p + "ffn_down.weight", type, {ffn, embd}});
  }
  return tensors;
}

std::vector<std::pair<std::string, Value>> planMetadata(const SyntheticShape& s,
                                                        const SyntheticModelSpec& spec) {
  std::vector<std::pair<std::string, Value>> keys;
  const auto u32 = [&](const std::string& key, int32_t v) {
    keys.emplace_back("llama." + key, Value::makeUInt32(uint32_t(v)));
  };
  keys.emplace_back("general.architecture", Value::makeString("llama"));
  keys.emplace_back("general.name",
                    Value::makeString("synthetic " + s.name + " " +
                                      std::string(gguf::ggmlTypeName(spec.type)) +
                                      " (random weights, seed " + std::to_string(spec.seed) + ")"));
  u32("block_count", s.layers);
  u32("context_length", s.context);
  u32("embedding_length", s.embd);
  u32("feed_forward_length", s.ffn);
  u32("attention.head_count", s.heads);
  u32("attention.head_count_kv", s.kvHeads);
  u32("rope.dimension_count", s.headDim);
  u32("vocab_size", s.vocab);
  keys.emplace_back("llama.rope.freq_base", Value::makeFloat32(s.ropeFreqBase));
  keys.emplace_back("llama.attention.layer_norm_rms_epsilon", Value::makeFloat32(s.rmsNormEps));
  for (auto& entry : syntheticVocabularyMetadata(s.vocab)) keys.push_back(std::move(entry));
  return keys;
}

uint64_t splitMix(uint64_t& state) {
  uint64_t z = (state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// The bytes of one tensor, its rows generated and encoded on `threads` threads.
std::vector<uint8_t> tensorBytes(const PlannedTensor& t, uint64_t index,
                                 const SyntheticModelSpec& spec, int threads) {
  std::vector<uint8_t> bytes(t.bytes());
  const uint64_t rowLength = t.rowLength(), rows = t.rows();
  const uint64_t stride = rowBytes(t.type, int64_t(rowLength));
  const auto encodeRows = [&](uint64_t begin, uint64_t end) {
    std::vector<float> values(rowLength);
    for (uint64_t row = begin; row < end; ++row) {
      if (t.norm)
        std::fill(values.begin(), values.end(), 1.0f);
      else
        syntheticRowValues(spec.seed, index, row, spec.weightScale, values.data(),
                           int64_t(rowLength));
      quantizeRow(t.type, values.data(), int64_t(rowLength), bytes.data() + row * stride);
    }
  };
  const uint64_t workers = std::clamp<uint64_t>(rows / 64, 1, uint64_t(threads));
  std::vector<std::thread> pool;
  for (uint64_t w = 1; w < workers; ++w)
    pool.emplace_back(encodeRows, rows * w / workers, rows * (w + 1) / workers);
  encodeRows(0, rows / workers);
  for (std::thread& thread : pool) thread.join();
  return bytes;
}

void writeOrThrow(std::ofstream& file, const uint8_t* data, uint64_t size,
                  const std::filesystem::path& path) {
  file.write(reinterpret_cast<const char*>(data), std::streamsize(size));
  if (!file) throw Error(path.string() + ": write failed (disk full?)");
}

}  // namespace

std::vector<std::string> syntheticShapeNames() { return {"llama3-8b", "smollm2-135m"}; }

SyntheticShape syntheticShape(const std::string& name) {
  SyntheticShape s;
  s.name = name;
  if (name == "llama3-8b") {  // Meta-Llama-3-8B's config.json
    s.layers = 32, s.embd = 4096, s.ffn = 14336, s.heads = 32, s.kvHeads = 8, s.headDim = 128;
    s.vocab = 128256, s.context = 8192, s.ropeFreqBase = 500000.0f, s.rmsNormEps = 1e-5f;
    s.tiedOutput = false;
  } else if (name == "smollm2-135m") {  // SmolLM2-135M-Instruct's config.json
    s.layers = 30, s.embd = 576, s.ffn = 1536, s.heads = 9, s.kvHeads = 3, s.headDim = 64;
    s.vocab = 49152, s.context = 8192, s.ropeFreqBase = 100000.0f, s.rmsNormEps = 1e-5f;
    s.tiedOutput = true;
  } else {
    throw Error("unknown model shape '" + name + "' (expected llama3-8b or smollm2-135m)");
  }
  return s;
}

GgmlType syntheticTypeFromName(const std::string& name) {
  std::string lower = name;
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return char(std::tolower(c)); });
  if (lower == "q4_0") return GgmlType::Q4_0;
  if (lower == "q8_0") return GgmlType::Q8_0;
  if (lower == "f16") return GgmlType::F16;
  throw Error("unknown tensor type '" + name + "' (expected q4_0, q8_0 or f16)");
}

void syntheticRowValues(uint64_t seed, uint64_t tensorIndex, uint64_t row, float scale,
                        float* out, int64_t count) {
  uint64_t state = seed * 0x9E3779B97F4A7C15ull ^ (tensorIndex + 1) * 0xD1B54A32D192ED03ull ^
                   (row + 1) * 0x8CB92BA72F3D8DD7ull;
  splitMix(state);
  // Irwin-Hall: the sum of four uniforms (16 bits each, from one draw) has mean 2 and variance
  // 1/3, so (sum - 2) * sqrt(3) is close to a standard normal and bounded by 2 * sqrt(3).
  const float unit = scale * std::sqrt(3.0f) / 65536.0f;
  for (int64_t i = 0; i < count; ++i) {
    const uint64_t r = splitMix(state);
    const float sum = float((r & 0xffff) + (r >> 16 & 0xffff) + (r >> 32 & 0xffff) + (r >> 48));
    out[i] = (sum - 2.0f * 65536.0f) * unit;
  }
}

void writeSyntheticModel(const SyntheticModelSpec& spec, const std::filesystem::path& path) {
  SyntheticShape shape = syntheticShape(spec.shape);
  if (spec.layers < 0) throw Error("synthetic model: the layer count must not be negative");
  if (spec.layers > 0) shape.layers = spec.layers;
  if (spec.type != GgmlType::Q4_0 && spec.type != GgmlType::Q8_0 && spec.type != GgmlType::F16)
    throw Error("synthetic model: matrices must be q4_0, q8_0 or f16");
  const int threads =
      spec.threads > 0 ? spec.threads : std::max(1, int(std::thread::hardware_concurrency()));

  const std::vector<PlannedTensor> tensors = planTensors(shape, spec.type);
  const auto metadata = planMetadata(shape, spec);
  gguf::GgufEncoder header;
  header.header(3, tensors.size(), metadata.size());
  for (const auto& [key, value] : metadata) header.keyValue(key, value);
  uint64_t offset = 0;
  for (const PlannedTensor& t : tensors) {
    header.tensorInfo(t.name, t.shape, static_cast<uint32_t>(t.type), offset);
    offset = *alignUp(offset + t.bytes(), kAlignment);
  }
  header.padTo(kAlignment);

  std::ofstream file(path, std::ios::binary | std::ios::trunc);
  if (!file) throw Error(path.string() + ": cannot open for writing");
  writeOrThrow(file, header.bytes().data(), header.size(), path);
  const std::vector<uint8_t> zeros(kAlignment, 0);
  for (size_t i = 0; i < tensors.size(); ++i) {
    const std::vector<uint8_t> bytes = tensorBytes(tensors[i], i, spec, threads);
    writeOrThrow(file, bytes.data(), bytes.size(), path);
    const uint64_t padding = *alignUp(bytes.size(), kAlignment) - bytes.size();
    writeOrThrow(file, zeros.data(), padding, path);
  }
  file.close();
  if (!file) throw Error(path.string() + ": write failed");
}

}  // namespace ember::model
