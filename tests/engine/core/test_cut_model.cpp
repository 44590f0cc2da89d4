// Cutting a model to its first N blocks (model/model_cutter.h, `ember-cli cut-model`).
// References:
// - the source file itself, read through GgufFile: every kept tensor has the source's name,
//   type, shape and bytes; the tensors of blocks >= N are absent; every metadata value equals
//   the source's except <arch>.block_count (N) and per-layer arrays (their first N entries);
// - the source's ModelConfig for the layers kept (gemma3's sliding-window layers and their RoPE
//   bases stay on the same layer indices);
// - llama.cpp: tests/engine/core/data/SmolLM2-135M-Instruct.cut2.llamacpp.json holds llama.cpp's
//   top-20 logits on SmolLM2 cut to 2 layers by this tool (tests/tools/make_cut_model_reference.py,
//   llama-cpp-python 0.3.36) and the SHA-256 of that cut file. The test cuts again, checks it
//   gets the same bytes, and compares the engine's logits with the criteria of the CPU fidelity
//   test (tests/engine/model/test_fidelity_llamacpp.cpp): top-1 agreement except near-ties
//   (llama.cpp's top-2 within 0.05) and mean KL over llama.cpp's top 20 below 0.01; and, as
//   SmolLM2's types are computed as llama.cpp does, each of those 20 logits within 1e-3.
// - hand-built GGUF files (GgufWriter) for per-layer arrays, a 64-byte alignment and the errors.
#include <QCryptographicHash>
#include <QTemporaryDir>
#include <QtTest>
#include <algorithm>
#include <cmath>
#include <cstring>
#include <optional>

#include "common/test_paths.h"
#include "ember/engine.h"
#include "engine/model/golden_logits.h"
#include "gguf/gguf_file.h"
#include "gguf/gguf_writer.h"
#include "model/model_config.h"
#include "model/model_cutter.h"

using namespace ember;
using gguf::GgmlType;
using gguf::Value;
using gguf::ValueType;

Q_DECLARE_METATYPE(std::optional<int32_t>)

namespace {

const char* kSmol = "SmolLM2-135M-Instruct.Q4_1.gguf";
const char* kGemma = "gemma-3-270m-q4_k_m.gguf";
const char* kReference = "tests/engine/core/data/SmolLM2-135M-Instruct.cut2.llamacpp.json";
constexpr float kNearTie = 0.05f;
constexpr double kMaxMeanKl = 0.01;
// For SmolLM2's types (Q4_1, Q8_0, F32) the CPU backend follows llama.cpp's integer dot products
// and summation order, so the logits agree to the reference's rounding (5 decimals) plus float
// noise; measured: below 1e-5 on this prompt.
constexpr float kMaxLogitDiff = 1e-3f;

QString sha256Of(const QString& path) {
  QFile f(path);
  if (!f.open(QIODevice::ReadOnly)) return {};
  QCryptographicHash hash(QCryptographicHash::Sha256);
  hash.addData(&f);
  return QString::fromLatin1(hash.result().toHex());
}

size_t argmax(std::span<const float> row) {
  return size_t(std::max_element(row.begin(), row.end()) - row.begin());
}

// KL(p || q), p = softmax of llama.cpp's top-20 logits, q = softmax of ours at the same ids.
double topKl(const std::vector<std::pair<int32_t, float>>& reference, std::span<const float> ours) {
  const double refMax = reference.front().second;
  double ourMax = -INFINITY;
  for (const auto& [id, logit] : reference) ourMax = std::max(ourMax, double(ours[size_t(id)]));
  double pSum = 0, qSum = 0;
  for (const auto& [id, logit] : reference) {
    pSum += std::exp(double(logit) - refMax);
    qSum += std::exp(double(ours[size_t(id)]) - ourMax);
  }
  double kl = 0;
  for (const auto& [id, logit] : reference) {
    const double logP = double(logit) - refMax - std::log(pSum);
    const double logQ = double(ours[size_t(id)]) - ourMax - std::log(qSum);
    kl += std::exp(logP) * (logP - logQ);
  }
  return kl;
}

// A small llama-architecture file with `layers` blocks of two F32 tensors each, a per-layer
// array and a plain array, for the cutter's bookkeeping without a real model.
std::vector<uint8_t> handBuiltModel(int32_t layers, uint32_t alignment) {
  gguf::GgufWriter w;
  w.addString("general.architecture", "llama");
  if (alignment != 32) w.setAlignment(alignment);
  w.addUInt32("llama.block_count", uint32_t(layers));
  std::vector<int32_t> perLayer, notPerLayer{7, 8, 9, 10, 11, 12, 13};
  for (int32_t i = 0; i < layers; ++i) perLayer.push_back(100 + i);
  w.addInt32Array("llama.attention.head_count_kv", perLayer);
  w.addInt32Array("llama.not_per_layer", notPerLayer);
  w.addInt32Array("tokenizer.ggml.token_type", perLayer);  // same length, outside <arch>.*
  const auto f32Tensor = [&](const std::string& name, float base, uint64_t n) {
    std::vector<float> values(n);
    for (uint64_t i = 0; i < n; ++i) values[i] = base + float(i);
    std::vector<uint8_t> bytes(n * 4);
    std::memcpy(bytes.data(), values.data(), bytes.size());
    w.addTensor(name, GgmlType::F32, {n}, bytes);
  };
  f32Tensor("token_embd.weight", 0.5f, 12);
  for (int32_t i = 0; i < layers; ++i) {
    f32Tensor("blk." + std::to_string(i) + ".attn_norm.weight", float(i * 10), 5);
    f32Tensor("blk." + std::to_string(i) + ".ffn_norm.weight", float(i * 10 + 5), 3);
  }
  f32Tensor("output_norm.weight", -1.0f, 7);
  return w.bytes();
}

}  // namespace

