// ModelConfig and the weight table: what is read from a GGUF file's metadata and tensors, and the
// errors for files that do not describe a runnable model. Expected values come from llama.cpp's
// hparams loading (src/llama-model.cpp: which keys are required, defaults such as
// head_count_kv = head_count and key_length = n_embd / n_head, rope scaling factor -> 1/factor,
// gemma3's set_swa_pattern(6) with local RoPE base 10000 and its attention scale) and, for the
// real files, from their metadata as printed by `ember-cli inspect` (cross-checked with the PyPI
// `gguf` package's GGUFReader).
#include <QtTest>
#include <cmath>

#include "common/test_paths.h"
#include "model/model_config.h"
#include "model/model_weights.h"
#include "tiny_model_builder.h"

using namespace ember;
using namespace ember::model;
using ember::test::TinyModelSpec;

namespace {

// Runs `f` and returns the ModelConfigError's message (empty when nothing was thrown).
template <class F>
QString errorOf(F&& f) {
  try {
    f();
  } catch (const ModelConfigError& e) {
    return QString::fromStdString(e.what());
  }
  return {};
}

}  // namespace

class TestModelConfig : public QObject {
  Q_OBJECT

 private slots:
  void readsTinyLlama() {
    TinyModelSpec spec;
    const auto file = ember::test::buildTinyModel(spec);
    const ModelConfig c = readModelConfig(*file);
    QCOMPARE(c.architecture, Architecture::Llama);
    QCOMPARE(c.layerCount, 2);
    QCOMPARE(c.embeddingDim, 8);
    QCOMPARE(c.ffnDim, 16);
    QCOMPARE(c.headCount, 2);
    QCOMPARE(c.kvHeadCount, 1);
    QCOMPARE(c.headDim, 4);  // n_embd / n_head without attention.key_length
    QCOMPARE(c.valueDim, 4);
    QCOMPARE(c.ropeDims, 4);  // head_dim without rope.dimension_count
    QCOMPARE(c.vocabSize, 10);
    QCOMPARE(c.contextLength, 64);
    QCOMPARE(c.ropeStyle, RopeStyle::Normal);
    QCOMPARE(c.ffnActivation, FfnActivation::SiluGlu);
    QCOMPARE(c.attentionScale, 0.5f);  // 1/sqrt(4)
    QVERIFY(!c.attentionBias && !c.qkNorm && !c.postNorms);
    QCOMPARE(c.layers.size(), size_t(2));
    QCOMPARE(c.layers[0].ropeFreqBase, 10000.0f);
    QCOMPARE(c.layers[0].ropeFreqScale, 1.0f);
    const QString text = QString::fromStdString(c.describe());
    QVERIFY2(text.startsWith("llama") && text.contains("2 layers") && text.contains("context 64"),
             qPrintable(text));

    const ModelWeights w = bindModelWeights(*file, c);
    QVERIFY(w.tiedOutput);
    QCOMPARE(w.output, w.tokenEmbedding);
    QCOMPARE(w.layers.size(), size_t(2));
    QCOMPARE(QString::fromStdString(w.layers[1].ffnDown->name), "blk.1.ffn_down.weight");
  }

  void separateOutputIsNotTied() {
    TinyModelSpec spec;
    spec.separateOutput = true;
    const auto file = ember::test::buildTinyModel(spec);
    const ModelWeights w = bindModelWeights(*file, readModelConfig(*file));
    QVERIFY(!w.tiedOutput);
    QCOMPARE(QString::fromStdString(w.output->name), "output.weight");
  }

  void missingRequiredKey_data() {
    QTest::addColumn<QString>("key");
    for (const char* key : {"llama.block_count", "llama.context_length", "llama.embedding_length",
                            "llama.feed_forward_length", "llama.attention.head_count",
                            "llama.attention.layer_norm_rms_epsilon", "general.architecture"})
      QTest::newRow(key) << key;
  }

