// Every case of RELIABILITY.md "Settings" (15-18) against the documented decision for it
// (sampling_params.h). The reference for what is valid: the cases themselves, llama.cpp's
// semantics for top-k 0 = off, top-p keeping at least one token and n_predict -1 = unlimited,
// and OpenAI's [-2, 2] range for frequency and presence penalties. A rejected value must produce
// a message naming the field and the value, so the user knows what to fix.
#include <QtTest>

#include <cmath>
#include <limits>

#include "ember/error.h"
#include "ember/sampling_params.h"

using namespace ember;

namespace {

constexpr size_t kVocab = 49152;   // SmolLM2's vocabulary
constexpr int32_t kContext = 8192;  // SmolLM2's trained context

// Sets one field by name from a double (the table's common type).
SamplingParams withField(const QString& field, double value) {
  SamplingParams params;
  if (field == "temperature") params.temperature = float(value);
  else if (field == "top-p") params.topP = float(value);
  else if (field == "top-k") params.topK = int32_t(value);
  else if (field == "min-p") params.minP = float(value);
  else if (field == "repeat-penalty") params.repeatPenalty = float(value);
  else if (field == "frequency-penalty") params.frequencyPenalty = float(value);
  else if (field == "presence-penalty") params.presencePenalty = float(value);
  else if (field == "penalty-last-n") params.penaltyLastN = int32_t(value);
  else if (field == "max-tokens") params.maxTokens = int64_t(value);
  else qFatal("unknown field in the test table");
  return params;
}

// The message of the ember::Error that `action` throws, or a null QString if none.
template <typename Action>
QString errorOf(Action action) {
  try {
    action();
  } catch (const Error& error) {
    return QString::fromStdString(error.what());
  }
  return {};
}

}  // namespace

class TestSamplingParams : public QObject {
  Q_OBJECT

 private slots:
  void defaultsAreValid() {
    const SamplingParams params;
    QCOMPARE(params.temperature, 0.8f);
    QCOMPARE(params.topK, 40);
    QCOMPARE(params.topP, 0.95f);
    QCOMPARE(params.minP, 0.05f);
    QCOMPARE(params.repeatPenalty, 1.0f);
    QCOMPARE(params.penaltyLastN, 64);
    QCOMPARE(params.maxTokens, int64_t(-1));
    QVERIFY(!params.seed.has_value());
    validate(params, kVocab, kContext);
  }

  void fields_data() {
    const double nan = std::numeric_limits<double>::quiet_NaN();
    const double inf = std::numeric_limits<double>::infinity();
    QTest::addColumn<QString>("field");
    QTest::addColumn<double>("value");
    QTest::addColumn<QString>("rejectedAs");  // empty = valid; else "field = value" in the error

    // 15. Temperature: 0 is greedy; negative, NaN, infinite and 1e6 are rejected (bound 100).
    QTest::newRow("temperature 0 (greedy)") << "temperature" << 0.0 << "";
    QTest::newRow("temperature 1") << "temperature" << 1.0 << "";
    QTest::newRow("temperature 100") << "temperature" << 100.0 << "";
    QTest::newRow("temperature -1") << "temperature" << -1.0 << "temperature = -1";
    QTest::newRow("temperature nan") << "temperature" << nan << "temperature = nan";
    QTest::newRow("temperature inf") << "temperature" << inf << "temperature = inf";
    QTest::newRow("temperature -inf") << "temperature" << -inf << "temperature = -inf";
    QTest::newRow("temperature 1e6") << "temperature" << 1e6 << "temperature = 1e+06";
    QTest::newRow("temperature 100.5") << "temperature" << 100.5 << "temperature = 100.5";

    // 16. top-p: 0 = only the best token, 1 = off; 1.5 and NaN rejected.
    QTest::newRow("top-p 0") << "top-p" << 0.0 << "";
    QTest::newRow("top-p 1") << "top-p" << 1.0 << "";
    QTest::newRow("top-p 1.5") << "top-p" << 1.5 << "top-p = 1.5";
    QTest::newRow("top-p nan") << "top-p" << nan << "top-p = nan";
    QTest::newRow("top-p -0.1") << "top-p" << -0.1 << "top-p = -0.1";
    // top-k: 0 = off, larger than the vocabulary = clamped (valid); -1 rejected.
    QTest::newRow("top-k 0") << "top-k" << 0.0 << "";
    QTest::newRow("top-k > vocabulary") << "top-k" << 1e9 << "";
    QTest::newRow("top-k -1") << "top-k" << -1.0 << "top-k = -1";
    // min-p outside [0, 1].
    QTest::newRow("min-p 0") << "min-p" << 0.0 << "";
    QTest::newRow("min-p 1") << "min-p" << 1.0 << "";
    QTest::newRow("min-p -0.5") << "min-p" << -0.5 << "min-p = -0.5";
    QTest::newRow("min-p 1.01") << "min-p" << 1.01 << "min-p = 1.01";
    QTest::newRow("min-p nan") << "min-p" << nan << "min-p = nan";

    // Penalties.
    QTest::newRow("repeat 1 (off)") << "repeat-penalty" << 1.0 << "";
    QTest::newRow("repeat 0") << "repeat-penalty" << 0.0 << "repeat-penalty = 0";
    QTest::newRow("repeat 11") << "repeat-penalty" << 11.0 << "repeat-penalty = 11";
    QTest::newRow("frequency 2") << "frequency-penalty" << 2.0 << "";
    QTest::newRow("frequency -2") << "frequency-penalty" << -2.0 << "";
    QTest::newRow("frequency 2.5") << "frequency-penalty" << 2.5 << "frequency-penalty = 2.5";
    QTest::newRow("presence nan") << "presence-penalty" << nan << "presence-penalty = nan";
    QTest::newRow("last-n -1 (context)") << "penalty-last-n" << -1.0 << "";
    QTest::newRow("last-n 0 (off)") << "penalty-last-n" << 0.0 << "";
    QTest::newRow("last-n -2") << "penalty-last-n" << -2.0 << "penalty-last-n = -2";

    // 17. Max tokens: -1 = until the model stops or the context is full; 0 is rejected (a
    // request that may not produce anything is a mistake); 2^31 is valid and capped by the
    // context (see effectiveMaxTokens).
    QTest::newRow("max-tokens -1") << "max-tokens" << -1.0 << "";
    QTest::newRow("max-tokens 1") << "max-tokens" << 1.0 << "";
    QTest::newRow("max-tokens 2^31") << "max-tokens" << 2147483648.0 << "";
    QTest::newRow("max-tokens 0") << "max-tokens" << 0.0 << "max-tokens = 0";
    QTest::newRow("max-tokens -2") << "max-tokens" << -2.0 << "max-tokens = -2";
  }
  void fields() {
    QFETCH(QString, field);
    QFETCH(double, value);
    QFETCH(QString, rejectedAs);
    const SamplingParams params = withField(field, value);
    const QString error = errorOf([&] { validate(params, kVocab, kContext); });
    if (rejectedAs.isEmpty()) {
      QVERIFY2(error.isNull(), qPrintable(error));
    } else {
      QVERIFY2(error.contains(rejectedAs), qPrintable("message: " + error));
      QVERIFY2(error.contains("allowed"), qPrintable("no allowed range in: " + error));
    }
  }

