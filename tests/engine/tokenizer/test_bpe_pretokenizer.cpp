// The pre-tokenizer's split rules against Hugging Face tokenizers' own pre-tokenizers, configured
// as each family's tokenizer.json configures them (data/bpe_pretokenizer_reference.json, made by
// tests/tools/make_bpe_reference.py with tokenizers 0.23.3), and the tokenizer.ggml.pre names
// mapped to rule sets as llama.cpp's convert_hf_to_gguf.py names them.
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QtTest>

#include "ember/error.h"
#include "common/test_paths.h"
#include "tokenizer/pretokenizer.h"

using namespace ember;

namespace {

QJsonObject loadReference() {
  QFile file(test::sourceDir() + QStringLiteral("/tests/engine/tokenizer/data/bpe_pretokenizer_reference.json"));
  if (!file.open(QIODevice::ReadOnly)) return {};
  return QJsonDocument::fromJson(file.readAll()).object();
}

PreTokenizer::RuleSet ruleSetNamed(const QString& name) {
  if (name == QLatin1String("llama3")) return PreTokenizer::RuleSet::Llama3;
  if (name == QLatin1String("qwen2")) return PreTokenizer::RuleSet::Qwen2;
  if (name == QLatin1String("starcoder")) return PreTokenizer::RuleSet::StarCoder;
  return PreTokenizer::RuleSet::Gpt2;
}

}  // namespace

class TestBpePretokenizer : public QObject {
  Q_OBJECT

 private slots:
  void picksRulesByName_data() {
    QTest::addColumn<QString>("pre");
    QTest::addColumn<QString>("ruleSet");
    QTest::addColumn<bool>("fallback");
    QTest::newRow("gpt-2") << "gpt-2" << "gpt-2" << false;
    QTest::newRow("default") << "default" << "gpt-2" << false;
    QTest::newRow("llama-bpe") << "llama-bpe" << "llama3" << false;
    QTest::newRow("llama3") << "llama3" << "llama3" << false;
    QTest::newRow("smaug-bpe") << "smaug-bpe" << "llama3" << false;
    QTest::newRow("qwen2") << "qwen2" << "qwen2" << false;
    QTest::newRow("starcoder") << "starcoder" << "starcoder" << false;
    QTest::newRow("smollm") << "smollm" << "starcoder" << false;
    QTest::newRow("unknown name") << "some-future-model" << "gpt-2" << true;
    QTest::newRow("empty name") << "" << "gpt-2" << true;
  }
  void picksRulesByName() {
    QFETCH(QString, pre);
    QFETCH(QString, ruleSet);
    QFETCH(bool, fallback);
    const PreTokenizer p = PreTokenizer::forName(pre.toStdString());
    QCOMPARE(QString::fromStdString(std::string(p.ruleSetName())), ruleSet);
    QCOMPARE(p.usedFallback(), fallback);
    QCOMPARE(p.ignoresMerges(), ruleSet == QLatin1String("llama3"));
  }

  void splitsLikeHuggingFace_data() {
    QTest::addColumn<QString>("ruleSet");
    QTest::addColumn<QString>("text");
    QTest::addColumn<QStringList>("words");
    const QJsonObject reference = loadReference();
    const QJsonObject ruleSets = reference.value(QStringLiteral("rule_sets")).toObject();
    if (ruleSets.isEmpty()) {
      QTest::newRow("missing") << QString() << QString() << QStringList();
      return;
    }
    for (auto it = ruleSets.begin(); it != ruleSets.end(); ++it) {
      int row = 0;
      for (const QJsonValue& entry : it.value().toArray()) {
        QStringList words;
        for (const QJsonValue& w : entry[QStringLiteral("words")].toArray()) words << w.toString();
        QTest::addRow("%s/%d", qPrintable(it.key()), row++)
            << it.key() << entry[QStringLiteral("text")].toString() << words;
      }
    }
  }
  void splitsLikeHuggingFace() {
    QFETCH(QString, ruleSet);
    QFETCH(QString, text);
    QFETCH(QStringList, words);
    QVERIFY2(!ruleSet.isEmpty(), "data/bpe_pretokenizer_reference.json is missing or empty");
    const PreTokenizer p(ruleSetNamed(ruleSet));
    const std::string utf8 = text.toStdString();
    QStringList actual;
    for (std::string_view w : p.split(utf8)) actual << QString::fromUtf8(w.data(), w.size());
    QCOMPARE(actual, words);
  }

  void rejectsIllFormedUtf8() {
    const PreTokenizer p(PreTokenizer::RuleSet::Gpt2);
    QVERIFY_THROWS_EXCEPTION(Error, p.split("abc\xC3"));
  }

  // A long run of one class must neither overflow PCRE2's JIT stack nor take quadratic time.
  void handlesLongRuns() {
    const PreTokenizer p(PreTokenizer::RuleSet::Llama3);
    const std::string letters(1 << 20, 'a');
    QCOMPARE(p.split(letters).size(), size_t(1));
    const std::string spaces = std::string(1 << 20, ' ') + "x";
    const auto words = p.split(spaces);
    QCOMPARE(words.size(), size_t(2));  // the spaces but the last, then " x"
    QCOMPARE(words[1], std::string_view(" x"));
  }
};

QTEST_APPLESS_MAIN(TestBpePretokenizer)
#include "test_bpe_pretokenizer.moc"
