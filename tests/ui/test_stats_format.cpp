// An answer's stats line and details from hand-made RequestStats: the prompt reuse ("reused N of
// M prompt tokens", RequestStats::cachedPromptTokens of promptTokens) and the backend the answer
// ran on, as shown right after the answer and again after the store is reopened.
// References: the expected strings are written out by hand from the figures below and the format
// the issue asks for ("reused N of M prompt tokens"); after a reload the line must equal the one
// built from the RequestStats before saving.
#include <QTemporaryDir>
#include <QtTest>

#include "controller/stats_format.h"
#include "store/chat_store.h"

using namespace ember;
using namespace ember::app;

namespace {

RequestStats handMadeStats(int32_t prompt, int32_t cached) {
  RequestStats s;
  s.ttftMs = 119.6;                // rounds to 120
  s.decodeTokensPerSecond = 48.24;  // one decimal: 48.2
  s.generatedTokens = 64;
  s.promptTokens = prompt;
  s.cachedPromptTokens = cached;
  s.interTokenMs = {10, 20, 30};
  s.finishReason = FinishReason::Length;
  s.seed = 42;
  return s;
}

QString detailRow(const QVariantMap& details, const QString& label) {
  for (const QVariant& row : details.value(QStringLiteral("rows")).toList()) {
    const QVariantList pair = row.toList();
    if (pair.value(0).toString() == label) return pair.value(1).toString();
  }
  return {};
}

}  // namespace

class StatsFormatTest : public QObject {
  Q_OBJECT
 private slots:
  void statsLine_data() {
    QTest::addColumn<int>("prompt");
    QTest::addColumn<int>("cached");
    QTest::addColumn<QString>("backend");
    QTest::addColumn<QString>("line");
    QTest::newRow("cold prompt, cpu")
        << 130 << 0 << "cpu (avx2, 2 threads)"
        << "TTFT 120 ms · 48.2 tok/s · 64 tokens · reused 0 of 130 prompt tokens · cpu (avx2, 2 threads)";
    QTest::newRow("cached prefix, cuda")
        << 130 << 96 << "cuda:0 (NVIDIA H200)"
        << "TTFT 120 ms · 48.2 tok/s · 64 tokens · reused 96 of 130 prompt tokens · cuda:0 (NVIDIA H200)";
    QTest::newRow("whole prompt cached")
        << 16 << 16 << "cpu"
        << "TTFT 120 ms · 48.2 tok/s · 64 tokens · reused 16 of 16 prompt tokens · cpu";
    // Stats saved before the backend was recorded, or a prompt never measured: parts left out.
    QTest::newRow("no backend") << 130 << 32 << ""
                                << "TTFT 120 ms · 48.2 tok/s · 64 tokens · reused 32 of 130 prompt tokens";
    QTest::newRow("no prompt measured") << 0 << 0 << "cpu"
                                        << "TTFT 120 ms · 48.2 tok/s · 64 tokens · cpu";
  }
  void statsLine() {
    QFETCH(int, prompt);
    QFETCH(int, cached);
    QFETCH(QString, backend);
    QFETCH(QString, line);
    const store::MessageStats stats =
        toMessageStats(handMadeStats(prompt, cached), {5.0, 15.0}, {}, "/m/model.gguf", backend);
    QCOMPARE(stats.cachedTokens, qint64(cached));
    QCOMPARE(stats.promptTokens, qint64(prompt));
    QCOMPARE(stats.backend, backend);
    QCOMPARE(compactStatsLine(stats), line);
  }

  void detailsNameReuseAndBackend() {
    const store::MessageStats stats =
        toMessageStats(handMadeStats(130, 96), {5.0}, {}, "/m/model.gguf", "cuda:0 (NVIDIA H200)");
    const QVariantMap details = statsDetails(stats);
    QCOMPARE(detailRow(details, "Prompt reuse (prefix cache)"),
             QStringLiteral("reused 96 of 130 prompt tokens"));
    QCOMPARE(detailRow(details, "Prompt / cached / generated tokens"),
             QStringLiteral("130 / 96 / 64"));
    QCOMPARE(detailRow(details, "Backend"), QStringLiteral("cuda:0 (NVIDIA H200)"));
    QCOMPARE(detailRow(details, "Model"), QStringLiteral("model.gguf"));
  }

  // The reuse and the backend are stored with the answer and come back after a reopen.
  void reuseAndBackendSurviveReopen() {
    QTemporaryDir dir;
    const QString path = dir.filePath("ember.sqlite");
    const store::MessageStats saved = toMessageStats(handMadeStats(130, 96), {5.0, 15.0}, {},
                                                     "/m/model.gguf", "cuda:0 (NVIDIA H200)");
    store::Id answer = 0;
    {
      store::ChatStore chats;
      chats.open(path);
      const store::Id conversation = chats.createConversation("대화");
      const store::Id user =
          chats.addMessage(conversation, 0, store::Role::User, QStringLiteral("안녕하세요"));
      answer = chats.beginAssistantMessage(user, "/m/model.gguf");
      chats.finishAssistantMessage(answer, QStringLiteral("반갑습니다"),
                                   store::MessageStatus::Complete, saved);
    }
    store::ChatStore again;
    again.open(path);
    const auto back = again.stats(answer);
    QVERIFY(back.has_value());
    QCOMPARE(back->cachedTokens, qint64(96));
    QCOMPARE(back->promptTokens, qint64(130));
    QCOMPARE(back->backend, QStringLiteral("cuda:0 (NVIDIA H200)"));
    QCOMPARE(compactStatsLine(*back), compactStatsLine(saved));
    QCOMPARE(again.message(answer)->content, QStringLiteral("반갑습니다"));
  }

  // The details show the sampling settings as rows, not as JSON. Reference: the settings the
  // controller records (samplingJson's keys), labelled as in the settings panel.
  void samplingAsRows() {
    const QJsonObject sampling{{"temperature", 0.7}, {"top_p", 0.95}, {"top_k", 40},
                               {"min_p", 0.05}, {"repeat_penalty", 1.1}, {"max_tokens", -1},
                               {"seed", "random"}, {"dropped_turns", 2}, {"future_knob", "x"}};
    const QVariantList rows = samplingRows(sampling);
    QStringList flat;
    for (const QVariant& row : rows)
      flat << row.toList().value(0).toString() + " = " + row.toList().value(1).toString();
    QCOMPARE(flat, (QStringList{"Temperature = 0.7", "Top-p = 0.95", "Top-k = 40",
                                "Min-p = 0.05", "Repeat penalty = 1.1", "Max tokens = -1",
                                "Older messages left out = 2", "future_knob = x"}));
    const store::MessageStats s = toMessageStats(handMadeStats(10, 0), {}, sampling, "m", "cpu");
    const QVariantList all = statsDetails(s).value("rows").toList();
    for (const QVariant& row : all)
      QVERIFY2(!row.toList().value(1).toString().startsWith('{'), "a row shows raw JSON");
  }
};

QTEST_GUILESS_MAIN(StatsFormatTest)
#include "test_stats_format.moc"
