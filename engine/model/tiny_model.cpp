#include "model/tiny_model.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>

#include "common/checked_math.h"
#include "ember/error.h"
#include "gguf/gguf_encoder.h"
#include "gguf/gguf_file.h"
#include "gguf/ggml_types.h"
#include "model/synthetic_model.h"
#include "model/synthetic_quantize.h"

namespace ember::model {
namespace {

using gguf::Value;

// The shape every tiny model shares: 4 layers (so smollm3 has a NoPE layer and the interleaved
// windows repeat), 4 query heads sharing 2 kv heads of 16 (head_dim % 16 == 0, as in real models,
// so the attention takes the same summation paths), n_embd = n_head * head_dim (phi3 and olmo2
// require it).
constexpr uint32_t kLayers = 4, kEmbd = 64, kFfn = 128, kHeads = 4, kKvHeads = 2, kHeadDim = 16;
constexpr uint32_t kContext = 256;
// The mixture of experts (qwen3moe): 8 experts of n_ff 32, 2 per token.
constexpr uint32_t kExperts = 8, kExpertsUsed = 2, kExpertFfn = 32;
constexpr uint64_t kAlignment = 32;

// Sink: attention-sink logits ~ N(0, 1), of the size of the scores, so they take a real share.
// WideBias: gpt-oss's expert gate/up biases ~ N(0, 4^2), so that its SwiGLU's clamp at 7 bites.
enum class Fill : uint8_t { Weight, Embedding, Norm, Bias, Sink, WideBias };

struct Tensor {
  std::string name;
  std::vector<uint64_t> shape;  // ggml order
  Fill fill = Fill::Weight;
  gguf::GgmlType storedAs = gguf::GgmlType::F32;
  uint64_t elements() const {
    uint64_t n = 1;
    for (uint64_t d : shape) n *= d;
    return n;
  }
  // F32 unless a preset says otherwise: the products then carry no quantization, so llama.cpp
  // and Ember differ only in the order of their float sums.
  gguf::GgmlType type() const { return storedAs; }
  uint64_t bytes() const { return rowBytes(type(), int64_t(shape[0])) * (elements() / shape[0]); }
};

struct Plan {
  std::vector<std::pair<std::string, Value>> metadata;
  std::vector<Tensor> tensors;
};

bool among(const std::string& arch, std::initializer_list<const char*> names) {
  return std::any_of(names.begin(), names.end(), [&](const char* n) { return arch == n; });
}

// The keys llama.cpp reads for each architecture, with values that exercise its features on a
// short prompt (a 4-position window, soft-caps that bite at this scale, granite's multipliers).
void addMetadata(Plan& plan, const std::string& arch, const std::string& preset,
                 const gguf::GgufFile& vocabulary, uint64_t vocab, uint64_t seed) {
  auto& m = plan.metadata;
  const auto u32 = [&](const std::string& key, uint32_t v) {
    m.emplace_back(arch + "." + key, Value::makeUInt32(v));
  };
  const auto f32 = [&](const std::string& key, float v) {
    m.emplace_back(arch + "." + key, Value::makeFloat32(v));
  };
  m.emplace_back("general.architecture", Value::makeString(arch));
  // Without the architecture's name: llama.cpp gives tokens special attributes by model name
  // ("phi3" expects Phi-3's <|endoftext|> in the vocabulary).
  m.emplace_back("general.name", Value::makeString("Ember " + preset + " (random weights, seed " +
                                                   std::to_string(seed) + ")"));
  u32("block_count", kLayers);
  u32("context_length", kContext);
  u32("embedding_length", kEmbd);
  u32("feed_forward_length", kFfn);
  u32("attention.head_count", kHeads);
  u32("attention.head_count_kv", kKvHeads);
  u32("attention.key_length", kHeadDim);
  u32("attention.value_length", kHeadDim);
  u32("rope.dimension_count", kHeadDim);
  u32("vocab_size", uint32_t(vocab));
  f32("attention.layer_norm_rms_epsilon", 1e-6f);
  f32("rope.freq_base",
      among(arch, {"qwen2", "qwen3", "qwen3moe", "gemma3"}) ? 1000000.0f : 10000.0f);
  if (arch == "qwen3moe" || arch == "gpt-oss") {
    u32("expert_count", kExperts);
    u32("expert_used_count", kExpertsUsed);
    u32("expert_feed_forward_length", kExpertFfn);
  }
  if (arch == "gpt-oss") {  // gpt-oss's YaRN (factor 32) over a short original context
    u32("attention.sliding_window", 4);
    m.emplace_back(arch + ".rope.scaling.type", Value::makeString("yarn"));
    f32("rope.scaling.factor", 32.0f);
    u32("rope.scaling.original_context_length", 64);
  }
  if (arch == "gemma2") {
    u32("attention.sliding_window", 4);
    f32("attn_logit_softcapping", 3.0f);
    f32("final_logit_softcapping", 5.0f);
  } else if (arch == "gemma3") {
    u32("attention.sliding_window", 4);
    u32("attention.sliding_window_pattern", 2);
    f32("rope.freq_base_swa", 100.0f);
    f32("final_logit_softcapping", 30.0f);
  } else if (arch == "granite") {  // Granite 3 values but for the embedding and attention scales
    f32("embedding_scale", 1.5f);  // Granite 3 uses 12; smaller so the blocks show
    f32("residual_scale", 0.22f);
    f32("attention.scale", 0.2f);  // not 1/sqrt(head_dim), so ignoring the key shows
    f32("logit_scale", 8.0f);
  } else if (arch == "phi3") {
    u32("attention.sliding_window", 4);  // Phi-3 files carry one; llama.cpp ignores it
  }
  if (arch == "mistral3") {  // Ministral-style YaRN with llama.cpp's log-multiplier path
    m.emplace_back(arch + ".rope.scaling.type", Value::makeString("yarn"));
    f32("rope.scaling.factor", 8.0f);
    u32("rope.scaling.original_context_length", 32);
    f32("rope.scaling.yarn_beta_fast", 16.0f);
    f32("rope.scaling.yarn_beta_slow", 2.0f);
    f32("rope.scaling.yarn_log_multiplier", 1.0f);
  }
  if (preset == "tiny-yarn") {
    m.emplace_back(arch + ".rope.scaling.type", Value::makeString("yarn"));
    f32("rope.scaling.factor", 4.0f);
    u32("rope.scaling.original_context_length", 64);
  } else if (preset == "tiny-longrope") {
    m.emplace_back(arch + ".rope.scaling.type", Value::makeString("longrope"));
    f32("rope.scaling.attn_factor", 1.19f);
    u32("rope.scaling.original_context_length", 4096);
  }
  for (const auto& [key, value] : vocabulary.metadata())
    if (key.rfind("tokenizer.", 0) == 0) m.emplace_back(key, value);
}

// LongRoPE's per-frequency divisors: short ones near 1, long ones growing with the frequency.
Tensor ropeFactors(const char* name) { return {name, {kHeadDim / 2}, Fill::Norm}; }

void addTensors(Plan& plan, const std::string& arch, const std::string& preset, uint64_t vocab) {
  auto& t = plan.tensors;
  const uint64_t embd = kEmbd, ff = kFfn, q = kHeads * kHeadDim, kv = kKvHeads * kHeadDim;
  const bool preNorms = arch != "olmo2";
  const bool postNorms = among(arch, {"gemma2", "gemma3", "olmo2"});
  // olmo2 and gpt-oss require output.weight
  const bool tied = arch != "llama" && arch != "olmo2" && arch != "gpt-oss";
  const bool gptOss = arch == "gpt-oss";
  t.push_back({"token_embd.weight", {embd, vocab}, Fill::Embedding});
  t.push_back({"output_norm.weight", {embd}, Fill::Norm});
  if (!tied) t.push_back({"output.weight", {embd, vocab}});
  if (preset == "tiny-longrope") {
    t.push_back(ropeFactors("rope_factors_long.weight"));
    t.push_back(ropeFactors("rope_factors_short.weight"));
  }
  for (uint32_t il = 0; il < kLayers; ++il) {
    const std::string p = "blk." + std::to_string(il) + ".";
    if (preNorms) t.push_back({p + "attn_norm.weight", {embd}, Fill::Norm});
    if (arch == "phi3") {
      t.push_back({p + "attn_qkv.weight", {embd, q + 2 * kv}});
    } else {
      t.push_back({p + "attn_q.weight", {embd, q}});
      t.push_back({p + "attn_k.weight", {embd, kv}});
      t.push_back({p + "attn_v.weight", {embd, kv}});
    }
    if (arch == "qwen2" || gptOss) {
      t.push_back({p + "attn_q.bias", {q}, Fill::Bias});
      t.push_back({p + "attn_k.bias", {kv}, Fill::Bias});
      t.push_back({p + "attn_v.bias", {kv}, Fill::Bias});
    }
    if (among(arch, {"qwen3", "qwen3moe", "gemma3"})) {
      t.push_back({p + "attn_q_norm.weight", {kHeadDim}, Fill::Norm});
      t.push_back({p + "attn_k_norm.weight", {kHeadDim}, Fill::Norm});
    } else if (arch == "olmo2") {
      t.push_back({p + "attn_q_norm.weight", {q}, Fill::Norm});
      t.push_back({p + "attn_k_norm.weight", {kv}, Fill::Norm});
    }
    t.push_back({p + "attn_output.weight", {q, embd}});
    if (gptOss) {
      t.push_back({p + "attn_output.bias", {embd}, Fill::Bias});
      t.push_back({p + "attn_sinks.weight", {kHeads}, Fill::Sink});
    }
    if (postNorms) t.push_back({p + "post_attention_norm.weight", {embd}, Fill::Norm});
    // gpt-oss names its FFN's pre-norm post_attention_norm
    if (preNorms) t.push_back({p + (gptOss ? "post_attention_norm" : "ffn_norm") + ".weight",
                               {embd}, Fill::Norm});
    if (arch == "qwen3moe" || gptOss) {  // the router, then every expert's matrices stacked
      const uint64_t experts = kExperts, ffExp = kExpertFfn;
      // tiny-mxfp4: the experts in MXFP4, as the published gpt-oss files store them
      const gguf::GgmlType expertType =
          preset == "tiny-mxfp4" ? gguf::GgmlType::MXFP4 : gguf::GgmlType::F32;
      t.push_back({p + "ffn_gate_inp.weight", {embd, experts}});
      t.push_back({p + "ffn_gate_exps.weight", {embd, ffExp, experts}, Fill::Weight, expertType});
      t.push_back({p + "ffn_up_exps.weight", {embd, ffExp, experts}, Fill::Weight, expertType});
      t.push_back({p + "ffn_down_exps.weight", {ffExp, embd, experts}, Fill::Weight, expertType});
      if (gptOss) {
        t.push_back({p + "ffn_gate_inp.bias", {experts}, Fill::Bias});
        t.push_back({p + "ffn_gate_exps.bias", {ffExp, experts}, Fill::WideBias});
        t.push_back({p + "ffn_up_exps.bias", {ffExp, experts}, Fill::WideBias});
        t.push_back({p + "ffn_down_exps.bias", {embd, experts}, Fill::Bias});
      }
    } else if (arch == "phi3") {
      t.push_back({p + "ffn_up.weight", {embd, 2 * ff}});  // gate rows, then up rows
      t.push_back({p + "ffn_down.weight", {ff, embd}});
    } else {
      t.push_back({p + "ffn_gate.weight", {embd, ff}});
      t.push_back({p + "ffn_up.weight", {embd, ff}});
      t.push_back({p + "ffn_down.weight", {ff, embd}});
    }
    if (preset == "tiny-ffn-bias") {
      t.push_back({p + "ffn_gate.bias", {ff}, Fill::Bias});
      t.push_back({p + "ffn_up.bias", {ff}, Fill::Bias});
      t.push_back({p + "ffn_down.bias", {embd}, Fill::Bias});
    }
    if (postNorms) t.push_back({p + "post_ffw_norm.weight", {embd}, Fill::Norm});
  }
}

// F32 values: matrices ~ N(0, 1/cols) so activations keep their scale through the layers,
// embeddings ~ N(0, 0.1^2) (small beside the blocks' outputs, so that a tied output matrix does
// not just predict the input token again), norm weights 1 + N(0, 0.1^2) (so a norm applied with the wrong weight
// shows), biases ~ N(0, 0.1^2).
std::vector<float> tensorValues(const Tensor& t, uint64_t index, uint64_t seed) {
  const uint64_t cols = t.shape[0], rows = t.elements() / cols;
  float scale = 1.0f / std::sqrt(float(cols));
  if (t.fill == Fill::Embedding) scale = 0.1f;
  if (t.fill == Fill::Norm || t.fill == Fill::Bias) scale = 0.1f;
  if (t.fill == Fill::Sink) scale = 1.0f;
  if (t.fill == Fill::WideBias) scale = 4.0f;
  std::vector<float> values(t.elements());
  for (uint64_t r = 0; r < rows; ++r)
    syntheticRowValues(seed, index, r, scale, values.data() + r * cols, int64_t(cols));
  if (t.fill == Fill::Norm)
    for (float& v : values) v += 1.0f;
  return values;
}

}  // namespace

std::vector<std::string> tinyModelArchitectures() {
  return {"llama",  "mistral3", "qwen2", "qwen3", "qwen3moe", "gpt-oss",
          "gemma2", "gemma3",   "granite", "olmo2", "phi3",    "smollm3"};
}

void writeTinyModel(const TinyModelSpec& spec, const std::filesystem::path& path) {
  if (spec.preset != "tiny" && spec.preset != "tiny-yarn" && spec.preset != "tiny-longrope" &&
      spec.preset != "tiny-ffn-bias" && spec.preset != "tiny-mxfp4")
    throw Error("tiny model: unknown preset '" + spec.preset +
                "' (known: tiny, tiny-yarn, tiny-longrope, tiny-ffn-bias, tiny-mxfp4)");
  if (spec.preset == "tiny-mxfp4" && spec.architecture != "qwen3moe" &&
      spec.architecture != "gpt-oss")
    throw Error("tiny model: preset 'tiny-mxfp4' quantizes experts; architecture '" +
                spec.architecture + "' has none");
  const std::vector<std::string> known = tinyModelArchitectures();
  if (std::find(known.begin(), known.end(), spec.architecture) == known.end()) {
    std::string list;
    for (const std::string& a : known) list += (list.empty() ? "" : ", ") + a;
    throw Error("tiny model: unknown architecture '" + spec.architecture + "' (known: " + list +
                ")");
  }
  const auto vocabulary = gguf::GgufFile::open(spec.vocabulary);
  const gguf::Value* tokens = vocabulary->find("tokenizer.ggml.tokens");
  if (!tokens || tokens->type != gguf::ValueType::Array || tokens->asArray().empty())
    throw Error(spec.vocabulary.string() + ": no tokenizer.ggml.tokens to copy");
  const uint64_t vocab = tokens->asArray().size();

  Plan plan;
  addMetadata(plan, spec.architecture, spec.preset, *vocabulary, vocab, spec.seed);
  addTensors(plan, spec.architecture, spec.preset, vocab);

  gguf::GgufEncoder header;
  header.header(3, plan.tensors.size(), plan.metadata.size());
  for (const auto& [key, value] : plan.metadata) header.keyValue(key, value);
  uint64_t offset = 0;
  for (const Tensor& t : plan.tensors) {
    header.tensorInfo(t.name, t.shape, uint32_t(t.type()), offset);
    offset = *alignUp(offset + t.bytes(), kAlignment);
  }
  header.padTo(kAlignment);

  std::ofstream file(path, std::ios::binary | std::ios::trunc);
  if (!file) throw Error(path.string() + ": cannot open for writing");
  const auto write = [&](const void* data, uint64_t bytes) {
    file.write(static_cast<const char*>(data), std::streamsize(bytes));
    if (!file) throw Error(path.string() + ": write failed (disk full?)");
  };
  write(header.bytes().data(), header.size());
  const std::vector<uint8_t> zeros(kAlignment, 0);
  for (size_t i = 0; i < plan.tensors.size(); ++i) {
    const Tensor& t = plan.tensors[i];
    const std::vector<float> values = tensorValues(t, i, spec.seed);
    std::vector<uint8_t> bytes(t.bytes());
    const uint64_t cols = t.shape[0], stride = rowBytes(t.type(), int64_t(cols));
    for (uint64_t r = 0; r < t.elements() / cols; ++r)
      quantizeRow(t.type(), values.data() + r * cols, int64_t(cols), bytes.data() + r * stride);
    write(bytes.data(), bytes.size());
    write(zeros.data(), *alignUp(bytes.size(), kAlignment) - bytes.size());
  }
  file.close();
  if (!file) throw Error(path.string() + ": write failed");
}

}  // namespace ember::model
