// The list models under Qt's own QAbstractItemModelTester (which checks every signal and index
// against the QAbstractItemModel contract as each change happens), driven by scripted changes
// whose expected rows are written out here. The model picker's figures for the real default
// model are compared with its publisher's description: SmolLM2-135M-Instruct (Hugging Face
// model card and config.json: LlamaForCausalLM, 135M parameters, max_position_embeddings 8192),
// quantized as Q4_1 (the GGUF's file name); a bad file shows the GGUF reader's own message.
#include <QAbstractItemModelTester>
#include <QFile>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QtTest>

#include "common/test_paths.h"
#include "gguf/gguf_file.h"
#include "models/conversation_list_model.h"
#include "models/message_model.h"
#include "models/model_list_model.h"
#include "models/search_result_model.h"

using namespace ember::app;

namespace {
QStringList titles(const ConversationListModel& m) {
  QStringList out;
  for (int i = 0; i < m.rowCount(); ++i)
    out << m.data(m.index(i), ConversationListModel::TitleRole).toString();
  return out;
}
}  // namespace

class ListModelsTest : public QObject {
  Q_OBJECT
 private slots:
  void conversationList() {
    ConversationListModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    const QDateTime t = QDateTime::currentDateTimeUtc();
    model.setConversations({{3, "c", t}, {2, "b", t}, {1, "a", t}});
    QCOMPARE(titles(model), QStringList({"c", "b", "a"}));
    model.touch({1, "a2", t.addSecs(5)});  // updated: moves to the top
    QCOMPARE(titles(model), QStringList({"a2", "c", "b"}));
    model.touch({4, "new", t.addSecs(6)});  // created: inserted at the top
    QCOMPARE(titles(model), QStringList({"new", "a2", "c", "b"}));
    model.rename(3, "renamed");
    QCOMPARE(titles(model), QStringList({"new", "a2", "renamed", "b"}));
    model.remove(2);
    model.remove(99);  // unknown: nothing happens
    QCOMPARE(titles(model), QStringList({"new", "a2", "renamed"}));
    QCOMPARE(model.idAt(0), 4);
    QCOMPARE(model.idAt(7), 0);
    model.setConversations({});
    QCOMPARE(model.rowCount(), 0);
  }

  void messages() {
    MessageModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    model.setMessages({{1, "user", "Hi", "complete", {}, {}, 0, 1},
                       {2, "assistant", "", "streaming", {}, {}, 0, 2}});
    QSignalSpy changed(&model, &QAbstractItemModel::dataChanged);
    QVERIFY(model.appendText(2, "Hel"));
    QVERIFY(model.appendText(2, "lo 안녕"));
    QVERIFY(!model.appendText(42, "x"));
    QCOMPARE(changed.count(), 2);
    const QModelIndex answer = model.index(1);
    QCOMPARE(model.data(answer, MessageModel::TextRole).toString(), QStringLiteral("Hello 안녕"));
    QCOMPARE(model.data(answer, MessageModel::StreamingRole).toBool(), true);
    QCOMPARE(model.data(answer, MessageModel::SiblingCountRole).toInt(), 2);
    model.finishMessage(2, "complete", "TTFT 10 ms · 50.0 tok/s · 3 tokens");
    QCOMPARE(model.data(answer, MessageModel::StreamingRole).toBool(), false);
    QCOMPARE(model.data(answer, MessageModel::StatsLineRole).toString(),
             QStringLiteral("TTFT 10 ms · 50.0 tok/s · 3 tokens"));
    QCOMPARE(model.data(answer, MessageModel::IsLastRole).toBool(), true);
    model.appendMessage({3, "user", "More", "complete", {}, {}, 0, 1});
    QCOMPARE(model.data(answer, MessageModel::IsLastRole).toBool(), false);
    QCOMPARE(model.rowOf(3), 2);
    QCOMPARE(model.lastId(), 3);
    model.clear();
    QCOMPARE(model.rowCount(), 0);
  }

  void searchResults() {
    SearchResultModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    model.setResults({{1, 10, "Chat", "<b>hello</b> there"}, {2, 20, "Other", "say <b>hello</b>"}});
    QCOMPARE(model.rowCount(), 2);
    QCOMPARE(model.data(model.index(1), SearchResultModel::MessageIdRole).toLongLong(), 20);
    model.setResults({});
    QCOMPARE(model.rowCount(), 0);
  }

  void modelPicker() {
    ModelListModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    QCOMPARE(model.rowCount(), 1);  // only "Open file..."
    QVERIFY(model.data(model.index(0), ModelListModel::IsOpenFileRole).toBool());

    QTemporaryDir dir;
    QFile bad(dir.filePath("broken.gguf"));
    QVERIFY(bad.open(QIODevice::WriteOnly));
    bad.write("GGUF");  // truncated right after the magic
    bad.close();
    QString readerMessage;
    try {
      ember::gguf::GgufFile::open(bad.fileName().toStdString());
    } catch (const ember::Error& e) {
      readerMessage = QString::fromUtf8(e.what());
    }
    QVERIFY(!readerMessage.isEmpty());
    model.scan({dir.path(), dir.filePath("missing-folder")});
    QCOMPARE(model.rowCount(), 2);
    QCOMPARE(model.data(model.index(0), ModelListModel::ErrorRole).toString(), readerMessage);
    QCOMPARE(model.data(model.index(0), ModelListModel::FileNameRole).toString(),
             QStringLiteral("broken.gguf"));

    EMBER_REQUIRE_MODEL(path, "SmolLM2-135M-Instruct.Q4_1.gguf");
    const ModelFileInfo info = describeModelFile(path);
    QVERIFY2(info.error.isEmpty(), qPrintable(info.error));
    QCOMPARE(info.architecture, QStringLiteral("llama"));
    QCOMPARE(formatParameterCount(info.parameterCount), QStringLiteral("135M"));
    QCOMPARE(info.contextLength, 8192);
    QCOMPARE(info.quantization, QStringLiteral("Q4_1"));
    QCOMPARE(info.fileSize, QFileInfo(path).size());
    QVERIFY(info.memoryEstimate > info.fileSize);
    QCOMPARE(model.addFile(info), 1);  // after the broken one, before "Open file..."
    QCOMPARE(model.addFile(info), 1);  // already listed
    QCOMPARE(model.rowCount(), 3);
    QVERIFY(model.data(model.index(2), ModelListModel::IsOpenFileRole).toBool());
    QVERIFY(model.data(model.index(1), ModelListModel::SummaryRole).toString().startsWith(
        QStringLiteral("llama · 135M · Q4_1 · ctx 8192")));
  }
};

QTEST_GUILESS_MAIN(ListModelsTest)
#include "test_list_models.moc"
