// The list models under Qt's own QAbstractItemModelTester (which checks every signal and index
// against the QAbstractItemModel contract as each change happens), driven by scripted changes
// whose expected rows are written out here. The model picker's figures for the real default
// model are compared with its publisher's description: SmolLM2-135M-Instruct (Hugging Face
// model card and config.json: LlamaForCausalLM, 135M parameters, max_position_embeddings 8192),
// quantized as Q4_1 (the GGUF's file name); a bad file shows the GGUF reader's own message.
// The picker's "will it fit" line is model::planMemory's plan (tested on its own in
// tests/engine/model/test_memory_plan.cpp) for the same inputs, with the KV cache checked by
// hand: SmolLM2 has 30 layers x 3 KV heads x (64 + 64) x 2 bytes = 23040 bytes per token.
#include <QAbstractItemModelTester>
#include <QElapsedTimer>
#include <QFile>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QtTest>

#include "common/store_open_wait.h"
#include "common/test_paths.h"
#include "controller/app_controller.h"
#include "gguf/gguf_file.h"
#include "model/memory_plan.h"
#include "model/model_config.h"
#include "models/conversation_list_model.h"
#include "models/message_model.h"
#include "models/model_list_model.h"
#include "models/model_memory_fit.h"
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
    // Designated fields: MessageRow grows (reasoning, live status) without shifting these.
    model.setMessages(
        {{.id = 1, .role = "user", .text = "Hi", .status = "complete", .siblingCount = 1},
         {.id = 2, .role = "assistant", .text = "", .status = "streaming", .siblingCount = 2}});
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
    model.appendMessage(
        {.id = 3, .role = "user", .text = "More", .status = "complete", .siblingCount = 1});
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
    QVERIFY(info.configured);
    QCOMPARE(model.addFile(info), 1);  // after the broken one, before "Open file..."
    QCOMPARE(model.addFile(info), 1);  // already listed
    QCOMPARE(model.rowCount(), 3);
    QVERIFY(model.data(model.index(2), ModelListModel::IsOpenFileRole).toBool());
    QVERIFY(model.data(model.index(1), ModelListModel::SummaryRole).toString().startsWith(
        QStringLiteral("llama · 135M · Q4_1 · ctx 8192")));
  }

  void memoryFitLine() {
    EMBER_REQUIRE_MODEL(path, "SmolLM2-135M-Instruct.Q4_1.gguf");
    QElapsedTimer timer;
    timer.start();
    const ModelFileInfo info = describeModelFile(path);
    qInfo("describeModelFile (header, tensor table, config): %lld ms", timer.elapsed());
    QVERIFY2(info.error.isEmpty() && info.configured, qPrintable(info.error + info.configError));
    // The weights: every tensor as stored, summed here from the reader's table.
    quint64 tensorBytes = 0;
    const auto file = ember::gguf::GgufFile::open(path.toStdString());  // outlives the loop
    for (const auto& t : file->tensors()) tensorBytes += t.byteSize;
    QCOMPARE(info.weightBytes, tensorBytes);
    QCOMPARE(info.kvBytesPerToken, uint64_t(23040));

    MemoryFitSettings settings;
    settings.contextLength = 2048;
    settings.sequences = 4;
    settings.stepTokens = 512;
    settings.availableBytes = quint64(8) << 30;
    settings.where = QStringLiteral("system RAM");
    const MemoryFit fit = memoryFit(info, settings);
    ember::model::MemoryPlanInput input;
    input.weightBytes = tensorBytes;
    input.kvBytesPerToken = 23040;
    input.contextLength = 2048;
    input.sequences = 4;
    input.workspaceBytes =
        ember::model::estimateWorkspaceBytes(ember::model::readModelConfig(*file), 512, 4);
    QCOMPARE(info.workspaceBytes(512, 4), input.workspaceBytes);
    input.availableBytes = quint64(8) << 30;
    const ember::model::MemoryPlan reference = ember::model::planMemory(input);
    QVERIFY(fit.known && fit.fits);
    QCOMPARE(fit.plan.kvCacheBytes, uint64_t(188743680));  // 23040 x 2048 x 4
    QCOMPARE(fit.plan.neededBytes, reference.neededBytes);
    QCOMPARE(fit.plan.neededBytes, tensorBytes + 188743680 + input.workspaceBytes);
    QCOMPARE(fit.plan.largestContext, reference.largestContext);
    QCOMPARE(fit.line, QStringLiteral("fits: needs %1 of 8.0 GiB free in system RAM")
                           .arg(QString::fromStdString(
                               ember::model::formatBytes(reference.neededBytes))));

    ModelListModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    model.addFile(info);
    QCOMPARE(model.data(model.index(0), ModelListModel::FitRole).toString(), QString());
    QVERIFY(model.data(model.index(0), ModelListModel::FitsRole).toBool());  // unknown: no line
    QSignalSpy changed(&model, &QAbstractItemModel::dataChanged);
    model.setFitSettings(settings);
    QCOMPARE(changed.count(), 1);
    QCOMPARE(model.data(model.index(0), ModelListModel::FitRole).toString(), fit.line);
    QVERIFY(model.data(model.index(0), ModelListModel::FitsRole).toBool());

    // Room for the weights, the workspace and 1000 tokens of 4 sequences: the largest context
    // is 1000, shown as 768 (steps of 256).
    settings.availableBytes = tensorBytes + input.workspaceBytes + 1000 * 4 * 23040;
    model.setFitSettings(settings);
    const QString tooBig = model.data(model.index(0), ModelListModel::FitRole).toString();
    QVERIFY(!model.data(model.index(0), ModelListModel::FitsRole).toBool());
    input.availableBytes = *settings.availableBytes;
    QCOMPARE(tooBig, QStringLiteral("too big for system RAM: ") +
                         QString::fromStdString(ember::model::planMemory(input).message));
    QVERIFY2(tooBig.contains(QStringLiteral("the largest context that fits is 768 tokens")),
             qPrintable(tooBig));

    // A tiny forced "available": not even the weights fit.
    settings.availableBytes = 1024;
    const MemoryFit tiny = memoryFit(info, settings);
    QVERIFY(tiny.known && !tiny.fits);
    QVERIFY2(tiny.line.contains(QStringLiteral("but 1.0 KiB is free; the weights and workspace "
                                               "alone need")),
             qPrintable(tiny.line));

    // Context 0: the model's own, at most the engine's default (8192 -> 4096).
    settings.contextLength = 0;
    settings.availableBytes = quint64(8) << 30;
    QCOMPARE(plannedContext(info, settings), qint64(4096));
    QCOMPARE(memoryFit(info, settings).plan.kvCacheBytes, uint64_t(23040) * 4096 * 4);
    // More than the model was trained for: the engine refuses it, and so does the line.
    settings.contextLength = 16384;
    const MemoryFit tooLong = memoryFit(info, settings);
    QVERIFY(tooLong.known && !tooLong.fits);
    QCOMPARE(tooLong.line, QStringLiteral("too big: context 16384 is more than the model's 8192"));
  }

  void controllerFeedsThePicker() {
    // The controller's picker lines follow the load settings: the need in each line is
    // memoryFit's for the chosen context and answers at once (the free figure moves with the
    // machine, so only the need is compared). Without a CUDA device the free memory is system
    // RAM (this test assumes none, as on CI).
    EMBER_REQUIRE_MODEL(path, "SmolLM2-135M-Instruct.Q4_1.gguf");
    QTemporaryDir dir;
    AppController::Options options;
    options.databasePath = dir.filePath("ember.sqlite");
    options.modelFolders = {QFileInfo(path).absolutePath()};
    AppController controller(options);
    QVERIFY(ember::test::waitForStoreOpen(controller));
    ModelListModel& model = *controller.models();
    int row = -1;
    for (int i = 0; i < model.files().size(); ++i)
      if (model.files()[i].path == QFileInfo(path).absoluteFilePath()) row = i;
    QVERIFY(row >= 0);
    const ModelFileInfo& info = model.files()[row];
    const auto needFor = [&](qint64 context, int sequences) {
      MemoryFitSettings settings;
      settings.contextLength = context;
      settings.sequences = sequences;
      settings.availableBytes = 0;
      return QString::fromStdString(
          ember::model::formatBytes(memoryFit(info, settings).plan.neededBytes));
    };
    const auto line = [&] {
      return model.data(model.index(row), ModelListModel::FitRole).toString();
    };
    // "fits: needs X of ..." or, on a small machine, "too big for system RAM: needs X (...".
    const auto needs = [&](qint64 context, int sequences) {
      return line().contains(QStringLiteral("needs %1 ").arg(needFor(context, sequences)));
    };
    // Built-in settings: the model's context capped at 4096, 4 answers at once.
    QTRY_VERIFY_WITH_TIMEOUT(needs(4096, 4), 10000);
    QVERIFY2(line().contains(QStringLiteral("system RAM")), qPrintable(line()));
    QVERIFY(controller.setSetting(QStringLiteral("maxSequences"), 16));
    QTRY_VERIFY_WITH_TIMEOUT(needs(4096, 16), 10000);
  }
};

QTEST_GUILESS_MAIN(ListModelsTest)
#include "test_list_models.moc"
