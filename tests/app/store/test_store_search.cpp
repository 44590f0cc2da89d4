// ChatStore search over SQLite FTS5, in English and Korean. References: the expected hits are
// written by hand from the documented behaviour of FTS5's unicode61 and trigram tokenizers
// (https://sqlite.org/fts5.html sections 4.3.1 and 4.3.4) and its bm25() ranking (more
// occurrences in a shorter text rank higher); index consistency is FTS5's own 'integrity-check'.
#include <QElapsedTimer>
#include <QHash>
#include <QTemporaryDir>
#include <QtTest>

#include "store/chat_store.h"
#include "store/fts_query.h"
#include "store_test_support.h"

using namespace ember::store;

namespace {

// label -> text; one message each, in two conversations.
const QList<QPair<QString, QString>> kCorpus = {
    {"en1", "Hello world, this is a test."},
    {"en2", "The quick brown fox jumps over the lazy dog."},
    {"en3", "hello hello hello"},
    {"ko1", "안녕하세요 여러분"},
    {"ko2", "한국어를 공부하고 있어요"},
    {"ko3", "오늘 날씨가 좋네요"},
    {"code", "C++ 코드에서 std::vector를 씁니다"},
    {"accent", "Café crème brûlée"},
};

}  // namespace

class StoreSearchTest : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase() {
    QVERIFY(dir_.isValid());
    store_.open(dir_.filePath("search.db"));
    const Id english = store_.createConversation("English");
    const Id korean = store_.createConversation("한국어");
    for (const auto& [label, text] : kCorpus) {
      const Id conversation = label.startsWith("en") ? english : korean;
      labels_.insert(store_.addMessage(conversation, 0, Role::User, text), label);
    }
  }

  void search_data() {
    QTest::addColumn<QString>("query");
    QTest::addColumn<QString>("expected");  // labels, best first

    QTest::newRow("english word, ranked") << "hello" << "en3 en1";
    QTest::newRow("case-insensitive") << "HELLO" << "en3 en1";
    QTest::newRow("inside a word") << "ello" << "en3 en1";
    QTest::newRow("short prefix") << "he" << "en3 en1";
    QTest::newRow("two terms, both needed") << "fox dog" << "en2";
    QTest::newRow("short and long term") << "qu fox" << "en2";
    QTest::newRow("korean word start") << "안녕" << "ko1";
    QTest::newRow("korean whole word") << "안녕하세요" << "ko1";
    QTest::newRow("korean inside a word") << "녕하세" << "ko1";
    QTest::newRow("korean stem of a longer word") << "공부" << "ko2";
    QTest::newRow("korean two words") << "날씨가 좋네요" << "ko3";
    // Two characters in the middle of a word: too short for trigrams, not a word start.
    QTest::newRow("korean 2-char infix is not found") << "국어" << "";
    QTest::newRow("korean 3-char infix") << "국어를" << "ko2";
    QTest::newRow("code punctuation") << "std::vector" << "code";
    QTest::newRow("c++") << "c++" << "code";
    QTest::newRow("mixed script") << "vector를" << "code";
    QTest::newRow("accents ignored at word start") << "cafe creme" << "accent";
    QTest::newRow("accented query") << "brûlée" << "accent";
    QTest::newRow("no match") << "elephant" << "";
    // User text is never FTS5 syntax.
    QTest::newRow("sql-looking text") << "'; DROP TABLE messages; --" << "";
    QTest::newRow("lone quote") << "\"" << "";
    QTest::newRow("fts operators") << "hello AND NOT world" << "";
    QTest::newRow("fts near") << "NEAR(hello" << "";
    QTest::newRow("star") << "hello*" << "en3 en1";
    QTest::newRow("column filter syntax") << "content:hello" << "";
    QTest::newRow("only punctuation") << "?!" << "";
    QTest::newRow("empty") << "" << "";
  }

  void search() {
    QFETCH(QString, query);
    QFETCH(QString, expected);
    QStringList found;
    for (const SearchHit& hit : store_.search(query)) found << labels_.value(hit.messageId);
    QCOMPARE(found.join(' '), expected);
    QCOMPARE(store_.listConversations().size(), 2);  // nothing was dropped
  }

  void snippets_data() {
    QTest::addColumn<QString>("query");
    QTest::addColumn<QString>("snippet");
    // Words are highlighted whole; substrings exactly.
    QTest::newRow("korean word start") << "안녕" << "[안녕하세요] 여러분";
    QTest::newRow("korean substring") << "녕하세" << "안[녕하세]요 여러분";
    QTest::newRow("english, every occurrence") << "fox dog"
                                               << "The quick brown [fox] jumps over the lazy "
                                                  "[dog].";
    QTest::newRow("accent folded, original text shown") << "cafe" << "[Café] crème brûlée";
  }

  void snippets() {
    QFETCH(QString, query);
    QFETCH(QString, snippet);
    const QList<SearchHit> hits = store_.search(query);
    QCOMPARE(hits.size(), 1);
    QCOMPARE(hits[0].snippet, snippet);
  }

  void hitsNameTheirConversation() {
    const QList<SearchHit> hits = store_.search("여러분");
    QCOMPARE(hits.size(), 1);
    QCOMPARE(hits[0].conversationTitle, QStringLiteral("한국어"));
    QCOMPARE(store_.message(hits[0].messageId)->conversationId, hits[0].conversationId);
  }

  void limitIsApplied() {
    QCOMPARE(store_.search("hello", 1).size(), 1);
    QCOMPARE(store_.search("hello", 0).size(), 0);
  }

  void streamingAnswersJoinTheIndexWhenFinished() {
    const Id conversation = store_.createConversation("streaming");
    const Id question = store_.addMessage(conversation, 0, Role::User, "tell me about otters");
    const Id answer = store_.beginAssistantMessage(question, "m");
    store_.checkpoint(answer, "Sea otters hold hands");
    QCOMPARE(store_.search("hands").size(), 0);  // not indexed while streaming
    store_.finishAssistantMessage(answer, "Sea otters hold hands while sleeping.",
                                  MessageStatus::Complete);
    QCOMPARE(store_.search("sleeping").value(0).messageId, answer);
    QCOMPARE(store_.search("hands").value(0).messageId, answer);
    checkIndexes();
  }

  void deletedMessagesVanish() {
    const Id conversation = store_.createConversation("gone");
    store_.addMessage(conversation, 0, Role::User, "수박 watermelon");
    QCOMPARE(store_.search("watermelon").size(), 1);
    QCOMPARE(store_.search("수박").size(), 1);
    store_.deleteConversation(conversation);
    QCOMPARE(store_.search("watermelon").size(), 0);
    QCOMPARE(store_.search("수박").size(), 0);
    checkIndexes();
  }

  void oneMegabyteMessage() {
    // ~1 MB of mixed Korean and English with one unique word at the very end.
    QString text;
    const QString filler = QStringLiteral("가나다라 lorem ipsum 마바사 dolor sit amet. ");
    const qsizetype fillerBytes = filler.toUtf8().size();
    for (qsizetype bytes = 0; bytes < 1024 * 1024; bytes += fillerBytes) text += filler;
    text += QStringLiteral("끝단어 zanzibar");
    const Id conversation = store_.createConversation("big");
    QElapsedTimer timer;
    timer.start();
    const Id id = store_.addMessage(conversation, 0, Role::User, text);
    qInfo("adding a 1 MB message (with indexing) took %lld ms", timer.elapsed());  // not checked
    QCOMPARE(store_.message(id)->content, text);
    const QList<SearchHit> hits = store_.search("zanzibar");
    QCOMPARE(hits.size(), 1);
    QCOMPARE(hits[0].messageId, id);
    QVERIFY2(hits[0].snippet.endsWith("[zanzibar]"), qPrintable(hits[0].snippet));
    QCOMPARE(store_.search("끝단어").value(0).messageId, id);
    checkIndexes();
    store_.deleteConversation(conversation);
    checkIndexes();
  }

  void queryBuilderQuotesEverything_data() {
    QTest::addColumn<QString>("text");
    QTest::addColumn<QString>("words");
    QTest::addColumn<QString>("trigrams");  // "-" when the trigram index is not asked
    QTest::newRow("plain") << "hello world" << "\"hello\"* \"world\"*" << "\"hello\" \"world\"";
    QTest::newRow("short term") << "hi there" << "\"hi\"* \"there\"*" << "-";
    QTest::newRow("quote doubled") << "say\"what" << "\"say\"\"what\"*" << "\"say\"\"what\"";
    QTest::newRow("hangul counted in characters") << "안녕하" << "\"안녕하\"*" << "\"안녕하\"";
    QTest::newRow("punctuation-only term dropped") << "-- hello" << "\"hello\"*"
                                                   << "\"hello\"";
  }

  void queryBuilderQuotesEverything() {
    QFETCH(QString, text);
    QFETCH(QString, words);
    QFETCH(QString, trigrams);
    const std::optional<FtsQuery> query = buildFtsQuery(text);
    QVERIFY(query);
    QCOMPARE(query->words, words);
    QCOMPARE(query->trigrams.value_or("-"), trigrams);
  }

  void cleanupTestCase() { checkIndexes(); }

 private:
  void checkIndexes() {
    const QString path = store_.path();
    QCOMPARE(ember::store::test::integrityCheck(path), QStringLiteral("ok"));
    QCOMPARE(ember::store::test::ftsIntegrityCheck(path, "message_words"), QStringLiteral("ok"));
    QCOMPARE(ember::store::test::ftsIntegrityCheck(path, "message_grams"), QStringLiteral("ok"));
  }

  QTemporaryDir dir_;
  ChatStore store_;
  QHash<Id, QString> labels_;
};

QTEST_GUILESS_MAIN(StoreSearchTest)
#include "test_store_search.moc"
