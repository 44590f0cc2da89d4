// ChatStore's message tree: edit and regenerate add siblings and never remove history, sibling
// indexes for `< 2/3 >`, branch switching, and deletion that cascades. References: the expected
// trees in the _data() tables are written by hand from the rules; the deletion test
// asks SQLite directly (integrity_check, FTS5 'integrity-check', row counts).
#include <QHash>
#include <QTemporaryDir>
#include <QtTest>

#include "store/chat_store.h"
#include "store_test_support.h"

using namespace ember::store;
using ember::store::test::RawDb;

namespace {

// Runs a script of operations on one conversation. Messages are named by their text.
//   user X        a user message under the active leaf
//   answer X      an assistant answer under the active leaf (begin, then finish)
//   edit X Y      edit user message X into Y (a sibling)
//   regen X Y     regenerate answer X, the new answer reading Y (a sibling)
//   select X      show the branch through X
//   leaf X        make X the active leaf
class Script {
 public:
  Script(ChatStore& store, Id conversation) : store_(store), conversation_(conversation) {}

  void run(const QString& script) {
    for (const QString& step : script.split(';', Qt::SkipEmptyParts)) {
      const QStringList w = step.split(' ', Qt::SkipEmptyParts);
      const QString& op = w.at(0);
      if (op == "user") {
        name(w[1], store_.addMessage(conversation_, leaf(), Role::User, w[1]));
      } else if (op == "answer") {
        const Id id = store_.beginAssistantMessage(leaf(), "m");
        store_.finishAssistantMessage(id, w[1], MessageStatus::Complete);
        name(w[1], id);
      } else if (op == "edit") {
        name(w[2], store_.editMessage(ids_.value(w[1]), w[2]));
      } else if (op == "regen") {
        const Id id = store_.beginRegeneration(ids_.value(w[1]), "m");
        store_.finishAssistantMessage(id, w[2], MessageStatus::Complete);
        name(w[2], id);
      } else if (op == "select") {
        store_.selectBranch(ids_.value(w[1]));
      } else if (op == "leaf") {
        store_.setActiveLeaf(conversation_, ids_.value(w[1]));
      } else {
        QTest::qFail(qPrintable("unknown step " + step), __FILE__, __LINE__);
      }
    }
  }

  // The whole tree, siblings separated by spaces, children in parentheses: "A(B B2) A2".
  QString tree(Id parent = 0) const {
    QStringList parts;
    for (const Message& m : store_.children(conversation_, parent)) {
      const QString below = tree(m.id);
      parts << (below.isEmpty() ? m.content : m.content + "(" + below + ")");
    }
    return parts.join(' ');
  }

 private:
  Id leaf() const { return store_.conversation(conversation_)->activeLeafId; }
  void name(const QString& text, Id id) { ids_.insert(text, id); }

  ChatStore& store_;
  Id conversation_;
  QHash<QString, Id> ids_;
};

}  // namespace

class StoreTreeTest : public QObject {
  Q_OBJECT

 private slots:
  void init() {
    QVERIFY(dir_.isValid());
    store_.open(dir_.filePath(QString("tree-%1.db").arg(++counter_)));
  }
  void cleanup() { store_.close(); }