class TestCutModel : public QObject {
  Q_OBJECT

  QTemporaryDir dir_;

  QString cutPath(const QString& name) const { return dir_.filePath(name); }

  // Cuts `source` to `layers` and checks the result against the source, tensor by tensor and
  // key by key.
  void checkAgainstSource(const gguf::GgufFile& source, int32_t layers, const QString& out) {
    const model::CutSummary summary = model::cutModelLayers(source, layers, out.toStdString());
    const auto cut = gguf::GgufFile::open(out.toStdString());
    const int64_t sourceLayers = *source.findInt(source.architecture() + ".block_count");
    QCOMPARE(summary.sourceLayers, int32_t(sourceLayers));
    QCOMPARE(summary.keptLayers, layers);
    QCOMPARE(summary.fileBytes, cut->fileSize());
    QCOMPARE(cut->version(), source.version());
    QCOMPARE(cut->alignment(), source.alignment());
    QCOMPARE(cut->findInt(source.architecture() + ".block_count").value_or(-1), int64_t(layers));

    // Tensors: the source's, in its order, minus the blocks from `layers` on.
    size_t next = 0;
    for (const gguf::TensorInfo& t : source.tensors()) {
      const std::optional<int32_t> block = model::tensorBlockIndex(t.name);
      if (block && *block >= layers) {
        QVERIFY2(!cut->findTensor(t.name), t.name.c_str());
        continue;
      }
      QVERIFY2(next < cut->tensors().size(), t.name.c_str());
      const gguf::TensorInfo& c = cut->tensors()[next++];
      QCOMPARE(c.name, t.name);
      QCOMPARE(c.type, t.type);
      QCOMPARE(c.shape, t.shape);
      QCOMPARE(c.data.size(), t.data.size());
      QVERIFY2(std::memcmp(c.data.data(), t.data.data(), t.data.size()) == 0, t.name.c_str());
      QCOMPARE(c.offset % cut->alignment(), uint64_t(0));
    }
    QCOMPARE(next, cut->tensors().size());
    QCOMPARE(summary.keptTensors, cut->tensors().size());
    QCOMPARE(summary.keptTensors + summary.droppedTensors, source.tensors().size());

    // Metadata: the source's keys in its order, the values equal except the block count and
    // <arch>.* arrays with one entry per layer, which keep their first `layers` entries.
    QCOMPARE(cut->metadata().size(), source.metadata().size());
    const std::string arch = source.architecture() + ".";
    for (size_t i = 0; i < source.metadata().size(); ++i) {
      const auto& [key, value] = source.metadata()[i];
      const auto& [cutKey, cutValue] = cut->metadata()[i];
      QCOMPARE(cutKey, key);
      QCOMPARE(cutValue.type, value.type);
      if (key == arch + "block_count") continue;
      if (key.starts_with(arch) && value.type == ValueType::Array &&
          value.asArray().items.size() == size_t(sourceLayers)) {
        const auto& items = value.asArray().items;
        QCOMPARE(cutValue.asArray().items,
                 std::vector<Value>(items.begin(), items.begin() + layers));
        continue;
      }
      QVERIFY2(cutValue == value, key.c_str());
    }
  }