  void stopStrings() {
    SamplingParams params;
    params.stop = {"</s>", "\n\nUser:", "사용자:"};
    validate(params, kVocab, kContext);
    params.stop = {"ok", ""};
    QVERIFY(errorOf([&] { validate(params, kVocab, kContext); }).contains("must not be empty"));
    params.stop.assign(kMaxStopStrings + 1, "x");
    QVERIFY(errorOf([&] { validate(params, kVocab, kContext); }).contains("stop"));
  }

  void modelSizesMustBePositive() {
    QVERIFY(!errorOf([&] { validate(SamplingParams{}, 0, kContext); }).isNull());
    QVERIFY(!errorOf([&] { validate(SamplingParams{}, kVocab, 0); }).isNull());
  }

  // 18. Seed: "-1" means random; every 64-bit value, 2^64-1 included, is a seed.
  void seeds_data() {
    QTest::addColumn<QString>("text");
    QTest::addColumn<bool>("valid");
    QTest::addColumn<bool>("random");
    QTest::addColumn<quint64>("expected");
    QTest::newRow("-1") << "-1" << true << true << quint64(0);
    QTest::newRow("random") << "random" << true << true << quint64(0);
    QTest::newRow("0") << "0" << true << false << quint64(0);
    QTest::newRow("42") << "42" << true << false << quint64(42);
    QTest::newRow("2^64-1") << "18446744073709551615" << true << false
                            << quint64(18446744073709551615ull);
    QTest::newRow("2^64") << "18446744073709551616" << false << false << quint64(0);
    QTest::newRow("-2") << "-2" << false << false << quint64(0);
    QTest::newRow("empty") << "" << false << false << quint64(0);
    QTest::newRow("letters") << "abc" << false << false << quint64(0);
    QTest::newRow("trailing junk") << "12x" << false << false << quint64(0);
    QTest::newRow("leading space") << " 12" << false << false << quint64(0);
  }
  void seeds() {
    QFETCH(QString, text);
    QFETCH(bool, valid);
    QFETCH(bool, random);
    QFETCH(quint64, expected);
    const std::string utf8 = text.toStdString();
    std::optional<uint64_t> seed;
    const QString error = errorOf([&] { seed = parseSeed(utf8); });
    QCOMPARE(error.isNull(), valid);
    if (!valid) {
      QVERIFY2(error.contains("seed"), qPrintable(error));
      return;
    }
    QCOMPARE(seed.has_value(), !random);
    if (seed) QCOMPARE(*seed, uint64_t(expected));
  }

  void effectiveMaxTokens_data() {
    QTest::addColumn<qint64>("maxTokens");
    QTest::addColumn<int>("prompt");
    QTest::addColumn<int>("expected");
    // Context 2048; the room left is 2048 - prompt.
    QTest::newRow("-1 = room left") << qint64(-1) << 100 << 1948;
    QTest::newRow("2^31 capped") << qint64(2147483648) << 100 << 1948;
    QTest::newRow("smaller than room") << qint64(50) << 100 << 50;
    QTest::newRow("context full") << qint64(50) << 2048 << 0;
    QTest::newRow("prompt beyond context") << qint64(-1) << 3000 << 0;
  }
  void effectiveMaxTokens() {
    QFETCH(qint64, maxTokens);
    QFETCH(int, prompt);
    QFETCH(int, expected);
    SamplingParams params;
    params.maxTokens = maxTokens;
    QCOMPARE(ember::effectiveMaxTokens(params, 2048, prompt), expected);
  }

  void contextLength() {
    validateContextLength(4096, 8192);
    validateContextLength(8192, 8192);
    const QString tooLong = errorOf([] { validateContextLength(8193, 8192); });
    QVERIFY2(tooLong.contains("8193") && tooLong.contains("8192"), qPrintable(tooLong));
    QVERIFY(!errorOf([] { validateContextLength(0, 8192); }).isNull());
    QVERIFY(!errorOf([] { validateContextLength(-1, 8192); }).isNull());
  }
};

QTEST_APPLESS_MAIN(TestSamplingParams)
#include "test_sampling_params.moc"
