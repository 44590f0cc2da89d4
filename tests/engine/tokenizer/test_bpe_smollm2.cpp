// SmolLM2-135M-Instruct's own vocabulary (the default model, byte-level BPE, pre = smollm)
// against ids made by an independent peer: Hugging Face tokenizers 0.23.3 built from the same
// GGUF with SmolLM2's tokenizer.json pre-tokenizer (data/smollm2_reference.json, made by
// tests/tools/make_bpe_reference.py, which first checks that peer against llama.cpp's vectors).
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QtTest>

#include "bpe_test_cases.h"
#include "tokenizer/bpe_tokenizer.h"

using namespace ember;
using namespace ember::test;

namespace {

const QString kModel = QStringLiteral("SmolLM2-135M-Instruct.Q4_1.gguf");

QJsonObject loadReference() {
  QFile file(sourceDir() + QStringLiteral("/tests/engine/tokenizer/data/smollm2_reference.json"));
  if (!file.open(QIODevice::ReadOnly)) return {};
  return QJsonDocument::fromJson(file.readAll()).object();
}

}  // namespace

class TestBpeSmollm2 : public QObject {
  Q_OBJECT

 private slots:
  void vocabularyIsReadAsSmolLM2() {
    EMBER_REQUIRE_MODEL(path, kModel);
    const Tokenizer& tokenizer = cachedTokenizer(path);
    const auto* bpe = dynamic_cast<const BpeTokenizer*>(&tokenizer);
    QVERIFY(bpe);
    QCOMPARE(QString::fromStdString(bpe->preName()), QStringLiteral("smollm"));
    QCOMPARE(QString::fromStdString(std::string(bpe->preTokenizer().typeName())),
             loadReference().value(QStringLiteral("rule_set")).toString());
    // Values read with gguf-py 0.19.0 from the same file.
    QCOMPARE(tokenizer.vocabSize(), size_t(49152));
    QCOMPARE(tokenizer.special().bos, std::optional<TokenId>(1));
    QCOMPARE(tokenizer.special().eos, std::optional<TokenId>(2));
    QCOMPARE(tokenizer.special().addBos, false);
    QCOMPARE(tokenizer.findToken("<|im_start|>"), std::optional<TokenId>(1));
    // ChatML's <|im_end|> (eos) and <|endoftext|> both end generation.
    QVERIFY(tokenizer.isEndOfGeneration(2));
    QVERIFY(tokenizer.isEndOfGeneration(0));
    QVERIFY(!tokenizer.isEndOfGeneration(1));
  }

  void encodesLikeTheReference_data() {
    QTest::addColumn<QString>("text");
    QTest::addColumn<bool>("parseSpecial");
    QTest::addColumn<QString>("ids");
    QTest::addColumn<QString>("decoded");
    const QJsonArray cases = loadReference().value(QStringLiteral("cases")).toArray();
    if (cases.isEmpty()) QTest::newRow("missing") << QString() << false << QStringLiteral("?") << QString();
    for (const QJsonValue& c : cases) {
      QStringList ids;
      for (const QJsonValue& id : c[QStringLiteral("ids")].toArray()) ids << QString::number(id.toInt());
      QTest::newRow(qPrintable(c[QStringLiteral("name")].toString()))
          << c[QStringLiteral("text")].toString() << c[QStringLiteral("parse_special")].toBool()
          << ids.join(QLatin1Char(' ')) << c[QStringLiteral("decoded")].toString();
    }
  }
  void encodesLikeTheReference() {
    QFETCH(QString, text);
    QFETCH(bool, parseSpecial);
    QFETCH(QString, ids);
    QFETCH(QString, decoded);
    QVERIFY2(ids != QLatin1String("?"), "data/smollm2_reference.json is missing or empty");
    EMBER_REQUIRE_MODEL(path, kModel);
    const Tokenizer& tokenizer = cachedTokenizer(path);
    const std::string utf8 = text.toStdString();
    const std::vector<TokenId> actual = tokenizer.encode(utf8, parseSpecial);
    QCOMPARE(idsToString(actual), ids);
    // The peer's decode of the same ids (control tokens rendered); it differs from the text only
    // where the vocabulary has no token for a byte.
    QCOMPARE(QString::fromStdString(tokenizer.decode(actual, /*renderSpecial=*/true)), decoded);
  }
};

QTEST_APPLESS_MAIN(TestBpeSmollm2)
#include "test_bpe_smollm2.moc"
