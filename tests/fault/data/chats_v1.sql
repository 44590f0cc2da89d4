-- Written by the test as an older Ember would have: its schema's DDL exactly as released
-- (app/store/schema.cpp's migrations of that version, copied from the repository's history),
-- then rows. Never edit the DDL here: it is what users' databases hold.
-- Schema version 1.
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
PRAGMA user_version = 1;
