#pragma once
// The one exception type ChatStore throws. `kind` lets the app react (offer to retry when the
// database is busy, say the disk is full); what() is a sentence for the user that names the
// database file and what could not be saved. Nothing already committed is lost when one is thrown:
// every write runs in its own transaction, which is rolled back on error.
#include <QString>

// ember_store does not link the engine; only this header-only base class is shared with it.
#include "ember/error.h"

namespace ember::store {

class StoreError : public ember::Error {
 public:
  enum class Kind {
    Busy,          // locked by another process past the busy timeout
    DiskFull,      // SQLITE_FULL (disk full or the configured size limit reached)
    Io,            // SQLITE_IOERR, SQLITE_CANTOPEN, SQLITE_READONLY, SQLITE_PERM
    ReadOnly,      // a write on a store opened read-only (another process is its writer)
    Corrupt,       // SQLITE_CORRUPT / SQLITE_NOTADB (open() recovers from these on its own)
    TooNew,        // written by a newer Ember: schema version above ours
    NotFound,      // a conversation or message id that does not exist
    InvalidInput,  // e.g. an empty user message, a parent from another conversation
    Internal,      // anything else SQLite reports (a bug on our side)
  };

  StoreError(Kind kind, const QString& message, int sqliteCode = 0);

  Kind kind() const { return kind_; }
  int sqliteCode() const { return sqliteCode_; }  // extended result code, 0 when not from SQLite
  QString userMessage() const { return QString::fromUtf8(what()); }

 private:
  Kind kind_;
  int sqliteCode_;
};

const char* kindName(StoreError::Kind kind);

}  // namespace ember::store
