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

// The reference names its rule sets after the Hugging Face families; llama.cpp's type names.
PreTokenizer ruleSetNamed(const QString& name) {
  if (name == QLatin1String("gpt-2")) return PreTokenizer::ofType("gpt2");
  return PreTokenizer::ofType(name.toStdString());
}

}  // namespace

class TestBpePretokenizer : public QObject {
  Q_OBJECT

 private slots:
  void picksRulesByName_data() {
    // tokenizer.ggml.pre -> llama.cpp's type, and whether it ignores merges (from
    // llama_vocab::load in llama.cpp's src/llama-vocab.cpp).
    QTest::addColumn<QString>("pre");
    QTest::addColumn<QString>("type");
    QTest::addColumn<bool>("ignoreMerges");
    QTest::newRow("gpt-2") << "gpt-2" << "gpt2" << false;
    QTest::newRow("default") << "default" << "default" << false;
    QTest::newRow("empty name") << "" << "default" << false;
    QTest::newRow("llama-bpe") << "llama-bpe" << "llama3" << true;
    QTest::newRow("llama3") << "llama3" << "llama3" << true;
    QTest::newRow("smaug-bpe") << "smaug-bpe" << "llama3" << false;
    QTest::newRow("glm4") << "glm4" << "llama3" << true;
    QTest::newRow("qwen2") << "qwen2" << "qwen2" << false;
    QTest::newRow("qwen35") << "qwen35" << "qwen35" << false;
    QTest::newRow("starcoder") << "starcoder" << "starcoder" << false;
    QTest::newRow("smollm") << "smollm" << "starcoder" << false;
    QTest::newRow("falcon") << "falcon" << "falcon" << false;
    QTest::newRow("deepseek-llm") << "deepseek-llm" << "deepseek-llm" << false;
    QTest::newRow("deepseek-coder") << "deepseek-coder" << "deepseek-coder" << false;
    QTest::newRow("deepseek-v3") << "deepseek-v3" << "deepseek3-llm" << false;
    QTest::newRow("tekken") << "tekken" << "tekken" << true;
    QTest::newRow("llama4") << "llama4" << "gpt4o" << false;
    QTest::newRow("gemma4") << "gemma4" << "gemma4" << false;
  }
  void picksRulesByName() {
    QFETCH(QString, pre);
    QFETCH(QString, type);
    QFETCH(bool, ignoreMerges);
    const PreTokenizer p = PreTokenizer::forName(pre.toStdString());
    QCOMPARE(QString::fromStdString(std::string(p.typeName())), type);
    QCOMPARE(p.ignoresMerges(), ignoreMerges);
  }

  // A name llama.cpp does not know is refused with an error naming it (never split by some other
  // rules).
  void refusesUnknownNames_data() {
    QTest::addColumn<QString>("pre");
    QTest::newRow("unknown") << "some-future-model";
    QTest::newRow("near miss") << "qwen-2";
  }
  void refusesUnknownNames() {
    QFETCH(QString, pre);
    try {
      (void)PreTokenizer::forName(pre.toStdString());
      QFAIL("no error");
    } catch (const Error& e) {
      QVERIFY2(QString::fromUtf8(e.what()).contains(QLatin1Char('\'') + pre + QLatin1Char('\'')),
               e.what());
    }
  }

  // Every type's regexes translate and compile in PCRE2.
  void everyTypeCompiles() {
    for (const auto& name : {"default", "gpt2", "llama3", "jais2", "deepseek-llm", "deepseek3-llm",
                             "spark2_5", "youtu", "deepseek-coder", "falcon", "starcoder", "qwen2",
                             "qwen35", "bloom", "viking", "tekken", "chameleon", "gpt4o",
                             "granite-emb-multi", "tiny-aya", "superbpe", "bailingmoe",
                             "seed-coder", "ufakzeka", "afmoe", "laguna", "exaone-moe", "gemma4",
                             "sarvam-moe", "minicpm5", "whitespace", "kimi-k2"}) {
      const PreTokenizer p = PreTokenizer::ofType(name);
      QVERIFY(!p.split("Hello world 123 ½ 안녕").empty());
    }
  }

  // Hand-worked splits of the rules whose behaviour differs from a plain reading of the regex:
  // llama.cpp's \s is White_Space (U+0085 included), \d and \b are ASCII, an empty match splits,
  // and the digit splitter attaches leading text to the first group of three.
  void llamaCppSemantics() {
    const auto words = [](std::string_view type, std::string_view text) {
      QStringList out;
      for (std::string_view w : PreTokenizer::ofType(type).split(text))
        out << QString::fromUtf8(w.data(), static_cast<qsizetype>(w.size()));
      return out;
    };
    QCOMPARE(words("gpt2", "a\xC2\x85" "b"), (QStringList{"a", "\u0085", "b"}));
    QCOMPARE(words("superbpe", "1234567"), (QStringList{"1", "234", "567"}));
    QCOMPARE(words("afmoe", "ab1234 x"), (QStringList{"ab", "1", "234", " x"}));
    QCOMPARE(words("deepseek-llm", "a  "), (QStringList{"a", "  "}));
    QCOMPARE(PreTokenizer::translateRegex(R"(\d\p{Lu}[\s])"),
             std::string(R"([0-9]\p{L}[\t-\r \x{85}\x{A0}\x{1680}\x{2000}-\x{200A}\x{2028}\x{2029}\x{202F}\x{205F}\x{3000}])"));
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
    const PreTokenizer p = ruleSetNamed(ruleSet);
    const std::string utf8 = text.toStdString();
    QStringList actual;
    for (std::string_view w : p.split(utf8)) actual << QString::fromUtf8(w.data(), w.size());
    QCOMPARE(actual, words);
  }

  void rejectsIllFormedUtf8() {
    const PreTokenizer p = PreTokenizer::ofType("gpt2");
    QVERIFY_THROWS_EXCEPTION(Error, p.split("abc\xC3"));
  }

  // A long run of one class must neither overflow PCRE2's JIT stack nor take quadratic time.
  void handlesLongRuns() {
    const PreTokenizer p = PreTokenizer::ofType("llama3");
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
