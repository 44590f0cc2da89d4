#pragma once
// The values ChatStore hands to the app. Ids are SQLite rowids (> 0); 0 means "none" (a root
// message's parent, a conversation without messages). Times are UTC with millisecond precision.
#include <QDateTime>
#include <QJsonObject>
#include <QList>
#include <QString>
#include <optional>

namespace ember::store {

using Id = qint64;

enum class Role { System, User, Assistant };

// complete: finished normally. streaming: being written now (only while the app runs).
// interrupted: the app died while streaming; the text is the last checkpoint.
// stopped: the user pressed Stop. error: generation failed (the text holds what arrived).
enum class MessageStatus { Complete, Streaming, Interrupted, Stopped, Error };

QString roleName(Role role);
QString statusName(MessageStatus status);
std::optional<Role> roleFromString(const QString& text);
std::optional<MessageStatus> statusFromString(const QString& text);

struct Conversation {
  Id id = 0;
  QString title;
  QDateTime createdAt;
  QDateTime updatedAt;
  QString modelPath;     // the model last used in it; empty when none yet
  Id activeLeafId = 0;   // the end of the branch the view shows; 0 when empty
  bool pinned = false;   // listed before the others
  QDateTime deletedAt;   // valid while it is in the trash (deleted, Undo still possible)
};

struct Message {
  Id id = 0;
  Id conversationId = 0;
  Id parentId = 0;  // 0 for a root message
  Role role = Role::User;
  QString content;
  QDateTime createdAt;
  MessageStatus status = MessageStatus::Complete;
  QString model;         // assistant messages: the model that wrote it
  QString finishReason;  // assistant messages: "stop", "length", "user", "error", ...
  QString reasoning;     // assistant messages: the model's thinking, apart from the answer
  double reasoningMs = 0;  // how long it thought
};

// Where a message sits among the messages that share its parent (for `< 2/3 >`).
struct SiblingInfo {
  QList<Id> ids;  // oldest first; includes the message itself
  int index = 0;  // 0-based position of the message in ids
  int count() const { return static_cast<int>(ids.size()); }
};

// Everything measured for one assistant answer. Times in milliseconds.
struct MessageStats {
  double queueWaitMs = 0;
  double tokenizeMs = 0;
  double prefillMs = 0;
  double prefillTokensPerSecond = 0;
  double ttftMs = 0;
  double itlP50Ms = 0;
  double itlP95Ms = 0;
  double itlMaxMs = 0;
  double decodeTokensPerSecond = 0;
  double totalMs = 0;
  qint64 promptTokens = 0;
  qint64 cachedTokens = 0;
  qint64 generatedTokens = 0;
  QString finishReason;
  QJsonObject sampling;  // temperature, top_p, ... as used
  quint64 seed = 0;      // stored as the same 64 bits in a signed column
  QString model;
  QString backend;
  QList<double> tokenTimesMs;  // arrival time of each token since the request was submitted
};

struct SearchHit {
  Id conversationId = 0;
  Id messageId = 0;
  QString conversationTitle;
  QString snippet;  // matched text wrapped in the markers given to search()
};

// What open() found and did; the app tells the user about anything unusual.
// What ChatStore::open is doing (its progress callback): checking the file, copying an older
// database before updating it, updating it one schema step at a time.
enum class OpenStage { Checking, BackingUp, Migrating };

struct OpenReport {
  bool createdNew = false;          // no database existed (or the corrupt one was set aside)
  bool recoveredFromCorruption = false;
  QString corruptBackupPath;        // where the damaged file was moved
  QString corruptionDetail;         // what SQLite said about it
  int migratedFromVersion = -1;     // -1 when no migration ran; 0 for a new database
  int interruptedMessages = 0;      // answers left streaming by a crash, now interrupted
  QString migrationBackupPath;      // the copy of the old version taken before migrating
  bool readOnly = false;            // opened read-only: writes fail with StoreError::ReadOnly
  long writerPid = 0;               // when another process is the writer: its id (0 unknown)
  QString readOnlyReason;           // why, in words for the user (empty when writable)
};

}  // namespace ember::store
