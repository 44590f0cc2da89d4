// ChatStore schema and migrations: a new database, an empty file, a version 1 database written
// by the v1 DDL (a frozen copy below, not the store's own code), and a database from a newer
// Ember. References: SQLite's PRAGMAs read over a separate connection, and hand-written
// expectations of what must survive a migration.
#include <QTemporaryDir>
#include <QtTest>

#include "store/chat_store.h"
#include "store/schema.h"
#include "store_test_support.h"

using namespace ember::store;
using ember::store::test::RawDb;

namespace {

// Schema version 1 exactly as released (kept here as the fixture; the store's copy may not be
// edited, and this one guards that).
constexpr const char* kV1Ddl = R"sql(
CREATE TABLE conversations (
  id             INTEGER PRIMARY KEY,
  title          TEXT    NOT NULL,
  created_at     INTEGER NOT NULL,
  updated_at     INTEGER NOT NULL,
  model_path     TEXT    NOT NULL DEFAULT '',
  active_leaf_id INTEGER REFERENCES messages(id) ON DELETE SET NULL
);
CREATE TABLE messages (
  id              INTEGER PRIMARY KEY,
  conversation_id INTEGER NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
  parent_id       INTEGER REFERENCES messages(id) ON DELETE CASCADE,
  role            TEXT    NOT NULL CHECK (role IN ('system', 'user', 'assistant')),
  content         TEXT    NOT NULL,
  created_at      INTEGER NOT NULL,
  status          TEXT    NOT NULL
                  CHECK (status IN ('complete', 'streaming', 'interrupted', 'stopped', 'error'))
);
CREATE INDEX messages_by_parent ON messages(conversation_id, parent_id, id);
CREATE INDEX messages_by_status ON messages(status);
CREATE TABLE app_settings (
  key   TEXT PRIMARY KEY,
  value TEXT NOT NULL
) WITHOUT ROWID;
)sql";

// A v1 history: one conversation, a question edited once (two sibling roots), an answer under
// the edit, and an answer that was streaming when v1 crashed.
constexpr const char* kV1Rows = R"sql(
INSERT INTO conversations VALUES (1, '한국어 대화', 1700000000000, 1700000005000, '/m/a.gguf', 4);
INSERT INTO messages VALUES (1, 1, NULL, 'user', 'first question', 1700000001000, 'complete');
INSERT INTO messages VALUES (2, 1, NULL, 'user', '안녕하세요, 질문입니다', 1700000002000, 'complete');
INSERT INTO messages VALUES (3, 1, 2, 'assistant', 'old answer', 1700000003000, 'complete');
INSERT INTO messages VALUES (4, 1, 2, 'assistant', 'cut short by a cra', 1700000004000,
                             'streaming');
INSERT INTO app_settings VALUES ('lastModel', '"/m/a.gguf"');
PRAGMA user_version = 1;
)sql";

// The tables, indexes and triggers of the current schema, by name (hand-written from the
// schema description in the issue: conversations, the message tree, stats, settings, FTS5).
const QStringList kCurrentObjects = {
    "app_settings",        "conversations",         "conversations_by_update",
    "conversations_in_trash",
    "message_grams",       "message_stats",         "message_words",
    "messages",            "messages_by_parent",    "messages_by_status",
    "messages_index_insert", "messages_index_update", "messages_unindex_delete",
    "messages_unindex_update"};

QStringList schemaObjects(RawDb& db) {
  // FTS5 shadow tables (name_data, name_idx, ...) and SQLite's autoindexes are implementation
  // details of those objects, not part of our schema's list.
  return db.column(
      "SELECT name FROM sqlite_schema WHERE name NOT LIKE 'sqlite_%' AND name NOT GLOB "
      "'message_[wg]*_*' ORDER BY name");
}

}  // namespace

class StoreSchemaTest : public QObject {
  Q_OBJECT

 private slots:
  void newDatabaseIsCurrent() {
    QTemporaryDir dir;
    const QString path = dir.filePath("sub/dir/chats.db");  // missing folders are created
    ChatStore store;
    const OpenReport report = store.open(path);
    QVERIFY(report.createdNew);
    QCOMPARE(report.migratedFromVersion, 0);
    QVERIFY(!report.recoveredFromCorruption);
    store.close();

    RawDb db(path);
    QVERIFY2(db.ok(), qPrintable(db.error()));
    QCOMPARE(db.value("PRAGMA user_version"), QString::number(kSchemaVersion));
    QCOMPARE(db.value("PRAGMA journal_mode"), QStringLiteral("wal"));  // persistent in the file
    QCOMPARE(schemaObjects(db), kCurrentObjects);
    QCOMPARE(ember::store::test::integrityCheck(path), QStringLiteral("ok"));
  }