  void missingRequiredKey() {
    QFETCH(QString, key);
    TinyModelSpec spec;
    spec.dropKeys.insert(key.toStdString());
    const auto file = ember::test::buildTinyModel(spec, "no-key.gguf");
    const QString message = errorOf([&] { readModelConfig(*file); });
    QVERIFY2(message.contains("no-key.gguf") && message.contains("'" + key + "'"),
             qPrintable(message));
  }

  void optionalKeysTakeLlamaCppDefaults() {
    TinyModelSpec spec;
    spec.dropKeys = {"llama.attention.head_count_kv", "llama.rope.freq_base"};
    const auto file = ember::test::buildTinyModel(spec);
    const ModelConfig c = readModelConfig(*file);
    QCOMPARE(c.kvHeadCount, c.headCount);
    QCOMPARE(c.layers[1].ropeFreqBase, 10000.0f);
  }

  void unsupportedArchitecture() {
    TinyModelSpec spec;
    spec.architecture = "gpt2";
    const auto file = ember::test::buildTinyModel(spec, "gpt2.gguf");
    const QString message = errorOf([&] { readModelConfig(*file); });
    QVERIFY2(message.contains("gpt2.gguf") && message.contains("unsupported architecture 'gpt2'"),
             qPrintable(message));
  }

  void ropeScaling_data() {
    QTest::addColumn<QString>("type");  // empty: no type key
    QTest::addColumn<float>("factor");
    QTest::addColumn<float>("expectedScale");  // NaN: an error naming the type key
    QTest::newRow("linear 4") << "linear" << 4.0f << 0.25f;
    QTest::newRow("factor without type is linear") << "" << 2.0f << 0.5f;
    QTest::newRow("none ignores the factor") << "none" << 8.0f << 1.0f;
    QTest::newRow("yarn interpolates by the factor") << "yarn" << 4.0f << 0.25f;
    QTest::newRow("an unknown type is refused") << "dynamic-ntk" << 4.0f << float(NAN);
  }

  void ropeScaling() {
    QFETCH(QString, type);
    QFETCH(float, factor);
    QFETCH(float, expectedScale);
    TinyModelSpec spec;
    if (!type.isEmpty())
      spec.extraKeys["llama.rope.scaling.type"] = gguf::Value::makeString(type.toStdString());
    spec.extraKeys["llama.rope.scaling.factor"] = gguf::Value::makeFloat32(factor);
    const auto file = ember::test::buildTinyModel(spec, "scaled.gguf");
    if (std::isnan(expectedScale)) {
      const QString message = errorOf([&] { readModelConfig(*file); });
      QVERIFY2(message.contains("llama.rope.scaling.type") && message.contains(type),
               qPrintable(message));
      return;
    }
    QCOMPARE(readModelConfig(*file).layers[0].ropeFreqScale, expectedScale);
  }

  void vocabularyMustMatchTheEmbedding() {
    TinyModelSpec spec;
    spec.extraKeys["llama.vocab_size"] = gguf::Value::makeUInt32(11);
    const auto file = ember::test::buildTinyModel(spec, "vocab.gguf");
    const QString message = errorOf([&] { readModelConfig(*file); });
    QVERIFY2(message.contains("llama.vocab_size") && message.contains("token_embd.weight") &&
                 message.contains("10 rows"),
             qPrintable(message));
  }

  void headCountsMustDivide() {
    TinyModelSpec spec;
    spec.extraKeys["llama.attention.head_count_kv"] = gguf::Value::makeUInt32(3);
    const auto file = ember::test::buildTinyModel(spec, "heads.gguf");
    const QString message = errorOf([&] { readModelConfig(*file); });
    QVERIFY2(message.contains("head_count_kv"), qPrintable(message));
  }

