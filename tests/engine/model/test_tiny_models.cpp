// The forward pass on tiny random models (F32, in tests/engine/model/data/) that exercise what
// the two real models do not: qwen2's q/k/v biases with NEOX RoPE; llama with Llama-3.1-style
// rope_freqs factors, linear RoPE scaling and grouped queries; gemma3 with a 4-position sliding
// window on every other layer, its own local RoPE base and final-logit soft-capping.
// Reference: llama.cpp's logits on the same files (make_tiny_models.py in the same folder, PyPI
// llama-cpp-python 0.3.36), at every position of a 14-token prompt, printed to 5 decimals.
// F32 weights leave llama.cpp and us free to sum in different orders, so logits must agree to
// 1e-4, not to the bit; the prompt is checked in one prefill and token by token.
#include <QCryptographicHash>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QtTest>
#include <cmath>

#include "backend/cpu/cpu_backend.h"
#include "common/test_paths.h"
#include "model/model_config.h"
#include "paged_sequence.h"

using namespace ember;

namespace {

constexpr float kTolerance = 1e-4f;

QString dataDir() { return test::sourceDir() + "/tests/engine/model/data/"; }

QJsonObject loadGolden() {
  QFile f(dataDir() + "tiny-models.golden.json");
  if (!f.open(QIODevice::ReadOnly)) return {};
  return QJsonDocument::fromJson(f.readAll()).object();
}

}  // namespace

class TestTinyModels : public QObject {
  Q_OBJECT

 private slots:
  void matchesLlamaCpp_data() {
    QTest::addColumn<QString>("name");
    QTest::addColumn<QString>("expectedDescription");  // the config features under test
    QTest::newRow("qwen2 biases") << "tiny-qwen2" << "rope neox base 1e+06";
    QTest::newRow("llama rope_freqs + linear scaling") << "tiny-llama3" << "scale 0.5";
    QTest::newRow("gemma3 window 4, pattern 2") << "tiny-gemma3"
                                                << "sliding window 4 on 2 of 4 layers (rope base 100)";
  }

  void matchesLlamaCpp() {
    QFETCH(QString, name);
    QFETCH(QString, expectedDescription);
    const QJsonObject golden = loadGolden();
    QVERIFY2(!golden.isEmpty(), "cannot read tests/engine/model/data/tiny-models.golden.json");
    const QJsonObject entry = golden["models"].toObject()[name].toObject();
    const QString path = dataDir() + entry["model_file"].toString();
    QFile modelFile(path);
    QVERIFY2(modelFile.open(QIODevice::ReadOnly), qPrintable("cannot read " + path));
    QCOMPARE(QString::fromLatin1(
                 QCryptographicHash::hash(modelFile.readAll(), QCryptographicHash::Sha256).toHex()),
             entry["model_sha256"].toString());

    std::vector<TokenId> prompt;
    for (const QJsonValue& v : golden["prompt_ids"].toArray()) prompt.push_back(v.toInt());
    const QJsonArray reference = entry["logits"].toArray();
    QCOMPARE(size_t(reference.size()), prompt.size());

    const auto file = gguf::GgufFile::open(path.toStdString());
    const model::ModelConfig config = model::readModelConfig(*file);
    const QString description = QString::fromStdString(config.describe());
    QVERIFY2(description.contains(expectedDescription), qPrintable(description));
    cpu::CpuBackend backend(*file, config, 2);
    backend.allocateKvCache({4, 16});  // blocks of 4: the prompt spans 4 of them
    const size_t vocab = backend.vocabSize();

    const auto compareRow = [&](size_t position, std::span<const float> ours) {
      const QJsonArray row = reference[qsizetype(position)].toArray();
      QCOMPARE(size_t(row.size()), vocab);
      float maxDiff = 0;
      std::vector<float> expected(vocab);
      for (size_t i = 0; i < vocab; ++i) {
        expected[i] = float(row[qsizetype(i)].toDouble());
        maxDiff = std::max(maxDiff, std::abs(expected[i] - ours[i]));
      }
      QVERIFY2(maxDiff <= kTolerance,
               qPrintable(QStringLiteral("position %1: max |diff| %2").arg(position).arg(maxDiff)));
      QCOMPARE(test::argmax(ours), test::argmax(expected));
    };

    test::PagedSequence prefill(4, 0, 4, 5);
    const std::vector<float> logits = prefill.prefillAll(backend, prompt, int32_t(prompt.size()));
    for (size_t p = 0; p < prompt.size(); ++p)
      compareRow(p, std::span(logits).subspan(p * vocab, vocab));

    test::PagedSequence decode(4, 8, 4, 6);
    ForwardOutput out;
    for (size_t p = 0; p < prompt.size(); ++p) compareRow(p, decode.step(backend, prompt[p], out));
  }
};

QTEST_APPLESS_MAIN(TestTinyModels)
#include "test_tiny_models.moc"
