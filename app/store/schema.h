#pragma once
// The database schema as a list of migrations; `PRAGMA user_version` records how many have run.
// A migration is never edited once released: a change is a new migration appended to the list.
//
// Version 1: conversations, the message tree, app settings.
// Version 2: per-message stats, per-conversation settings, model/finish reason on messages, and
//            two FTS5 indexes over message text (see schema.cpp for why two).
// Version 3: conversations get a trash time (deleted with Undo, purged later) and a pin;
//            answers keep their reasoning apart.
#include <functional>

#include "store/sqlite_db.h"

namespace ember::store {

inline constexpr int kSchemaVersion = 3;

// Brings the database up to kSchemaVersion, each step in its own transaction (a crash between
// steps leaves a consistent older version that the next open continues from). Returns the
// version found. Throws StoreError::Kind::TooNew for a database from a newer Ember.
// `stepDone`, when given, is called after each step has been committed with the new version.
int migrate(sql::Database& db, const std::function<void(int version)>& stepDone = {});

}  // namespace ember::store
