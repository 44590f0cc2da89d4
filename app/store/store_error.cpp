#include "store/store_error.h"

namespace ember::store {

StoreError::StoreError(Kind kind, const QString& message, int sqliteCode)
    : ember::Error(message.toStdString()), kind_(kind), sqliteCode_(sqliteCode) {}

const char* kindName(StoreError::Kind kind) {
  switch (kind) {
    case StoreError::Kind::Busy: return "busy";
    case StoreError::Kind::DiskFull: return "disk full";
    case StoreError::Kind::Io: return "i/o error";
    case StoreError::Kind::ReadOnly: return "read-only";
    case StoreError::Kind::Corrupt: return "corrupt";
    case StoreError::Kind::TooNew: return "too new";
    case StoreError::Kind::NotFound: return "not found";
    case StoreError::Kind::InvalidInput: return "invalid input";
    case StoreError::Kind::Internal: return "internal";
  }
  return "unknown";
}

}  // namespace ember::store
