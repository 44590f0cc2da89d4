// Every pre-tokenizer type against llama.cpp, including the types llama.cpp ships no vocabulary
// file for: the Llama 3 vocabulary (models/ggml-vocab-llama-bpe.gguf of llama.cpp's models/
// folder, fetched by scripts/fetch-llamacpp-vocab.sh) with tokenizer.ggml.pre set to one name of
// each type, on texts chosen to exercise the types' differences (digit grouping, CJK and kana,
// Thai, case-split words, contractions, combining marks, whitespace). Reference:
// data/llamacpp_pretokenizer_types.json, recorded by tests/tools/
// make_llamacpp_pretokenizer_reference.py with llama.cpp (PyPI llama-cpp-python 0.3.36) on the
// same file with the same name.
#include <QCryptographicHash>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QtTest>

#include "bpe_test_cases.h"
#include "tokenizer/bpe_tokenizer.h"
#include "tokenizer/gguf_vocabulary.h"

using namespace ember;
using namespace ember::test;

namespace {

QJsonObject loadReference() {
  QFile f(sourceDir() +
          QStringLiteral("/tests/engine/tokenizer/data/llamacpp_pretokenizer_types.json"));
  if (!f.open(QIODevice::ReadOnly)) return {};
  return QJsonDocument::fromJson(f.readAll()).object();
}

// The base vocabulary read once; a tokenizer per pre-tokenizer name built from it.
const GgufVocabulary& baseVocabulary(const QString& path) {
  static std::map<QString, GgufVocabulary> cache;
  auto it = cache.find(path);
  if (it == cache.end()) {
    it = cache.emplace(path, readGgufVocabulary(*gguf::GgufFile::open(path.toStdString()))).first;
  }
  return it->second;
}

const Tokenizer& tokenizerNamed(const QString& path, const QString& pre) {
  static std::map<QString, std::unique_ptr<Tokenizer>> cache;
  auto& slot = cache[pre];
  if (!slot) {
    GgufVocabulary vocab = baseVocabulary(path);
    vocab.pre = pre.toStdString();
    slot = makeBpeTokenizer(vocab);
  }
  return *slot;
}

}  // namespace

class TestLlamaCppPretokenizerTypes : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase() {
    reference_ = loadReference();
    QVERIFY2(!reference_.isEmpty(), "data/llamacpp_pretokenizer_types.json is missing or empty");
  }

  void theBaseFileIsTheOneRecorded() {
    const QString base = reference_.value(QStringLiteral("base")).toString();
    EMBER_REQUIRE_PATH(path, findLlamaCppVocab, base);
    QFile f(path);
    QVERIFY(f.open(QIODevice::ReadOnly));
    QCryptographicHash hash(QCryptographicHash::Sha256);
    hash.addData(&f);
    QCOMPARE(QString::fromLatin1(hash.result().toHex()),
             reference_.value(QStringLiteral("base_sha256")).toString());
  }

  void encodesLikeLlamaCpp_data() {
    QTest::addColumn<QString>("pre");
    QTest::addColumn<QString>("text");
    QTest::addColumn<QString>("expected");
    const QJsonArray texts = loadReference().value(QStringLiteral("texts")).toArray();
    const QJsonObject names = loadReference().value(QStringLiteral("names")).toObject();
    for (auto it = names.begin(); it != names.end(); ++it) {
      const QJsonArray cases = it.value().toArray();
      for (qsizetype i = 0; i < texts.size() && i < cases.size(); ++i) {
        QStringList ids;
        for (const auto& id : cases[i].toArray()) ids << QString::number(id.toInt());
        QTest::addRow("%s/%02d", qPrintable(it.key()), static_cast<int>(i))
            << it.key() << texts[i].toString() << ids.join(QLatin1Char(' '));
      }
    }
  }
  void encodesLikeLlamaCpp() {
    QFETCH(QString, pre);
    QFETCH(QString, text);
    QFETCH(QString, expected);
    EMBER_REQUIRE_PATH(path, findLlamaCppVocab, reference_.value(QStringLiteral("base")).toString());
    const Tokenizer& tokenizer = tokenizerNamed(path, pre);
    QCOMPARE(idsToString(tokenizer.encode(text.toStdString(), /*parseSpecial=*/false)), expected);
  }

 private:
  QJsonObject reference_;
};

QTEST_APPLESS_MAIN(TestLlamaCppPretokenizerTypes)
#include "test_llamacpp_pretokenizer_types.moc"