  void missingOrMisshapenTensor_data() {
    QTest::addColumn<QString>("architecture");
    QTest::addColumn<QString>("tensor");
    QTest::addColumn<bool>("drop");  // else its shape is changed to [8, 8]... or [3]
    QTest::newRow("missing ffn_up") << "llama"
                                    << "blk.1.ffn_up.weight" << true;
    QTest::newRow("missing output_norm") << "llama"
                                         << "output_norm.weight" << true;
    QTest::newRow("k projection too wide") << "llama"
                                           << "blk.0.attn_k.weight" << false;
    QTest::newRow("qwen2 missing q bias") << "qwen2"
                                          << "blk.0.attn_q.bias" << true;
    QTest::newRow("gemma3 missing k norm") << "gemma3"
                                           << "blk.1.attn_k_norm.weight" << true;
    QTest::newRow("gemma3 post norm shape") << "gemma3"
                                            << "blk.0.post_ffw_norm.weight" << false;
  }

  void missingOrMisshapenTensor() {
    QFETCH(QString, architecture);
    QFETCH(QString, tensor);
    QFETCH(bool, drop);
    TinyModelSpec spec;
    spec.architecture = architecture.toStdString();
    if (drop)
      spec.dropTensors.insert(tensor.toStdString());
    else
      spec.shapeOverrides[tensor.toStdString()] =
          tensor.contains("norm") ? std::vector<uint64_t>{3} : std::vector<uint64_t>{8, 8};
    const auto file = ember::test::buildTinyModel(spec, "tensors.gguf");
    const ModelConfig config = readModelConfig(*file);
    const QString message = errorOf([&] { bindModelWeights(*file, config); });
    QVERIFY2(message.contains("tensors.gguf") && message.contains("'" + tensor + "'") &&
                 message.contains(drop ? "missing tensor" : "expected"),
             qPrintable(message));
  }

  void gemma3SlidingWindowPattern() {
    TinyModelSpec spec;
    spec.architecture = "gemma3";
    spec.layers = 12;
    spec.extraKeys["gemma3.attention.sliding_window"] = gguf::Value::makeUInt32(512);
    spec.extraKeys["gemma3.rope.freq_base"] = gguf::Value::makeFloat32(1000000.0f);
    spec.extraKeys["gemma3.rope.scaling.type"] = gguf::Value::makeString("linear");
    spec.extraKeys["gemma3.rope.scaling.factor"] = gguf::Value::makeFloat32(8.0f);
    const auto file = ember::test::buildTinyModel(spec);
    const ModelConfig c = readModelConfig(*file);
    QCOMPARE(c.ropeStyle, RopeStyle::Neox);
    QCOMPARE(c.ffnActivation, FfnActivation::GeluTanhGlu);
    QVERIFY(c.qkNorm && c.postNorms && !c.attentionBias);
    QCOMPARE(c.slidingWindow, 512);
    QCOMPARE(c.embeddingScale, std::sqrt(8.0f));
    for (int il = 0; il < 12; ++il) {
      const bool global = il == 5 || il == 11;  // every 6th layer (llama.cpp set_swa_pattern(6))
      QCOMPARE(c.layers[size_t(il)].slidingWindow, !global);
      QCOMPARE(c.layers[size_t(il)].ropeFreqBase, global ? 1000000.0f : 10000.0f);
      QCOMPARE(c.layers[size_t(il)].ropeFreqScale, global ? 0.125f : 1.0f);
    }
    bindModelWeights(*file, c);  // all gemma3 tensors present
  }

  void gemma3SlidingWindowPatternFromMetadata_data() {
    // llama.cpp's load_swa_pattern: an integer period n (layer il slides unless il % n == n - 1;
    // n == 0: every layer slides) or one flag per layer.
    QTest::addColumn<int>("period");  // -1: a per-layer array instead
    QTest::addColumn<QList<bool>>("expected");
    QTest::newRow("period 4") << 4 << QList<bool>{true, true, true, false, true, true, true, false};
    QTest::newRow("period 0: all slide") << 0 << QList<bool>(8, true);
    QTest::newRow("flags") << -1 << QList<bool>{false, true, false, true, true, false, false, true};
  }

