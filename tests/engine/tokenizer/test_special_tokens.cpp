// Special tokens on the qwen2 vocabulary: text typed by a user (parseSpecial off) never becomes a
// control token, text rendered by a chat template (parseSpecial on) does. Expected ids come from
// Hugging Face tokenizers 0.23.3 built from the same vocabulary (encode_special_tokens for the
// user case), in data/qwen2_special_reference.json made by tests/tools/make_bpe_reference.py.
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QtTest>

#include "bpe_test_cases.h"

using namespace ember;
using namespace ember::test;

namespace {

QJsonArray loadCases() {
  QFile file(sourceDir() + QStringLiteral("/tests/engine/tokenizer/data/qwen2_special_reference.json"));
  if (!file.open(QIODevice::ReadOnly)) return {};
  return QJsonDocument::fromJson(file.readAll()).object().value(QStringLiteral("cases")).toArray();
}

// Control token ids of ggml-vocab-qwen2.gguf (read with gguf-py 0.19.0).
constexpr TokenId kEndOfText = 151643, kImStart = 151644, kImEnd = 151645;

}  // namespace

class TestSpecialTokens : public QObject {
  Q_OBJECT

 private slots:
  void matchesTheReference_data() {
    QTest::addColumn<QString>("text");
    QTest::addColumn<bool>("parseSpecial");
    QTest::addColumn<QString>("ids");
    const QJsonArray cases = loadCases();
    if (cases.isEmpty()) QTest::newRow("missing") << QString() << false << QStringLiteral("?");
    for (const QJsonValue& c : cases) {
      const bool parse = c[QStringLiteral("parse_special")].toBool();
      QStringList ids;
      for (const QJsonValue& id : c[QStringLiteral("ids")].toArray()) ids << QString::number(id.toInt());
      QTest::addRow("%s/%s", qPrintable(c[QStringLiteral("name")].toString()),
                    parse ? "template" : "user")
          << c[QStringLiteral("text")].toString() << parse << ids.join(QLatin1Char(' '));
    }
  }
  void matchesTheReference() {
    QFETCH(QString, text);
    QFETCH(bool, parseSpecial);
    QFETCH(QString, ids);
    QVERIFY2(ids != QLatin1String("?"), "data/qwen2_special_reference.json is missing or empty");
    EMBER_REQUIRE_TESTDATA(path, vocabFile(QStringLiteral("qwen2")));
    const Tokenizer& tokenizer = cachedTokenizer(path);
    const std::vector<TokenId> actual = tokenizer.encode(text.toStdString(), parseSpecial);
    QCOMPARE(idsToString(actual), ids);
    if (!parseSpecial) {
      for (TokenId id : actual) QVERIFY(tokenizer.tokenType(id) != TokenType::Control);
    }
    QCOMPARE(QString::fromStdString(tokenizer.decode(actual, /*renderSpecial=*/true)), text);
  }

  void typedImStartIsPlainText() {
    EMBER_REQUIRE_TESTDATA(path, vocabFile(QStringLiteral("qwen2")));
    const Tokenizer& tokenizer = cachedTokenizer(path);
    const auto typed = tokenizer.encode("<|im_start|>", false);
    QVERIFY(typed.size() > 1);
    QVERIFY(std::find(typed.begin(), typed.end(), kImStart) == typed.end());
    QCOMPARE(tokenizer.encode("<|im_start|>", true), std::vector<TokenId>{kImStart});
  }

  void specialIdsComeFromMetadata() {
    EMBER_REQUIRE_TESTDATA(path, vocabFile(QStringLiteral("qwen2")));
    const Tokenizer& tokenizer = cachedTokenizer(path);
    // tokenizer.ggml.bos/eos/padding_token_id of the file are all <|endoftext|>.
    QCOMPARE(tokenizer.special().bos, std::optional<TokenId>(kEndOfText));
    QCOMPARE(tokenizer.special().eos, std::optional<TokenId>(kEndOfText));
    QCOMPARE(tokenizer.special().pad, std::optional<TokenId>(kEndOfText));
    QCOMPARE(tokenizer.findToken("<|im_end|>"), std::optional<TokenId>(kImEnd));
    QVERIFY(tokenizer.isEndOfGeneration(kEndOfText));
    QVERIFY(tokenizer.isEndOfGeneration(kImEnd));  // ChatML's end of turn
    QVERIFY(!tokenizer.isEndOfGeneration(kImStart));
    QCOMPARE(tokenizer.tokenType(kImStart), TokenType::Control);
  }

  void addsBosAndEosOnlyWhenAsked() {
    EMBER_REQUIRE_TESTDATA(path, vocabFile(QStringLiteral("qwen2")));
    const Tokenizer& tokenizer = cachedTokenizer(path);
    const auto plain = tokenizer.encode("Hi", false);
    auto framed = plain;
    framed.insert(framed.begin(), kEndOfText);
    framed.push_back(kEndOfText);
    QCOMPARE(tokenizer.encode("Hi", false, /*addBos=*/true, /*addEos=*/true), framed);
    QCOMPARE(tokenizer.encode("", false, true, false), std::vector<TokenId>{kEndOfText});
  }

  // Ill-formed input is repaired to U+FFFD before tokenizing, never passed to the regex engine.
  void repairsIllFormedInput() {
    EMBER_REQUIRE_TESTDATA(path, vocabFile(QStringLiteral("qwen2")));
    const Tokenizer& tokenizer = cachedTokenizer(path);
    const auto ids = tokenizer.encode(std::string("a\xFF" "b\0c", 5), false);
    QCOMPARE(ids, tokenizer.encode(std::string("a\xEF\xBF\xBD" "b\0c", 7), false));
    QCOMPARE(tokenizer.decode(ids), std::string("a\xEF\xBF\xBD" "b\0c", 7));
  }
};

QTEST_APPLESS_MAIN(TestSpecialTokens)
#include "test_special_tokens.moc"
