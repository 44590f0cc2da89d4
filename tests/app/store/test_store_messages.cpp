// ChatStore values: text round-trips byte for byte (Korean, decomposed Hangul, emoji, NUL, a
// 1 MB paste), per-message stats, and settings layering. References: the input itself, read
// back both through the store and as raw UTF-8 bytes over a separate SQLite connection (UTF-8
// as produced by Qt's encoder, which follows RFC 3629); layering rules from the issue.
#include <QJsonArray>
#include <QTemporaryDir>
#include <QtTest>
#include <limits>

#include "store/chat_store.h"
#include "store_test_support.h"

using namespace ember::store;

class StoreMessagesTest : public QObject {
  Q_OBJECT

 private slots:
  void init() {
    QVERIFY(dir_.isValid());
    store_.open(dir_.filePath(QString("messages-%1.db").arg(++counter_)));
    conversation_ = store_.createConversation("values");
  }
  void cleanup() { store_.close(); }

  void textRoundTrips_data() {
    QTest::addColumn<QString>("text");
    QTest::newRow("korean") << QStringLiteral("안녕하세요! 오늘 기분이 어때요?");
    // U+1100 U+1161 U+11A8: 각 as three conjoining jamo (NFD); must not be normalised to U+AC01.
    QTest::newRow("decomposed hangul") << QString::fromUcs4(U"\u1100\u1161\u11A8 vs \uAC01");
    QTest::newRow("emoji with zwj") << QString::fromUcs4(U"family \U0001F468\u200D\U0001F469");
    QTest::newRow("embedded NUL") << QString::fromUtf8("before\0after", 12);
    QTest::newRow("control tokens as text") << QStringLiteral("</s><|im_end|><|im_start|>system");
    QTest::newRow("right-to-left") << QStringLiteral("שלום עולם مرحبا");
    QTest::newRow("quotes and sql") << QStringLiteral("it's \"quoted\"; DROP TABLE messages; --");
    QString big;
    while (big.size() < 1024 * 1024 / 3 + 1) big += QStringLiteral("한글 텍스트 ");
    QTest::newRow("1 MB paste") << big;  // > 1 MiB as UTF-8
  }

  void textRoundTrips() {
    QFETCH(QString, text);
    const Id id = store_.addMessage(conversation_, 0, Role::User, text);
    QCOMPARE(store_.message(id)->content, text);
    ember::store::test::RawDb raw(store_.path());
    QCOMPARE(raw.contentBytes(id), text.toUtf8());
    reopen();
    QCOMPARE(store_.message(id)->content, text);
  }

  void answerLifecycle() {
    const Id question = store_.addMessage(conversation_, 0, Role::User, "질문");
    const Id answer = store_.beginAssistantMessage(question, "gemma-3-270m");
    std::optional<Message> m = store_.message(answer);
    QCOMPARE(m->status, MessageStatus::Streaming);
    QCOMPARE(m->role, Role::Assistant);
    QCOMPARE(m->parentId, question);
    QCOMPARE(m->model, QStringLiteral("gemma-3-270m"));
    QCOMPARE(store_.conversation(conversation_)->activeLeafId, answer);
    store_.checkpoint(answer, "부분");
    QCOMPARE(store_.message(answer)->content, QStringLiteral("부분"));
    store_.finishAssistantMessage(answer, "부분적인 답", MessageStatus::Stopped);
    m = store_.message(answer);
    QCOMPARE(m->status, MessageStatus::Stopped);
    QCOMPARE(m->content, QStringLiteral("부분적인 답"));
    QCOMPARE(m->finishReason, QStringLiteral("stopped"));  // no stats: the status says why
    QVERIFY(!store_.stats(answer));
  }