  void treeOperations_data() {
    QTest::addColumn<QString>("script");
    QTest::addColumn<QString>("tree");
    QTest::addColumn<QString>("branch");    // the active branch, root first
    QTest::addColumn<QString>("siblings");  // "index/count" for each message of the branch

    QTest::newRow("linear") << "user A; answer B; user C; answer D" << "A(B(C(D)))"
                            << "A B C D" << "1/1 1/1 1/1 1/1";
    QTest::newRow("edit the first question") << "user A; answer B; edit A A2" << "A(B) A2"
                                             << "A2" << "2/2";
    QTest::newRow("edit, then answer") << "user A; answer B; edit A A2; answer B2"
                                       << "A(B) A2(B2)" << "A2 B2" << "2/2 1/1";
    QTest::newRow("regenerate twice") << "user A; answer B; regen B B2; regen B B3"
                                      << "A(B B2 B3)" << "A B3" << "1/1 3/3";
    QTest::newRow("back to the first answer")
        << "user A; answer B; regen B B2; select B" << "A(B B2)" << "A B" << "1/1 1/2";
    QTest::newRow("the middle of three answers")
        << "user A; answer B; regen B B2; regen B B3; select B2" << "A(B B2 B3)" << "A B2"
        << "1/1 2/3";
    QTest::newRow("selecting an edited-away question restores its whole branch")
        << "user A; answer B; user C; answer D; edit A A2; answer E; select A"
        << "A(B(C(D))) A2(E)" << "A B C D" << "1/2 1/1 1/1 1/1";
    QTest::newRow("edit in the middle")
        << "user A; answer B; user C; answer D; edit C C2; answer D2"
        << "A(B(C(D) C2(D2)))" << "A B C2 D2" << "1/1 1/1 2/2 1/1";
    QTest::newRow("continue from an older branch")
        << "user A; answer B; regen B B2; select B; user C; answer D"
        << "A(B(C(D)) B2)" << "A B C D" << "1/1 1/2 1/1 1/1";
    QTest::newRow("leaf set to an inner message")
        << "user A; answer B; user C; leaf B" << "A(B(C))" << "A B" << "1/1 1/1";
  }

  void treeOperations() {
    QFETCH(QString, script);
    QFETCH(QString, tree);
    QFETCH(QString, branch);
    QFETCH(QString, siblings);

    const Id conversation = store_.createConversation("tree");
    Script runner(store_, conversation);
    runner.run(script);

    QCOMPARE(runner.tree(), tree);
    QStringList texts, positions;
    Id expectedParent = 0;
    for (const Message& m : store_.activeBranch(conversation)) {
      QCOMPARE(m.parentId, expectedParent);  // a real path, root to leaf
      expectedParent = m.id;
      texts << m.content;
      const SiblingInfo info = store_.siblings(m.id);
      QCOMPARE(info.ids.value(info.index), m.id);
      positions << QString("%1/%2").arg(info.index + 1).arg(info.count());
    }
    QCOMPARE(texts.join(' '), branch);
    QCOMPARE(positions.join(' '), siblings);
  }

  void listIsNewestFirst() {
    const Id first = store_.createConversation("first");
    const Id second = store_.createConversation("second");
    const Id third = store_.createConversation("third");
    auto order = [this] {
      QList<Id> ids;
      for (const Conversation& c : store_.listConversations()) ids << c.id;
      return ids;
    };
    QCOMPARE(order(), (QList<Id>{third, second, first}));
    store_.addMessage(first, 0, Role::User, "bump");
    QCOMPARE(order(), (QList<Id>{first, third, second}));
    store_.renameConversation(second, "renamed");  // a rename is not activity
    QCOMPARE(order(), (QList<Id>{first, third, second}));
    QCOMPARE(store_.conversation(second)->title, QStringLiteral("renamed"));
  }

  void deleteCascades() {
    const Id doomed = store_.createConversation("doomed");
    const Id kept = store_.createConversation("kept");
    const Id question = store_.addMessage(doomed, 0, Role::User, "zebra question");
    const Id answer = store_.beginAssistantMessage(question, "m");
    MessageStats stats;
    stats.generatedTokens = 3;
    store_.finishAssistantMessage(answer, "zebra answer", MessageStatus::Complete, stats);
    const Id streaming = store_.beginAssistantMessage(question, "m");
    store_.checkpoint(streaming, "zebra partial");
    const Id other = store_.addMessage(kept, 0, Role::User, "zebra elsewhere");
    QCOMPARE(store_.search("zebra").size(), 3);

    store_.deleteConversation(doomed);

    QVERIFY(!store_.conversation(doomed));
    QVERIFY(!store_.message(question));
    QVERIFY(!store_.message(streaming));
    QVERIFY(!store_.stats(answer));
    const QList<SearchHit> hits = store_.search("zebra");
    QCOMPARE(hits.size(), 1);
    QCOMPARE(hits[0].messageId, other);
    QCOMPARE(store_.activeBranch(kept).size(), 1);

    const QString path = store_.path();
    RawDb db(path);
    QCOMPARE(db.value("SELECT count(*) FROM messages WHERE conversation_id = ?1",
                      {QString::number(doomed)}),
             QStringLiteral("0"));
    QCOMPARE(db.value("SELECT count(*) FROM message_stats"), QStringLiteral("0"));
    QCOMPARE(db.value("PRAGMA foreign_key_check"), QString());  // no dangling references
    QCOMPARE(ember::store::test::integrityCheck(path), QStringLiteral("ok"));
    QCOMPARE(ember::store::test::ftsIntegrityCheck(path, "message_words"), QStringLiteral("ok"));
    QCOMPARE(ember::store::test::ftsIntegrityCheck(path, "message_grams"), QStringLiteral("ok"));
  }

