-- Written by the test as an older Ember would have: its schema's DDL exactly as released
-- (app/store/schema.cpp's migrations of that version, copied from the repository's history),
-- then rows. Never edit the DDL here: it is what users' databases hold.
-- Schema version 2 (version 1, then the version 2 migration).
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
-- A history: one conversation whose first question was edited (two sibling roots), an answer
-- under the edit, an answer that was streaming when that version crashed, and a setting.
INSERT INTO conversations (id, title, created_at, updated_at, model_path, active_leaf_id) VALUES (1, '한국어 대화', 1700000000000, 1700000005000, '/m/a.gguf', 3);
INSERT INTO conversations (id, title, created_at, updated_at, model_path, active_leaf_id) VALUES (2, 'Second chat', 1700000010000, 1700000012000, '', 6);
INSERT INTO messages (id, conversation_id, parent_id, role, content, created_at, status) VALUES (1, 1, NULL, 'user', 'first question', 1700000001000, 'complete');
INSERT INTO messages (id, conversation_id, parent_id, role, content, created_at, status) VALUES (2, 1, NULL, 'user', '안녕하세요, 질문입니다', 1700000002000, 'complete');
INSERT INTO messages (id, conversation_id, parent_id, role, content, created_at, status) VALUES (3, 1, 2, 'assistant', 'old answer', 1700000003000, 'complete');
INSERT INTO messages (id, conversation_id, parent_id, role, content, created_at, status) VALUES (4, 1, 2, 'assistant', 'cut short by a cra', 1700000004000, 'streaming');
INSERT INTO messages (id, conversation_id, parent_id, role, content, created_at, status) VALUES (5, 2, NULL, 'user', 'What is 2 + 2?', 1700000011000, 'complete');
INSERT INTO messages (id, conversation_id, parent_id, role, content, created_at, status) VALUES (6, 2, 5, 'assistant', '4', 1700000012000, 'stopped');
INSERT INTO app_settings VALUES ('lastModel', '"/m/a.gguf"');
UPDATE conversations SET settings = '{"temperature":0.3}' WHERE id = 2;
UPDATE messages SET model = 'a.gguf', finish_reason = 'stop' WHERE id IN (3, 6);
INSERT INTO message_stats VALUES (6, 0.5, 1.25, 30, 400, 31.5, 20, 25, 30, 50, 80.5, 12, 0, 1,
  'stop', '{"temperature":0.3}', 42, 'a.gguf', 'cpu', '[31.5]');
PRAGMA user_version = 2;
