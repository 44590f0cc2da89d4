// Synthetic models (random weights in a real architecture's shapes): the file has SmolLM2-135M's
// tensor table (shapes from its config.json, as `ember-cli inspect` prints the real file), its
// Q4_0/Q8_0 blocks decode through the CPU backend's dequantizer to the source floats within the
// format's rounding (Q4_0: |error| <= |d|, the clamp of the far side; Q8_0: |d| / 2; F16: exact
// round-to-nearest; plus, for the blocks, the scale's own fp16 rounding, at most 2^-11 relative,
// times the largest code: 8 for Q4_0, 127 for Q8_0), the same spec writes the same bytes on any thread count, the tokenizer loads
// and round-trips text, and the model runs on the CPU engine with finite logits.
#include <QtTest>
#include <cmath>
#include <fstream>
#include <iterator>

#include "backend/cpu/quant/block_formats.h"
#include "backend/cpu/quant/kernels.h"
#include "ember/engine.h"
#include "gguf/gguf_file.h"
#include "model/synthetic_model.h"
#include "model/synthetic_quantize.h"
#include "tokenizer/tokenizer.h"

using namespace ember;
using gguf::GgmlType;

namespace {

std::string readAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

}  // namespace

class TestSyntheticModel : public QObject {
  Q_OBJECT

  QTemporaryDir dir_;
  std::string q4Path_;

 private slots:
  void initTestCase() {
    QVERIFY(dir_.isValid());
    q4Path_ = dir_.filePath("smollm2-2layers-q4_0.gguf").toStdString();
    model::SyntheticModelSpec spec;
    spec.shape = "smollm2-135m";
    spec.layers = 2;
    spec.seed = 7;
    model::writeSyntheticModel(spec, q4Path_);
  }

  void hasTheRealTensorTable() {
    const auto file = gguf::GgufFile::open(q4Path_);
    QCOMPARE(file->architecture(), std::string("llama"));
    QCOMPARE(file->findInt("llama.block_count").value_or(0), 2);
    // SmolLM2-135M ties its output to the embedding: token_embd, output_norm, 9 per layer.
    QCOMPARE(file->tensors().size(), size_t(2 + 9 * 2));
    QVERIFY(!file->findTensor("output.weight"));
    const gguf::TensorInfo* embd = file->findTensor("token_embd.weight");
    QVERIFY(embd);
    QCOMPARE(embd->type, GgmlType::Q4_0);
    QCOMPARE(embd->shape, (std::vector<uint64_t>{576, 49152}));
    QCOMPARE(file->findTensor("blk.1.attn_k.weight")->shape, (std::vector<uint64_t>{576, 192}));
    QCOMPARE(file->findTensor("blk.1.ffn_down.weight")->shape, (std::vector<uint64_t>{1536, 576}));
    QCOMPARE(file->findTensor("blk.0.ffn_norm.weight")->type, GgmlType::F32);
  }

  void q4BlocksDecodeToTheirSource() {
    const auto file = gguf::GgufFile::open(q4Path_);
    const auto& tensors = file->tensors();
    for (size_t index = 0; index < tensors.size(); ++index) {
      const gguf::TensorInfo& t = tensors[index];
      if (t.type != GgmlType::Q4_0 || t.name.find("blk.1.") != 0) continue;
      const int64_t rowLength = int64_t(t.shape[0]);
      const uint64_t rowBytes = model::rowBytes(t.type, rowLength);
      std::vector<float> source(static_cast<size_t>(rowLength)), decoded(source.size());
      for (uint64_t row : {uint64_t(0), t.shape[1] / 2, t.shape[1] - 1}) {
        model::syntheticRowValues(7, index, row, 0.02f, source.data(), rowLength);
        const uint8_t* blocks = t.data.data() + row * rowBytes;
        cpu::quant::dequantizeScalar(t.type, blocks, rowLength, decoded.data());
        for (int64_t b = 0; b < rowLength / 32; ++b) {
          const float d = std::fabs(cpu::quant::fp16ToFloat(cpu::quant::loadU16(blocks + 18 * b)));
          QVERIFY(d > 0);
          for (int64_t j = 32 * b; j < 32 * (b + 1); ++j) {
            const float error = std::fabs(decoded[size_t(j)] - source[size_t(j)]);
            if (error > d * (1.0f + 8.0f / 2048.0f) + 1e-7f)
              QFAIL(qPrintable(QString("%1 row %2 element %3: %4 vs %5 (d %6)")
                                   .arg(t.name.c_str()).arg(row).arg(j)
                                   .arg(decoded[size_t(j)]).arg(source[size_t(j)]).arg(d)));
          }
        }
      }
    }
  }