 private slots:
  void initTestCase() { QVERIFY(dir_.isValid()); }

  void blockIndexOfNames_data() {
    QTest::addColumn<QString>("name");
    QTest::addColumn<std::optional<int32_t>>("index");
    QTest::newRow("block 0") << "blk.0.attn_q.weight" << std::optional<int32_t>(0);
    QTest::newRow("block 17") << "blk.17.ffn_down.weight" << std::optional<int32_t>(17);
    QTest::newRow("embedding") << "token_embd.weight" << std::optional<int32_t>();
    QTest::newRow("rope_freqs") << "rope_freqs.weight" << std::optional<int32_t>();
    QTest::newRow("no index") << "blk.x.attn_q.weight" << std::optional<int32_t>();
    QTest::newRow("no dot after the index") << "blk.3" << std::optional<int32_t>();
    QTest::newRow("negative") << "blk.-1.attn_q.weight" << std::optional<int32_t>();
  }
  void blockIndexOfNames() {
    QFETCH(QString, name);
    QFETCH(std::optional<int32_t>, index);
    QCOMPARE(model::tensorBlockIndex(name.toStdString()), index);
  }

  void handBuiltFiles_data() {
    QTest::addColumn<int32_t>("layers");
    QTest::addColumn<uint32_t>("alignment");
    QTest::newRow("3 of 5, alignment 32") << 3 << 32u;
    QTest::newRow("1 of 5, alignment 64") << 1 << 64u;
    QTest::newRow("5 of 5 (a copy)") << 5 << 32u;
  }
  void handBuiltFiles() {
    QFETCH(int32_t, layers);
    QFETCH(uint32_t, alignment);
    const auto source = gguf::GgufFile::fromBuffer(handBuiltModel(5, alignment), "hand-built");
    const QString out = cutPath(QString("hand-%1-%2.gguf").arg(layers).arg(alignment));
    checkAgainstSource(*source, layers, out);
    // The generic rule above, spelled out: the per-layer array is cut, the others are not.
    const auto cut = gguf::GgufFile::open(out.toStdString());
    std::vector<int64_t> perLayer;
    for (int32_t i = 0; i < layers; ++i) perLayer.push_back(100 + i);
    QCOMPARE(cut->getIntArray("llama.attention.head_count_kv"), perLayer);
    QCOMPARE(cut->getIntArray("llama.not_per_layer").size(), size_t(7));
    QCOMPARE(cut->getIntArray("tokenizer.ggml.token_type").size(), size_t(5));
  }

  void badRequestsAreErrors_data() {
    QTest::addColumn<int32_t>("layers");
    QTest::addColumn<bool>("overSource");
    QTest::addColumn<QString>("message");
    QTest::newRow("no layers") << 0 << false << "expected 1 to 5";
    QTest::newRow("more layers than the model") << 6 << false << "expected 1 to 5";
    QTest::newRow("output is the source") << 2 << true << "is the source file";
  }
  void badRequestsAreErrors() {
    QFETCH(int32_t, layers);
    QFETCH(bool, overSource);
    QFETCH(QString, message);
    const QString sourcePath = cutPath("errors-source.gguf");
    {
      QFile f(sourcePath);
      QVERIFY(f.open(QIODevice::WriteOnly));
      const std::vector<uint8_t> bytes = handBuiltModel(5, 32);
      f.write(reinterpret_cast<const char*>(bytes.data()), qint64(bytes.size()));
    }
    const QString sourceSha = sha256Of(sourcePath);
    const auto source = gguf::GgufFile::open(sourcePath.toStdString());
    const QString out = overSource ? sourcePath : cutPath("errors-out.gguf");
    try {
      model::cutModelLayers(*source, layers, out.toStdString());
      QFAIL("no error");
    } catch (const ember::Error& e) {
      QVERIFY2(QString(e.what()).contains(message), e.what());
    }
    QCOMPARE(sha256Of(sourcePath), sourceSha);  // the source is untouched
  }

