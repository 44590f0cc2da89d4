// `ember-cli inspect` run as a separate process: on a small file written here (expected values
// follow from what the test writes and the ggml block layouts: Q8_0 = 34 bytes per 32 elements,
// Q4_K = 144 bytes per 256), its --json output parsed with Qt's JSON parser and its human
// output; a malformed file; and the two real models when downloaded (numbers read with the PyPI
// package gguf 0.19.0, as in test_gguf_real_files.cpp).
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QtTest>

#include "common/test_paths.h"
#include "gguf/gguf_writer.h"
#include "gguf_test_support.h"

using namespace ember::gguf;
using ember::test::sequentialBytes;

namespace {

// The CLI under test: EMBER_CLI overrides the build's ember-cli.
QString cliPath() {
  return qEnvironmentVariable("EMBER_CLI", ember::test::builtProgram("ember-cli"));
}

#define REQUIRE_CLI()                                                                           \
  do {                                                                                          \
    if (!QFileInfo::exists(cliPath())) {                                                        \
      const QString why_ = "ember-cli not built at " + cliPath() + " (build target ember-cli)"; \
      if (ember::test::underCi()) QFAIL(qPrintable(why_));                                      \
      QSKIP(qPrintable(why_));                                                                  \
    }                                                                                           \
  } while (0)

QStringList numbered(const char* prefix, int count) {
  QStringList out;
  for (int i = 0; i < count; ++i) out << QString(prefix) + QString::number(i);
  return out;
}

}  // namespace

class TestGgufInspectCli : public QObject {
  Q_OBJECT

 private:
  QTemporaryDir dir_;
  QString smallFile_;

 private slots:
  void initTestCase() {
    QVERIFY(dir_.isValid());
    smallFile_ = dir_.filePath("tiny.gguf");
    GgufWriter writer(3);
    writer.addString("general.architecture", "tiny");
    writer.addUInt32("tiny.context_length", 128);
    writer.addFloat32("tiny.epsilon", 0.25f);
    writer.addBool("tokenizer.ggml.add_bos_token", true);
    std::vector<std::string> tokens;
    for (const QString& t : numbered("tok", 20)) tokens.push_back(t.toStdString());
    writer.addStringArray("tokenizer.ggml.tokens", tokens);
    writer.addArray(
        "nested", ValueType::Array,
        {Value::makeArray(ValueType::Int32, {Value::makeInt32(-1), Value::makeInt32(2)})});
    writer.addTensor("embd", GgmlType::F32, {4, 2}, sequentialBytes(32));
    writer.addTensor("blk.0.q", GgmlType::Q8_0, {32, 3}, sequentialBytes(102));
    writer.addTensor("blk.0.k", GgmlType::Q4_K, {256, 2}, sequentialBytes(288));
    writer.writeFile(smallFile_.toStdString());
  }

  void printsJson() {
    REQUIRE_CLI();
    QByteArray out, err;
    QCOMPARE(ember::test::runProcess(cliPath(), {"inspect", smallFile_, "--json"}, &out, &err), 0);
    QJsonParseError parseError;
    const QJsonDocument doc = QJsonDocument::fromJson(out, &parseError);
    QVERIFY2(parseError.error == QJsonParseError::NoError, qPrintable(parseError.errorString()));
    const QJsonObject root = doc.object();
    QCOMPARE(root["version"].toInt(), 3);
    QCOMPARE(root["architecture"].toString(), QString("tiny"));
    QCOMPARE(root["alignment"].toInt(), 32);
    QCOMPARE(root["metadata_count"].toInt(), 6);
    QCOMPARE(root["tensor_count"].toInt(), 3);
    QCOMPARE(root["parameter_count"].toInteger(), 8 + 96 + 512);
    QCOMPARE(root["tensor_bytes"].toInteger(), 32 + 102 + 288);

    const QJsonObject metadata = root["metadata"].toObject();
    QCOMPARE(metadata.keys().size(), 6);
    QCOMPARE(metadata["tiny.context_length"].toObject()["type"].toString(), QString("uint32"));
    QCOMPARE(metadata["tiny.context_length"].toObject()["value"].toInt(), 128);
    QCOMPARE(metadata["tiny.epsilon"].toObject()["value"].toDouble(), 0.25);
    QCOMPARE(metadata["tokenizer.ggml.add_bos_token"].toObject()["value"].toBool(), true);
    const QJsonObject tokens = metadata["tokenizer.ggml.tokens"].toObject();
    QCOMPARE(tokens["type"].toString(), QString("array"));
    QCOMPARE(tokens["element_type"].toString(), QString("string"));
    QCOMPARE(tokens["count"].toInt(), 20);
    QCOMPARE(tokens["truncated"].toBool(), true);
    QStringList firstItems;
    for (const QJsonValue& v : tokens["items"].toArray()) firstItems << v.toString();
    QCOMPARE(firstItems, numbered("tok", 8));
    const QJsonObject nested = metadata["nested"].toObject();
    QCOMPARE(nested["count"].toInt(), 1);
    QCOMPARE(nested["items"].toArray()[0].toArray()[0].toInt(), -1);

    const QJsonArray tensors = root["tensors"].toArray();
    QCOMPARE(tensors.size(), 3);
    const QJsonObject k = tensors[2].toObject();
    QCOMPARE(k["name"].toString(), QString("blk.0.k"));
    QCOMPARE(k["type"].toString(), QString("Q4_K"));
    QCOMPARE(k["shape"].toArray(), (QJsonArray{256, 2}));
    QCOMPARE(k["bytes"].toInt(), 288);
    QCOMPARE(k["offset"].toInt(), 32 + 128);  // 32 bytes, then 102 rounded up to 128
    QCOMPARE(root["tensor_types"].toObject()["Q8_0"].toInt(), 1);
  }

