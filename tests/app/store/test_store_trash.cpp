// ChatStore's trash (delete with Undo) and pins. A trashed conversation leaves the list and the
// search at once but keeps every message, branch and stat, also when the file is closed and
// opened again (a crash in the undo time); purgeTrash() then deletes it for good with the same
// cascade as deleteConversation(). References: what was written (read back field by field),
// and SQLite's own verdicts (integrity_check, FTS5 'integrity-check', row counts).
#include <QTemporaryDir>
#include <QtTest>

#include "store/chat_store.h"
#include "store_test_support.h"

using namespace ember::store;
using ember::store::test::RawDb;

class StoreTrash : public QObject {
  Q_OBJECT
  QTemporaryDir dir_;
  QString path_;

  static QList<Id> listed(const ChatStore& store) {
    QList<Id> ids;
    for (const Conversation& c : store.listConversations()) ids << c.id;
    return ids;
  }

 private slots:
  void init() {
    path_ = dir_.filePath(QStringLiteral("%1.sqlite").arg(QTest::currentTestFunction()));
  }

  void trashRestoreAcrossReopenThenPurge() {
    Id doomed = 0, kept = 0, answer = 0;
    {
      ChatStore store;
      store.open(path_);
      doomed = store.createConversation("doomed");
      kept = store.createConversation("kept");
      const Id q = store.addMessage(doomed, 0, Role::User, "walrus question");
      answer = store.beginAssistantMessage(q, "m");
      MessageStats stats;
      stats.generatedTokens = 7;
      stats.tokenTimesMs = {10, 20, 30};
      store.finishAssistantMessage(answer, "walrus answer", MessageStatus::Complete, stats);
      QCOMPARE(store.search("walrus").size(), 2);
      store.trashConversation(doomed);
      QCOMPARE(listed(store), QList<Id>{kept});
      QCOMPARE(store.search("walrus").size(), 0);
      QCOMPARE(store.trashedConversations().size(), 1);
      QVERIFY(store.conversation(doomed)->deletedAt.isValid());
    }  // closed with it in the trash, as a crash would leave it
    ChatStore store;
    store.open(path_);
    QCOMPARE(store.trashedConversations().value(0).id, doomed);
    store.restoreConversation(doomed);
    QCOMPARE(listed(store).size(), 2);
    QVERIFY(!store.conversation(doomed)->deletedAt.isValid());
    const QList<Message> branch = store.activeBranch(doomed);
    QCOMPARE(branch.size(), 2);
    QCOMPARE(branch[1].content, QStringLiteral("walrus answer"));
    QCOMPARE(store.stats(answer)->generatedTokens, 7);
    QCOMPARE(store.stats(answer)->tokenTimesMs, (QList<double>{10, 20, 30}));
    QCOMPARE(store.search("walrus").size(), 2);

    // Purged: a cutoff before the deletion keeps it, one after deletes it and its rows.
    store.trashConversation(doomed);
    const QDateTime deletedAt = store.conversation(doomed)->deletedAt;
    QCOMPARE(store.purgeTrash(deletedAt.addMSecs(-1)), 0);
    QCOMPARE(store.purgeTrash(deletedAt), 1);
    QVERIFY(!store.conversation(doomed));
    QVERIFY(!store.message(answer));
    QVERIFY(!store.stats(answer));
    QCOMPARE(listed(store), QList<Id>{kept});
    store.close();
    RawDb raw(path_);
    QCOMPARE(raw.column("SELECT count(*) FROM messages"), QStringList{"0"});
    QCOMPARE(raw.column("SELECT count(*) FROM message_stats"), QStringList{"0"});
    QCOMPARE(ember::store::test::integrityCheck(path_), QStringLiteral("ok"));
    QCOMPARE(ember::store::test::ftsIntegrityCheck(path_, "message_words"), QStringLiteral("ok"));
    QCOMPARE(ember::store::test::ftsIntegrityCheck(path_, "message_grams"), QStringLiteral("ok"));
  }

  void pinnedComeFirst() {
    ChatStore store;
    store.open(path_);
    const Id a = store.createConversation("a");
    const Id b = store.createConversation("b");
    const Id c = store.createConversation("c");
    QCOMPARE(listed(store), (QList<Id>{c, b, a}));  // newest first
    store.setPinned(a, true);
    QCOMPARE(listed(store), (QList<Id>{a, c, b}));
    QVERIFY(store.conversation(a)->pinned);
    store.addMessage(b, 0, Role::User, "bump");  // activity reorders only the unpinned
    QCOMPARE(listed(store), (QList<Id>{a, b, c}));
    store.setPinned(a, false);
    QCOMPARE(listed(store), (QList<Id>{b, c, a}));
  }
};

QTEST_GUILESS_MAIN(StoreTrash)
#include "test_store_trash.moc"
