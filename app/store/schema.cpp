#include "store/schema.h"

#include <array>

namespace ember::store {
namespace {

// Timestamps are INTEGER milliseconds since the Unix epoch, UTC.
constexpr const char* kVersion1 = R"sql(
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

// Search uses two external-content FTS5 indexes over messages.content:
//  - message_words (unicode61): whole words and word prefixes ("안녕*" finds 안녕하세요,
//    "hel*" finds hello). Korean puts spaces between words, so this covers the usual search by
//    the start of a word, and it works for terms of any length.
//  - message_grams (trigram): any substring of 3+ characters, which matters for Korean where
//    particles and endings attach to the word (세요 inside 안녕하세요, 하세요 ...) and for parts
//    of identifiers in code. Trigrams cannot match terms shorter than 3 characters, hence both.
// Only messages that are not streaming are indexed: a checkpoint every second then costs one
// row update, not a re-index of a growing answer. Triggers keep both indexes in step; external
// content needs the old text to delete, which the triggers pass from OLD.
constexpr const char* kVersion2 = R"sql(
ALTER TABLE conversations ADD COLUMN settings TEXT NOT NULL DEFAULT '{}';
ALTER TABLE messages ADD COLUMN model TEXT NOT NULL DEFAULT '';
ALTER TABLE messages ADD COLUMN finish_reason TEXT NOT NULL DEFAULT '';
CREATE INDEX conversations_by_update ON conversations(updated_at DESC, id DESC);

CREATE TABLE message_stats (
  message_id                INTEGER PRIMARY KEY REFERENCES messages(id) ON DELETE CASCADE,
  queue_wait_ms             REAL    NOT NULL,
  tokenize_ms               REAL    NOT NULL,
  prefill_ms                REAL    NOT NULL,
  prefill_tokens_per_second REAL    NOT NULL,
  ttft_ms                   REAL    NOT NULL,
  itl_p50_ms                REAL    NOT NULL,
  itl_p95_ms                REAL    NOT NULL,
  itl_max_ms                REAL    NOT NULL,
  decode_tokens_per_second  REAL    NOT NULL,
  total_ms                  REAL    NOT NULL,
  prompt_tokens             INTEGER NOT NULL,
  cached_tokens             INTEGER NOT NULL,
  generated_tokens          INTEGER NOT NULL,
  finish_reason             TEXT    NOT NULL,
  sampling                  TEXT    NOT NULL,  -- JSON object
  seed                      INTEGER NOT NULL,  -- the 64 bits of an unsigned seed
  model                     TEXT    NOT NULL,
  backend                   TEXT    NOT NULL,
  token_times_ms            TEXT    NOT NULL   -- JSON array, one arrival time per token
);

CREATE VIRTUAL TABLE message_words USING fts5(
  content, content='messages', content_rowid='id', tokenize='unicode61 remove_diacritics 2');
CREATE VIRTUAL TABLE message_grams USING fts5(
  content, content='messages', content_rowid='id', tokenize='trigram');

CREATE TRIGGER messages_index_insert AFTER INSERT ON messages
WHEN NEW.status <> 'streaming' BEGIN
  INSERT INTO message_words(rowid, content) VALUES (NEW.id, NEW.content);
  INSERT INTO message_grams(rowid, content) VALUES (NEW.id, NEW.content);
END;
CREATE TRIGGER messages_unindex_delete AFTER DELETE ON messages
WHEN OLD.status <> 'streaming' BEGIN
  INSERT INTO message_words(message_words, rowid, content) VALUES ('delete', OLD.id, OLD.content);
  INSERT INTO message_grams(message_grams, rowid, content) VALUES ('delete', OLD.id, OLD.content);
END;
CREATE TRIGGER messages_unindex_update AFTER UPDATE OF content, status ON messages
WHEN OLD.status <> 'streaming' BEGIN
  INSERT INTO message_words(message_words, rowid, content) VALUES ('delete', OLD.id, OLD.content);
  INSERT INTO message_grams(message_grams, rowid, content) VALUES ('delete', OLD.id, OLD.content);
END;
CREATE TRIGGER messages_index_update AFTER UPDATE OF content, status ON messages
WHEN NEW.status <> 'streaming' BEGIN
  INSERT INTO message_words(rowid, content) VALUES (NEW.id, NEW.content);
  INSERT INTO message_grams(rowid, content) VALUES (NEW.id, NEW.content);
END;

INSERT INTO message_words(rowid, content)
  SELECT id, content FROM messages WHERE status <> 'streaming';
INSERT INTO message_grams(rowid, content)
  SELECT id, content FROM messages WHERE status <> 'streaming';
)sql";

// A deleted conversation first goes to the trash (deleted_at set) so that Undo can bring it
// back, also after a crash; it is purged once the undo time has passed. Pinned ones sort first.
// An answer's reasoning (a model's <think> section) is kept apart from its text, with how long
// the model thought.
constexpr const char* kVersion3 = R"sql(
ALTER TABLE messages ADD COLUMN reasoning TEXT NOT NULL DEFAULT '';
ALTER TABLE messages ADD COLUMN reasoning_ms REAL NOT NULL DEFAULT 0;
ALTER TABLE conversations ADD COLUMN deleted_at INTEGER;
ALTER TABLE conversations ADD COLUMN pinned INTEGER NOT NULL DEFAULT 0;
CREATE INDEX conversations_in_trash ON conversations(deleted_at) WHERE deleted_at IS NOT NULL;
)sql";

constexpr std::array<const char*, kSchemaVersion> kMigrations{kVersion1, kVersion2, kVersion3};

}  // namespace

int migrate(sql::Database& db, const std::function<void(int version)>& stepDone) {
  sql::ActionScope scope(db, "updating the chat database to the current version");
  const int found = static_cast<int>(sql::queryInt(db, "PRAGMA user_version").value_or(0));
  if (found > kSchemaVersion) {
    throw StoreError(StoreError::Kind::TooNew,
                     QStringLiteral("The chat database %1 was written by a newer version of Ember "
                                    "(schema %2; this version knows up to %3). Update Ember to "
                                    "open it; the file was left untouched.")
                         .arg(db.path())
                         .arg(found)
                         .arg(kSchemaVersion));
  }
  // The version is read again inside each write transaction, so two processes opening a new
  // file at the same time cannot both run the same step.
  for (;;) {
    sql::Transaction transaction(db);
    const int version = static_cast<int>(sql::queryInt(db, "PRAGMA user_version").value_or(0));
    if (version >= kSchemaVersion) break;  // nothing changed; the transaction rolls back
    db.exec(kMigrations[static_cast<size_t>(version)]);
    // PRAGMA values cannot be bound; the version is one of our own integer constants.
    db.exec(QByteArray("PRAGMA user_version = " + QByteArray::number(version + 1)).constData());
    transaction.commit();
    if (stepDone) stepDone(version + 1);
  }
  return found;
}

}  // namespace ember::store