  void rowsDecodeWithinTheirFormat_data() {
    QTest::addColumn<int>("type");
    // |error| <= (bound + largest code x 2^-11) x |d| (F16: exact rounding instead)
    QTest::addColumn<double>("boundInScales");
    QTest::addColumn<double>("largestCode");
    QTest::newRow("q8_0") << int(GgmlType::Q8_0) << 0.5 << 127.0;
    QTest::newRow("q4_0") << int(GgmlType::Q4_0) << 1.0 << 8.0;
    QTest::newRow("f16") << int(GgmlType::F16) << 0.0 << 0.0;
  }
  void rowsDecodeWithinTheirFormat() {
    QFETCH(int, type);
    QFETCH(double, boundInScales);
    QFETCH(double, largestCode);
    const float bound = float(boundInScales + largestCode / 2048.0);
    const auto ggml = GgmlType(type);
    constexpr int64_t n = 32 * 37;  // an odd number of blocks
    std::vector<float> source(n), decoded(n);
    model::syntheticRowValues(3, 1, 2, 0.02f, source.data(), n);
    source[5] = 0.0f;  // a zero and a lone large value in one block
    source[40] = 0.5f;
    std::vector<uint8_t> blocks(model::rowBytes(ggml, n));
    model::quantizeRow(ggml, source.data(), n, blocks.data());
    cpu::quant::dequantizeScalar(ggml, blocks.data(), n, decoded.data());
    const int64_t blockBytes = ggml == GgmlType::Q8_0 ? 34 : 18;
    for (int64_t j = 0; j < n; ++j) {
      if (ggml == GgmlType::F16) {
        QCOMPARE(decoded[size_t(j)], cpu::quant::roundThroughFp16(source[size_t(j)]));
        continue;
      }
      const float d =
          std::fabs(cpu::quant::fp16ToFloat(cpu::quant::loadU16(blocks.data() + blockBytes * (j / 32))));
      QVERIFY2(std::fabs(decoded[size_t(j)] - source[size_t(j)]) <= bound * d + 1e-7f,
               qPrintable(QString("element %1: %2 vs %3").arg(j).arg(decoded[size_t(j)]).arg(source[size_t(j)])));
    }
  }

  void sameBytesOnAnyThreadCount() {
    model::SyntheticModelSpec spec;
    spec.layers = 1;
    spec.type = GgmlType::Q8_0;
    spec.threads = 1;
    const std::string one = dir_.filePath("one-thread.gguf").toStdString();
    const std::string three = dir_.filePath("three-threads.gguf").toStdString();
    model::writeSyntheticModel(spec, one);
    spec.threads = 3;
    model::writeSyntheticModel(spec, three);
    QVERIFY(readAll(one) == readAll(three));
  }

  void tokenizerRoundTrips() {
    const auto file = gguf::GgufFile::open(q4Path_);
    const auto tokenizer = Tokenizer::fromGguf(*file);
    QCOMPARE(tokenizer->vocabSize(), size_t(49152));
    // SentencePiece with byte fallback encodes any text losslessly.
    const std::string text = "hello world, ünïcode 123!";
    const std::vector<TokenId> ids = tokenizer->encode(text, false, true);
    QCOMPARE(ids.front(), TokenId(1));  // <s>
    QCOMPARE(tokenizer->decode(ids), text);
  }

  void runsOnTheCpuWithFiniteLogits() {
    EngineOptions options;
    options.modelPath = q4Path_;
    options.backend = "cpu";
    options.contextLength = 64;
    options.maxSequences = 1;
    options.threads = 2;
    const auto engine = Engine::load(options);
    const std::vector<int32_t> ids = {1, 300, 4000, 49151};
    const std::vector<float> logits = engine->scoreTokens(ids);
    QCOMPARE(logits.size(), ids.size() * 49152);
    float lo = logits[0], hi = logits[0];
    for (float v : logits) {
      QVERIFY(std::isfinite(v));
      lo = std::min(lo, v);
      hi = std::max(hi, v);
    }
    QVERIFY(hi > lo);  // random weights give varied logits, not a constant

    GenerationRequest request;
    request.promptTokens = ids;
    request.sampling.temperature = 0;
    request.sampling.maxTokens = 4;
    request.ignoreEndOfGeneration = true;
    RequestStats stats;
    engine->addRequest(request, [&](const RequestEvent& e) {
      if (e.stats) stats = *e.stats;
    });
    while (engine->hasWork()) engine->step();
    QCOMPARE(stats.finishReason, FinishReason::Length);
    QCOMPARE(stats.generatedTokens, 4);
  }
};

QTEST_GUILESS_MAIN(TestSyntheticModel)
#include "test_synthetic_model.moc"