  void statsRoundTrip() {
    const Id question = store_.addMessage(conversation_, 0, Role::User, "q");
    const Id answer = store_.beginAssistantMessage(question, "m");
    MessageStats s;
    s.queueWaitMs = 0.25;
    s.tokenizeMs = 1.5;
    s.prefillMs = 12.75;
    s.prefillTokensPerSecond = 1234.5;
    s.ttftMs = 14.5;
    s.itlP50Ms = 8.25;
    s.itlP95Ms = 11.0;
    s.itlMaxMs = 40.125;
    s.decodeTokensPerSecond = 120.0;
    s.totalMs = 530.0;
    s.promptTokens = 17;
    s.cachedTokens = 5;
    s.generatedTokens = 64;
    s.finishReason = "length";
    s.sampling = QJsonObject{{"temperature", 0.7}, {"top_k", 40}, {"top_p", 0.95}};
    s.seed = std::numeric_limits<quint64>::max();  // 2^64-1 must survive a signed column
    s.model = "SmolLM2-135M-Instruct.Q4_1.gguf";
    s.backend = "cpu";
    s.tokenTimesMs = {14.5, 22.75, 31.0, 71.125};
    store_.finishAssistantMessage(answer, "text", MessageStatus::Complete, s);

    reopen();
    const std::optional<MessageStats> back = store_.stats(answer);
    QVERIFY(back);
    QCOMPARE(back->queueWaitMs, s.queueWaitMs);
    QCOMPARE(back->tokenizeMs, s.tokenizeMs);
    QCOMPARE(back->prefillMs, s.prefillMs);
    QCOMPARE(back->prefillTokensPerSecond, s.prefillTokensPerSecond);
    QCOMPARE(back->ttftMs, s.ttftMs);
    QCOMPARE(back->itlP50Ms, s.itlP50Ms);
    QCOMPARE(back->itlP95Ms, s.itlP95Ms);
    QCOMPARE(back->itlMaxMs, s.itlMaxMs);
    QCOMPARE(back->decodeTokensPerSecond, s.decodeTokensPerSecond);
    QCOMPARE(back->totalMs, s.totalMs);
    QCOMPARE(back->promptTokens, s.promptTokens);
    QCOMPARE(back->cachedTokens, s.cachedTokens);
    QCOMPARE(back->generatedTokens, s.generatedTokens);
    QCOMPARE(back->finishReason, s.finishReason);
    QCOMPARE(back->sampling, s.sampling);
    QCOMPARE(back->seed, s.seed);
    QCOMPARE(back->model, s.model);
    QCOMPARE(back->backend, s.backend);
    QCOMPARE(back->tokenTimesMs, s.tokenTimesMs);
    QCOMPARE(store_.message(answer)->finishReason, QStringLiteral("length"));
  }

  void settingsLayer() {
    const QJsonObject builtIn{{"temperature", 0.8}, {"top_k", 40}, {"system_prompt", ""}};
    QCOMPARE(store_.effectiveSettings(conversation_, builtIn), builtIn);

    store_.setDefaultConversationSettings(QJsonObject{{"temperature", 0.5}});
    store_.setConversationSettings(conversation_,
                                   QJsonObject{{"system_prompt", "존댓말로 답하세요"}});
    const Id other = store_.createConversation("other");
    store_.setConversationSettings(other, QJsonObject{{"temperature", 0.0}});

    // Hand-computed: built-in < app-wide default < conversation, key by key.
    QCOMPARE(store_.effectiveSettings(conversation_, builtIn),
             (QJsonObject{{"temperature", 0.5}, {"top_k", 40},
                          {"system_prompt", "존댓말로 답하세요"}}));
    QCOMPARE(store_.effectiveSettings(other, builtIn),
             (QJsonObject{{"temperature", 0.0}, {"top_k", 40}, {"system_prompt", ""}}));
    QCOMPARE(store_.conversationSettings(other), (QJsonObject{{"temperature", 0.0}}));
  }

  void appSettings_data() {
    QTest::addColumn<QJsonValue>("value");
    QTest::newRow("string") << QJsonValue("/models/a.gguf");
    QTest::newRow("korean string") << QJsonValue("모델");
    QTest::newRow("number") << QJsonValue(0.125);
    QTest::newRow("bool") << QJsonValue(true);
    QTest::newRow("array") << QJsonValue(QJsonArray{1, "two"});
    QTest::newRow("object") << QJsonValue(QJsonObject{{"w", 800}, {"h", 600}});
  }

  void appSettings() {
    QFETCH(QJsonValue, value);
    QCOMPARE(store_.appSetting("key", "fallback"), QJsonValue("fallback"));
    store_.setAppSetting("key", "first");
    store_.setAppSetting("key", value);  // replaces
    reopen();
    QCOMPARE(store_.appSetting("key"), value);
  }

 private:
  void reopen() {
    store_.close();
    store_.open(dir_.filePath(QString("messages-%1.db").arg(counter_)));
  }

  QTemporaryDir dir_;
  int counter_ = 0;
  ChatStore store_;
  Id conversation_ = 0;
};

QTEST_GUILESS_MAIN(StoreMessagesTest)
#include "test_store_messages.moc"