  void gemma3SlidingWindowPatternFromMetadata() {
    QFETCH(int, period);
    QFETCH(QList<bool>, expected);
    TinyModelSpec spec;
    spec.architecture = "gemma3";
    spec.layers = 8;
    spec.extraKeys["gemma3.attention.sliding_window"] = gguf::Value::makeUInt32(4096);
    spec.extraKeys["gemma3.rope.freq_base_swa"] = gguf::Value::makeFloat32(5000.0f);
    if (period >= 0) {
      spec.extraKeys["gemma3.attention.sliding_window_pattern"] =
          gguf::Value::makeUInt32(uint32_t(period));
    } else {
      std::vector<gguf::Value> flags;
      for (bool f : expected) flags.push_back(gguf::Value::makeBool(f));
      spec.extraKeys["gemma3.attention.sliding_window_pattern"] =
          gguf::Value::makeArray(gguf::ValueType::Bool, flags);
    }
    const auto file = ember::test::buildTinyModel(spec);
    const ModelConfig c = readModelConfig(*file);
    for (int il = 0; il < 8; ++il) {
      QCOMPARE(c.layers[size_t(il)].slidingWindow, expected[il]);
      QCOMPARE(c.layers[size_t(il)].ropeFreqBase, expected[il] ? 5000.0f : 10000.0f);
    }
  }

  void gemma3WithoutWindowIsGlobal() {
    TinyModelSpec spec;
    spec.architecture = "gemma3";
    const auto file = ember::test::buildTinyModel(spec);
    const ModelConfig c = readModelConfig(*file);
    QCOMPARE(c.slidingWindow, 0);
    for (const LayerAttention& l : c.layers) QVERIFY(!l.slidingWindow);
  }

  void realModels_data() {
    QTest::addColumn<QString>("file");
    QTest::addColumn<QList<int>>(
        "dims");  // layers, embd, ff, heads, kv heads, head dim, vocab, ctx
    QTest::addColumn<float>("ropeBase");
    QTest::addColumn<float>("eps");
    QTest::newRow("SmolLM2") << "SmolLM2-135M-Instruct.Q4_1.gguf"
                             << QList<int>{30, 576, 1536, 9, 3, 64, 49152, 8192} << 100000.0f
                             << 1e-5f;
    QTest::newRow("gemma3") << "gemma-3-270m-q4_k_m.gguf"
                            << QList<int>{18, 640, 2048, 4, 1, 256, 262144, 32768} << 1000000.0f
                            << 1e-6f;
  }

  void realModels() {
    QFETCH(QString, file);
    QFETCH(QList<int>, dims);
    QFETCH(float, ropeBase);
    QFETCH(float, eps);
    EMBER_REQUIRE_MODEL(path, file);
    const auto gguf = gguf::GgufFile::open(path.toStdString());
    const ModelConfig c = readModelConfig(*gguf);
    QCOMPARE((QList<int>{c.layerCount, c.embeddingDim, c.ffnDim, c.headCount, c.kvHeadCount,
                         c.headDim, c.vocabSize, c.contextLength}),
             dims);
    QCOMPARE(c.rmsNormEps, eps);
    QCOMPARE(c.layers.back().ropeFreqBase, ropeBase);  // the last layer is global in both
    QCOMPARE(c.attentionScale, 1.0f / std::sqrt(float(c.headDim)));
    const ModelWeights w = bindModelWeights(*gguf, c);
    QVERIFY(w.tiedOutput);  // neither file has output.weight
    if (c.architecture == Architecture::Gemma3) {
      QCOMPARE(c.slidingWindow, 512);
      int global = 0;
      for (const LayerAttention& l : c.layers) global += l.slidingWindow ? 0 : 1;
      QCOMPARE(global, 3);  // layers 5, 11, 17
    }
  }
};

QTEST_APPLESS_MAIN(TestModelConfig)
#include "test_model_config.moc"
