// Ember's tokenizers on the real models' own vocabularies against llama.cpp.
// Reference: tests/engine/tokenizer/data/real_models_llamacpp.json, recorded by
// tests/tools/make_llamacpp_tokenizer_reference.py with llama.cpp (PyPI llama-cpp-python 0.3.36).
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QtTest>

#include "common/test_paths.h"
#include "gguf/gguf_file.h"
#include "tokenizer/tokenizer.h"

using ember::TokenId;

namespace {

QJsonObject loadReference() {
  QFile f(ember::test::sourceDir() +
          QStringLiteral("/tests/engine/tokenizer/data/real_models_llamacpp.json"));
  if (!f.open(QIODevice::ReadOnly)) return {};
  return QJsonDocument::fromJson(f.readAll()).object();
}

QString idsToString(const std::vector<TokenId>& ids) {
  QStringList parts;
  for (TokenId id : ids) parts << QString::number(id);
  return parts.join(QLatin1Char(' '));
}

QString idsToString(const QJsonArray& ids) {
  QStringList parts;
  for (const auto& id : ids) parts << QString::number(id.toInt());
  return parts.join(QLatin1Char(' '));
}

}  // namespace

class RealVocabLlamaCpp : public QObject {
  Q_OBJECT

 private slots:
  void encodeMatchesLlamaCpp_data() {
    QTest::addColumn<QString>("model");
    QTest::addColumn<QString>("text");
    QTest::addColumn<bool>("special");
    QTest::addColumn<QString>("expected");
    const QJsonObject models = loadReference().value(QStringLiteral("models")).toObject();
    QVERIFY2(!models.isEmpty(), "reference fixture real_models_llamacpp.json is missing or empty");
    for (auto it = models.begin(); it != models.end(); ++it) {
      int index = 0;
      for (const auto& c : it.value().toObject().value(QStringLiteral("cases")).toArray()) {
        const QJsonObject o = c.toObject();
        const QByteArray tag = (it.key().left(7) + QLatin1Char('#') + QString::number(index++))
                                   .toUtf8();
        QTest::newRow(tag.constData())
            << it.key() << o.value(QStringLiteral("text")).toString()
            << o.value(QStringLiteral("special")).toBool()
            << idsToString(o.value(QStringLiteral("ids")).toArray());
      }
    }
  }

  void encodeMatchesLlamaCpp() {
    QFETCH(QString, model);
    QFETCH(QString, text);
    QFETCH(bool, special);
    QFETCH(QString, expected);
    EMBER_REQUIRE_MODEL(path, model);
    const auto& tokenizer = cachedTokenizer(path);
    const QByteArray utf8 = text.toUtf8();
    const std::vector<TokenId> ids =
        tokenizer.encode(std::string_view(utf8.constData(), utf8.size()), special);
    QCOMPARE(idsToString(ids), expected);
    if (!special) {
      // Plain text decodes back to itself.
      QCOMPARE(QString::fromStdString(tokenizer.decode(ids)), text);
    }
  }

  // The same through the stable CLI interface that outside tools use.
  void cliTokenizeMatchesLlamaCpp() {
    EMBER_REQUIRE_MODEL(path, QStringLiteral("SmolLM2-135M-Instruct.Q4_1.gguf"));
    const QJsonArray cases = loadReference()
                                 .value(QStringLiteral("models")).toObject()
                                 .value(QStringLiteral("SmolLM2-135M-Instruct.Q4_1.gguf"))
                                 .toObject().value(QStringLiteral("cases")).toArray();
    QVERIFY(cases.size() > 2);
    const QJsonObject korean = cases.at(2).toObject();
    QByteArray out, err;
    const int rc = ember::test::runProcess(
        ember::test::builtProgram("ember-cli"),
        {QStringLiteral("tokenize"), QStringLiteral("--vocab"), path, QStringLiteral("--text"),
         korean.value(QStringLiteral("text")).toString()},
        &out, &err);
    QVERIFY2(rc == 0, err.constData());
    QCOMPARE(QString::fromUtf8(out).trimmed(),
             idsToString(korean.value(QStringLiteral("ids")).toArray()));
  }

 private:
  const ember::Tokenizer& cachedTokenizer(const QString& path) {
    auto& slot = tokenizers_[path];
    if (!slot) {
      const auto file = ember::gguf::GgufFile::open(path.toStdString());
      slot = ember::Tokenizer::fromGguf(*file);
    }
    return *slot;
  }
  std::map<QString, std::unique_ptr<ember::Tokenizer>> tokenizers_;
};

QTEST_APPLESS_MAIN(RealVocabLlamaCpp)
#include "test_real_vocab_llamacpp.moc"