  void realModels_data() {
    QTest::addColumn<QString>("modelFile");
    QTest::addColumn<int32_t>("layers");
    QTest::newRow("smollm2 to 2 layers") << kSmol << 2;
    QTest::newRow("smollm2 to 4 layers") << kSmol << 4;
    // 6 layers: five sliding-window layers and the first global one (layer 5).
    QTest::newRow("gemma3 to 6 layers") << kGemma << 6;
    QTest::newRow("gemma3 to 8 layers") << kGemma << 8;
  }
  void realModels() {
    QFETCH(QString, modelFile);
    QFETCH(int32_t, layers);
    EMBER_REQUIRE_MODEL(path, modelFile);
    const auto source = gguf::GgufFile::open(path.toStdString());
    const QString out = cutPath(QString("%1.cut%2.gguf").arg(modelFile).arg(layers));
    checkAgainstSource(*source, layers, out);
    // The layer configuration: the source's first `layers` layers.
    const auto cut = gguf::GgufFile::open(out.toStdString());
    const model::ModelConfig full = model::readModelConfig(*source);
    const model::ModelConfig small = model::readModelConfig(*cut);
    QCOMPARE(small.layerCount, layers);
    QCOMPARE(small.slidingWindow, full.slidingWindow);
    QCOMPARE(small.layers.size(), size_t(layers));
    for (int32_t il = 0; il < layers; ++il) {
      const model::LayerAttention& a = small.layers[size_t(il)];
      const model::LayerAttention& b = full.layers[size_t(il)];
      QCOMPARE(a.slidingWindow, b.slidingWindow);
      QCOMPARE(a.ropeFreqBase, b.ropeFreqBase);
      QCOMPARE(a.ropeFreqScale, b.ropeFreqScale);
    }
    if (modelFile == kGemma) QVERIFY(!small.layers[5].slidingWindow && small.layers[4].slidingWindow);
  }

  void cutSmolLm2MatchesLlamaCpp() {
    EMBER_REQUIRE_MODEL(path, kSmol);
    test::GoldenFile golden;
    QString why;
    QVERIFY2(test::loadGolden(test::sourceDir() + "/" + kReference, &golden, &why),
             qPrintable(why));
    const QString out = cutPath("SmolLM2-135M-Instruct.cut2.Q4_1.gguf");
    model::cutModelLayers(*gguf::GgufFile::open(path.toStdString()), 2, out.toStdString());
    // Same bytes as the file llama.cpp was given: the reference belongs to this file.
    QCOMPARE(sha256Of(out), golden.modelSha256);

    EngineOptions o;
    o.modelPath = out.toStdString();
    o.threads = 2;
    o.contextLength = 256;
    o.maxSequences = 1;
    o.backend = "cpu";
    const auto engine = Engine::load(o);
    const test::GoldenPrompt& prompt = golden.prompts.front();
    const std::vector<float> logits = engine->scoreTokens(prompt.ids);
    const size_t vocab = size_t(engine->vocabSize());
    QCOMPARE(logits.size(), prompt.ids.size() * vocab);
    QVERIFY(std::all_of(logits.begin(), logits.end(), [](float x) { return std::isfinite(x); }));
    int agree = 0, nearTies = 0, other = 0;
    double klSum = 0, klMax = 0;
    float maxDiff = 0;  // over llama.cpp's top 20
    for (size_t i = 0; i < prompt.top.size(); ++i) {
      const auto& reference = prompt.top[i];
      const std::span<const float> ours(logits.data() + i * vocab, vocab);
      const double kl = topKl(reference, ours);
      klSum += kl;
      klMax = std::max(klMax, kl);
      for (const auto& [id, logit] : reference)
        maxDiff = std::max(maxDiff, std::abs(ours[size_t(id)] - logit));
      if (argmax(ours) == size_t(reference.front().first))
        ++agree;
      else if (reference[0].second - reference[1].second < kNearTie)
        ++nearTies;
      else
        ++other;
    }
    const double klMean = klSum / double(prompt.top.size());
    qInfo("cut to 2 layers vs llama.cpp: top-1 %d/%zu (near ties %d, other %d), KL mean %.2e "
          "max %.2e, max |logit diff| over the top 20 %.2e",
          agree, prompt.top.size(), nearTies, other, klMean, klMax, double(maxDiff));
    QCOMPARE(other, 0);
    QVERIFY2(klMean < kMaxMeanKl, qPrintable(QString("mean KL %1").arg(klMean)));
    QVERIFY2(maxDiff < kMaxLogitDiff, qPrintable(QString("max |logit diff| %1").arg(maxDiff)));
  }
};

QTEST_APPLESS_MAIN(TestCutModel)
#include "test_cut_model.moc"