  void printsHumanReadableSummary() {
    REQUIRE_CLI();
    QByteArray out, err;
    QCOMPARE(ember::test::runProcess(cliPath(), {"inspect", smallFile_}, &out, &err), 0);
    const QString text = QString::fromUtf8(out);
    for (const QString& expected :
         {QString("GGUF version:  3"), QString("architecture:  tiny"), QString("alignment:     32"),
          QString("\"tok6\", \"tok7\", ... (20 items)]"), QString("tensor count:  3"),
          QString("parameters:    616"), QString("[256, 2]"), QString("0.25")}) {
      QVERIFY2(text.contains(expected), qPrintable("missing '" + expected + "' in:\n" + text));
    }
  }

  void reportsMalformedFileWithOffset() {
    REQUIRE_CLI();
    const QString truncated = dir_.filePath("truncated.gguf");
    QFile in(smallFile_), out(truncated);
    QVERIFY(in.open(QIODevice::ReadOnly) && out.open(QIODevice::WriteOnly));
    // Header 24 bytes; metadata entries (8-byte key length, key, 4-byte type, value) of 44, 35,
    // 28, 41, 295 (45 + ten 12-byte and ten 13-byte strings) and 50 bytes end at 517, where the
    // tensor table starts: "embd" (8 + 4 bytes), its dimension count (4), then its first
    // dimension at 533. Cut the file 7 bytes into that dimension.
    out.write(in.readAll().left(540));
    out.close();
    QByteArray stdoutBytes, stderrBytes;
    QCOMPARE(ember::test::runProcess(cliPath(), {"inspect", truncated}, &stdoutBytes, &stderrBytes),
             1);
    const QString message = QString::fromUtf8(stderrBytes);
    QVERIFY2(
        message.contains(truncated +
                         ": at byte 533: file truncated: expected dimension 0 of tensor 'embd'"),
        qPrintable(message));
  }

  void inspectsRealModels_data() {
    QTest::addColumn<QString>("file");
    QTest::addColumn<QString>("architecture");
    QTest::addColumn<int>("tensorCount");
    QTest::addColumn<qint64>("parameters");
    QTest::newRow("SmolLM2") << "SmolLM2-135M-Instruct.Q4_1.gguf"
                             << "llama" << 272 << 134515008ll;
    QTest::newRow("gemma-3") << "gemma-3-270m-q4_k_m.gguf"
                             << "gemma3" << 236 << 268098176ll;
  }

  void inspectsRealModels() {
    QFETCH(QString, file);
    QFETCH(QString, architecture);
    QFETCH(int, tensorCount);
    QFETCH(qint64, parameters);
    REQUIRE_CLI();
    EMBER_REQUIRE_MODEL(path, file);
    QByteArray out, err;
    QCOMPARE(ember::test::runProcess(cliPath(), {"inspect", path, "--json"}, &out, &err), 0);
    const QJsonObject root = QJsonDocument::fromJson(out).object();
    QCOMPARE(root["architecture"].toString(), architecture);
    QCOMPARE(root["tensor_count"].toInt(), tensorCount);
    QCOMPARE(root["parameter_count"].toInteger(), parameters);
    QCOMPARE(root["metadata"].toObject()["tokenizer.ggml.tokens"].toObject()["truncated"].toBool(),
             true);
    QCOMPARE(ember::test::runProcess(cliPath(), {"inspect", path}, &out, &err), 0);
    QVERIFY(QString::fromUtf8(out).contains("parameters:    " + QString::number(parameters)));
  }
};

QTEST_APPLESS_MAIN(TestGgufInspectCli)
#include "test_gguf_inspect_cli.moc"