  void emptyFileIsANewDatabase() {
    QTemporaryDir dir;
    const QString path = dir.filePath("chats.db");
    QVERIFY(ember::store::test::writeAll(path, {}));
    ChatStore store;
    const OpenReport report = store.open(path);
    QVERIFY(report.createdNew);
    QVERIFY(!report.recoveredFromCorruption);  // a 0-byte file is a valid empty database
    QCOMPARE(report.migratedFromVersion, 0);
  }

  void reopeningRunsNoMigration() {
    QTemporaryDir dir;
    const QString path = dir.filePath("chats.db");
    ChatStore store;
    store.open(path);
    const Id id = store.createConversation("kept");
    store.close();
    const OpenReport again = store.open(path);
    QVERIFY(!again.createdNew);
    QCOMPARE(again.migratedFromVersion, -1);
    QCOMPARE(store.conversation(id)->title, QStringLiteral("kept"));
  }

  void migratesFromVersion1() {
    QTemporaryDir dir;
    const QString path = dir.filePath("chats.db");
    {
      RawDb db(path, RawDb::Create);
      QVERIFY2(db.exec(kV1Ddl), qPrintable(db.error()));
      QVERIFY2(db.exec(kV1Rows), qPrintable(db.error()));
    }

    ChatStore store;
    const OpenReport report = store.open(path);
    QCOMPARE(report.migratedFromVersion, 1);
    QCOMPARE(report.interruptedMessages, 1);
    QVERIFY(!report.recoveredFromCorruption);

    const std::optional<Conversation> c = store.conversation(1);
    QVERIFY(c);
    QCOMPARE(c->title, QStringLiteral("한국어 대화"));
    QCOMPARE(c->modelPath, QStringLiteral("/m/a.gguf"));
    QCOMPARE(c->createdAt, QDateTime::fromMSecsSinceEpoch(1700000000000, Qt::UTC));
    QCOMPARE(c->activeLeafId, Id(4));

    const QList<Message> branch = store.activeBranch(1);
    QCOMPARE(branch.size(), 2);
    QCOMPARE(branch[0].content, QStringLiteral("안녕하세요, 질문입니다"));
    QCOMPARE(branch[1].content, QStringLiteral("cut short by a cra"));
    QCOMPARE(branch[1].status, MessageStatus::Interrupted);
    QCOMPARE(branch[1].model, QString());  // new v2 column, default
    QCOMPARE(store.siblings(2).index, 1);
    QCOMPARE(store.siblings(2).count(), 2);
    QCOMPARE(store.siblings(4).ids, (QList<Id>{3, 4}));

    QCOMPARE(store.appSetting("lastModel").toString(), QStringLiteral("/m/a.gguf"));
    QCOMPARE(store.conversationSettings(1), QJsonObject());
    QVERIFY(!store.stats(3));

    // v1 text was indexed by the migration; the interrupted answer by the recovery.
    QCOMPARE(store.search("질문입니다").size(), 1);
    QCOMPARE(store.search("old answer").value(0).messageId, Id(3));
    QCOMPARE(store.search("cra").value(0).messageId, Id(4));
    store.close();

    RawDb db(path);
    QCOMPARE(db.value("PRAGMA user_version"), QString::number(kSchemaVersion));
    QCOMPARE(schemaObjects(db), kCurrentObjects);
    QCOMPARE(ember::store::test::integrityCheck(path), QStringLiteral("ok"));
    QCOMPARE(ember::store::test::ftsIntegrityCheck(path, "message_words"), QStringLiteral("ok"));
    QCOMPARE(ember::store::test::ftsIntegrityCheck(path, "message_grams"), QStringLiteral("ok"));
  }

  void newerVersionIsRefusedAndLeftAlone() {
    QTemporaryDir dir;
    const QString path = dir.filePath("chats.db");
    {
      ChatStore store;
      store.open(path);
      store.createConversation("from the future");
    }
    {
      RawDb db(path);
      QVERIFY(db.exec("PRAGMA user_version = 99"));
    }
    const QByteArray before = ember::store::test::readAll(path);
    ChatStore store;
    try {
      store.open(path);
      QFAIL("a database from a newer version was opened");
    } catch (const StoreError& error) {
      QCOMPARE(error.kind(), StoreError::Kind::TooNew);
      QVERIFY2(error.userMessage().contains("newer version of Ember"),
               qPrintable(error.userMessage()));
    }
    QVERIFY(!store.isOpen());
    QCOMPARE(ember::store::test::readAll(path), before);
    QCOMPARE(QDir(dir.path()).entryList({"*.corrupt-*"}), QStringList());
  }
};

QTEST_GUILESS_MAIN(StoreSchemaTest)
#include "test_store_schema.moc"