  void refusals_data() {
    QTest::addColumn<QString>("what");
    QTest::addColumn<int>("kind");
    auto row = [](const char* name, StoreError::Kind kind) {
      QTest::newRow(name) << QString(name) << static_cast<int>(kind);
    };
    row("empty user message", StoreError::Kind::InvalidInput);
    row("whitespace-only user message", StoreError::Kind::InvalidInput);
    row("parent from another conversation", StoreError::Kind::InvalidInput);
    row("unknown conversation", StoreError::Kind::NotFound);
    row("unknown parent", StoreError::Kind::NotFound);
    row("rename unknown conversation", StoreError::Kind::NotFound);
    row("edit an answer", StoreError::Kind::InvalidInput);
    row("regenerate a question", StoreError::Kind::InvalidInput);
    row("checkpoint a finished answer", StoreError::Kind::InvalidInput);
    row("checkpoint an unknown message", StoreError::Kind::NotFound);
    row("finish as streaming", StoreError::Kind::InvalidInput);
    row("leaf from another conversation", StoreError::Kind::InvalidInput);
  }

  void refusals() {
    QFETCH(QString, what);
    QFETCH(int, kind);
    const Id a = store_.createConversation("a");
    const Id b = store_.createConversation("b");
    const Id question = store_.addMessage(a, 0, Role::User, "question");
    const Id answer = store_.beginAssistantMessage(question, "m");
    store_.finishAssistantMessage(answer, "answer", MessageStatus::Complete);
    const QList<Message> before = store_.activeBranch(a);

    const QHash<QString, std::function<void()>> actions = {
        {"empty user message", [&] { store_.addMessage(a, answer, Role::User, ""); }},
        {"whitespace-only user message",
         [&] { store_.addMessage(a, answer, Role::User, " \n\t\u3000"); }},
        {"parent from another conversation",
         [&] { store_.addMessage(b, answer, Role::User, "x"); }},
        {"unknown conversation", [&] { store_.addMessage(9999, 0, Role::User, "x"); }},
        {"unknown parent", [&] { store_.addMessage(a, 9999, Role::User, "x"); }},
        {"rename unknown conversation", [&] { store_.renameConversation(9999, "x"); }},
        {"edit an answer", [&] { store_.editMessage(answer, "x"); }},
        {"regenerate a question", [&] { store_.beginRegeneration(question, "m"); }},
        {"checkpoint a finished answer", [&] { store_.checkpoint(answer, "x"); }},
        {"checkpoint an unknown message", [&] { store_.checkpoint(9999, "x"); }},
        {"finish as streaming",
         [&] { store_.finishAssistantMessage(answer, "x", MessageStatus::Streaming); }},
        {"leaf from another conversation", [&] { store_.setActiveLeaf(b, answer); }},
    };
    QVERIFY(actions.contains(what));
    try {
      actions.value(what)();
      QFAIL("no error");
    } catch (const StoreError& error) {
      QCOMPARE(error.kind(), static_cast<StoreError::Kind>(kind));
      QVERIFY(!error.userMessage().isEmpty());
    }
    // Nothing changed.
    const QList<Message> after = store_.activeBranch(a);
    QCOMPARE(after.size(), before.size());
    for (int i = 0; i < after.size(); ++i) QCOMPARE(after[i].content, before[i].content);
    QCOMPARE(store_.children(b, 0).size(), 0);
    QCOMPARE(store_.children(a, question).size(), 1);
  }

 private:
  QTemporaryDir dir_;
  int counter_ = 0;
  ChatStore store_;
};

QTEST_GUILESS_MAIN(StoreTreeTest)
#include "test_store_tree.moc"
